/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package csidriver

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"
	"k8s.io/apimachinery/pkg/util/wait"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// testOptions are options in a temp dir short enough for unix socket paths.
func testOptions(t *testing.T) Options {
	dir, err := os.MkdirTemp("", "csi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return Options{Name: "test.csi.k8s.io", NodeID: "node-1", Endpoint: filepath.Join(dir, "plugins", "csi.sock"),
		RegistrationDir: filepath.Join(dir, "registry"), StateDir: filepath.Join(dir, "state"), Logf: t.Logf}
}

// startDriver serves a driver until the test ends, then checks Serve's end.
func startDriver(t *testing.T) (o Options, csiConn, regConn *grpc.ClientConn) {
	o = testOptions(t)
	serving, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(serving, o) }()
	regPath := filepath.Join(o.RegistrationDir, o.Name+"-reg.sock")
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return within 10s of ctx ending")
		}
		for _, p := range []string{o.Endpoint, regPath} {
			if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("socket %s after shutdown: %v, want it removed", p, err)
			}
		}
	})
	// The registration socket appears after the CSI socket.
	if err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		_, err := os.Stat(regPath)
		return err == nil, nil
	}); err != nil {
		t.Fatalf("%s did not appear: %v", regPath, err)
	}
	dial := func(socket string) *grpc.ClientConn {
		conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	return o, dial(o.Endpoint), dial(regPath)
}

var mountCap = &csi.VolumeCapability{
	AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
	AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
}

// TestServices checks the driver's answers; TestAttacher its publish context.
func TestServices(t *testing.T) {
	o, conn, regConn := startDriver(t)
	ident, ctrl, node := csi.NewIdentityClient(conn), csi.NewControllerClient(conn), csi.NewNodeClient(conn)
	reg := registerapi.NewRegistrationClient(regConn)
	if info, err := reg.GetInfo(t.Context(), &registerapi.InfoRequest{}); err != nil || info.GetType() != "CSIPlugin" ||
		info.GetName() != o.Name || info.GetEndpoint() != o.Endpoint || strings.Join(info.GetSupportedVersions(), ",") != "1.0.0" {
		t.Errorf("GetInfo = %v, %v", info, err)
	}
	for _, st := range []*registerapi.RegistrationStatus{{PluginRegistered: true}, {Error: "test failure"}} {
		if _, err := reg.NotifyRegistrationStatus(t.Context(), st); err != nil {
			t.Errorf("NotifyRegistrationStatus(%v): %v", st, err)
		}
	}
	if info, err := ident.GetPluginInfo(t.Context(), &csi.GetPluginInfoRequest{}); err != nil || info.GetName() != o.Name || info.GetVendorVersion() != vendorVersion {
		t.Errorf("GetPluginInfo = %v, %v", info, err)
	}
	if caps, err := ident.GetPluginCapabilities(t.Context(), &csi.GetPluginCapabilitiesRequest{}); err != nil || len(caps.GetCapabilities()) != 1 ||
		caps.GetCapabilities()[0].GetService().GetType() != csi.PluginCapability_Service_CONTROLLER_SERVICE {
		t.Errorf("GetPluginCapabilities = %v, %v", caps, err)
	}
	if probe, err := ident.Probe(t.Context(), &csi.ProbeRequest{}); err != nil || !probe.GetReady().GetValue() {
		t.Errorf("Probe = %v, %v; want ready", probe, err)
	}
	if caps, err := ctrl.ControllerGetCapabilities(t.Context(), &csi.ControllerGetCapabilitiesRequest{}); err != nil || len(caps.GetCapabilities()) != 1 ||
		caps.GetCapabilities()[0].GetRpc().GetType() != csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME {
		t.Errorf("ControllerGetCapabilities = %v, %v", caps, err)
	}
	if info, err := node.NodeGetInfo(t.Context(), &csi.NodeGetInfoRequest{}); err != nil || info.GetNodeId() != o.NodeID || info.GetAccessibleTopology() != nil {
		t.Errorf("NodeGetInfo = %v, %v", info, err)
	}
	if caps, err := node.NodeGetCapabilities(t.Context(), &csi.NodeGetCapabilitiesRequest{}); err != nil || len(caps.GetCapabilities()) != 1 ||
		caps.GetCapabilities()[0].GetRpc().GetType() != csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME {
		t.Errorf("NodeGetCapabilities = %v, %v", caps, err)
	}
	block := &csi.VolumeCapability{AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}}}
	for _, tc := range []struct {
		method string
		req    proto.Message
	}{
		{"Controller/ControllerPublishVolume", &csi.ControllerPublishVolumeRequest{NodeId: "n", VolumeCapability: mountCap}},
		{"Controller/ControllerPublishVolume", &csi.ControllerPublishVolumeRequest{VolumeId: "v", VolumeCapability: mountCap}},
		{"Controller/ControllerPublishVolume", &csi.ControllerPublishVolumeRequest{VolumeId: "v", NodeId: "n"}},
		{"Controller/ControllerPublishVolume", &csi.ControllerPublishVolumeRequest{VolumeId: "v", NodeId: "n", VolumeCapability: block}},
		{"Controller/ControllerUnpublishVolume", &csi.ControllerUnpublishVolumeRequest{NodeId: "n"}},
		{"Node/NodeStageVolume", &csi.NodeStageVolumeRequest{StagingTargetPath: "/s", VolumeCapability: mountCap}},
		{"Node/NodeStageVolume", &csi.NodeStageVolumeRequest{VolumeId: "v", VolumeCapability: mountCap}},
		{"Node/NodeStageVolume", &csi.NodeStageVolumeRequest{VolumeId: "v", StagingTargetPath: "/s"}},
		{"Node/NodeUnstageVolume", &csi.NodeUnstageVolumeRequest{StagingTargetPath: "/s"}},
		{"Node/NodePublishVolume", &csi.NodePublishVolumeRequest{VolumeId: "v", StagingTargetPath: "/s", VolumeCapability: mountCap}},
		{"Node/NodePublishVolume", &csi.NodePublishVolumeRequest{VolumeId: "v", TargetPath: "/t", VolumeCapability: mountCap}},
		{"Node/NodePublishVolume", &csi.NodePublishVolumeRequest{VolumeId: "v", StagingTargetPath: "/s", TargetPath: "/t", VolumeCapability: mountCap, Readonly: true}},
		{"Node/NodeUnpublishVolume", &csi.NodeUnpublishVolumeRequest{VolumeId: "v"}},
	} {
		if err := conn.Invoke(t.Context(), "/csi.v1."+tc.method, tc.req, &emptypb.Empty{}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s(%v) = %v, want InvalidArgument", tc.method, tc.req, err)
		}
	}
}

// TestStaleSocket checks that Serve replaces a stale socket, and nothing else.
func TestStaleSocket(t *testing.T) {
	for _, socket := range []bool{true, false} {
		o := testOptions(t)
		if err := os.MkdirAll(filepath.Dir(o.Endpoint), 0o755); err != nil {
			t.Fatal(err)
		}
		if socket {
			lis, err := net.Listen("unix", o.Endpoint)
			if err != nil {
				t.Fatal(err)
			}
			lis.(*net.UnixListener).SetUnlinkOnClose(false)
			lis.Close()
		} else if err := os.WriteFile(o.Endpoint, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		c, cancel := context.WithCancel(context.Background())
		if socket {
			cancel() // Serve listens, then stops at once.
		}
		if err := Serve(c, o); (err == nil) != socket {
			t.Errorf("a stale socket %t: Serve = %v", socket, err)
		}
		cancel()
	}
}

// TestNodeMounts stages, publishes, unpublishes and unstages a volume twice.
func TestNodeMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root")
	}
	o, conn, _ := startDriver(t)
	node := csi.NewNodeClient(conn)
	dir, err := filepath.EvalSymlinks(filepath.Dir(o.StateDir))
	if err != nil {
		t.Fatal(err)
	}
	const vol = "pv/1"
	staging := filepath.Join(dir, "kubelet", "staging", "pv1")
	target := filepath.Join(dir, "kubelet", "pods", "p1", "mount")
	// Registered after startDriver, so it runs first: no mount outlives the
	// test, even if it fails half way.
	t.Cleanup(func() {
		for _, p := range []string{target, staging} {
			for m, err := isMountPoint(p); err == nil && m; m, err = isMountPoint(p) {
				if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil {
					t.Errorf("cleanup: unmount %s: %v", p, err)
					break
				}
			}
		}
	})
	// mounts are the mount points under dir, stacked ones each.
	mounts := func() []string {
		data, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		var mounts []string
		for line := range strings.SplitSeq(string(data), "\n") {
			if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
				mounts = append(mounts, f[4])
			}
		}
		return mounts
	}
	mounted := func(p string, want bool) {
		t.Helper()
		if got, err := isMountPoint(p); err != nil || got != want {
			t.Fatalf("isMountPoint(%s) = %t, %v; want %t", p, got, err, want)
		}
	}
	stage := &csi.NodeStageVolumeRequest{VolumeId: vol, StagingTargetPath: staging, VolumeCapability: mountCap}
	publish := &csi.NodePublishVolumeRequest{VolumeId: vol, StagingTargetPath: staging, TargetPath: target,
		VolumeCapability: mountCap, PublishContext: map[string]string{"node": "node-1"}}
	if _, err := node.NodePublishVolume(t.Context(), publish); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("NodePublishVolume before staging: %v, want FailedPrecondition", err)
	}
	for range 2 {
		if _, err := node.NodeStageVolume(t.Context(), stage); err != nil {
			t.Fatalf("NodeStageVolume: %v", err)
		}
		mounted(staging, true)
	}
	backing, err := filepath.Glob(filepath.Join(o.StateDir, "*"))
	if err != nil || len(backing) != 1 {
		t.Fatalf("backing dirs %v, %v; want one", backing, err)
	}
	if fi, err := os.Stat(backing[0]); err != nil || fi.Mode().Perm() != 0o777 {
		t.Fatalf("backing dir %s: %v, %v; want mode 0777", backing[0], fi, err)
	}
	for range 2 {
		if _, err := node.NodePublishVolume(t.Context(), publish); err != nil {
			t.Fatalf("NodePublishVolume: %v", err)
		}
		mounted(target, true)
	}
	if got := mounts(); len(got) != 2 {
		t.Errorf("mounts after staging and publishing twice: %v, want 2", got)
	}
	if err := os.WriteFile(filepath.Join(target, "data"), []byte("hello"), 0o644); err != nil {
		t.Fatalf("write through target: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(backing[0], "data")); err != nil || string(got) != "hello" {
		t.Errorf("backing dir has %q, %v; want hello", got, err)
	}
	for range 2 {
		if _, err := node.NodeUnpublishVolume(t.Context(), &csi.NodeUnpublishVolumeRequest{VolumeId: vol, TargetPath: target}); err != nil {
			t.Fatalf("NodeUnpublishVolume: %v", err)
		}
		if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("target after unpublish: %v, want it removed", err)
		}
		if _, err := node.NodeUnstageVolume(t.Context(), &csi.NodeUnstageVolumeRequest{VolumeId: vol, StagingTargetPath: staging}); err != nil {
			t.Fatalf("NodeUnstageVolume: %v", err)
		}
		mounted(staging, false)
	}
	if got := mounts(); len(got) != 0 {
		t.Errorf("mounts left behind: %v", got)
	}
	if got, err := os.ReadFile(filepath.Join(backing[0], "data")); err != nil || string(got) != "hello" {
		t.Errorf("backing dir after unstage has %q, %v; want hello", got, err)
	}
}
