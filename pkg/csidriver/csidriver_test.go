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
	"crypto/sha256"
	"encoding/hex"
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
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// testDriver is a driver served on real unix sockets, with clients.
type testDriver struct {
	dir     string
	d       *driver
	regPath string
	done    chan error
	cancel  context.CancelFunc
	ident   csi.IdentityClient
	ctrl    csi.ControllerClient
	node    csi.NodeClient
}

// shortTempDir is a temp dir short enough for unix socket paths.
func shortTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "csi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove temp dir: %v", err)
		}
	})
	return dir
}

func testOptions(dir string, t *testing.T) Options {
	return Options{
		Name:            "test.csi.k8s.io",
		NodeID:          "node-1",
		Endpoint:        filepath.Join(dir, "plugins", "csi.sock"),
		RegistrationDir: filepath.Join(dir, "registry"),
		StateDir:        filepath.Join(dir, "state"),
		Logf:            t.Logf,
	}
}

// startDriver serves a driver in a short temp dir until the test ends.
func startDriver(t *testing.T) *testDriver {
	t.Helper()
	dir := shortTempDir(t)
	d, err := newDriver(testOptions(dir, t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	td := &testDriver{dir: dir, d: d, cancel: cancel, done: make(chan error, 1),
		regPath: filepath.Join(d.opts.RegistrationDir, d.opts.Name+"-reg.sock")}
	go func() { td.done <- d.serve(ctx) }()
	t.Cleanup(func() { td.stop(t) })
	waitForFile(t, td.regPath)
	conn := dial(t, d.opts.Endpoint)
	td.ident, td.ctrl, td.node = csi.NewIdentityClient(conn), csi.NewControllerClient(conn), csi.NewNodeClient(conn)
	return td
}

// stop ends Serve and checks that it returned nil.
func (td *testDriver) stop(t *testing.T) {
	t.Helper()
	td.cancel()
	select {
	case err, ok := <-td.done:
		if ok && err != nil {
			t.Errorf("Serve: %v", err)
		}
		if ok {
			close(td.done)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return within 10s of ctx ending")
	}
}

func waitForFile(t *testing.T, p string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(p); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear", p)
}

func dial(t *testing.T, socket string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial %s: %v", socket, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

var mountCap = &csi.VolumeCapability{
	AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
	AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
}

var blockCap = &csi.VolumeCapability{
	AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
	AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
}

func TestIdentity(t *testing.T) {
	td := startDriver(t)
	info, err := td.ident.GetPluginInfo(ctx(t), &csi.GetPluginInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetName() != "test.csi.k8s.io" || info.GetVendorVersion() != "v0.1.0" {
		t.Errorf("GetPluginInfo = %v", info)
	}
	caps, err := td.ident.GetPluginCapabilities(ctx(t), &csi.GetPluginCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if c := caps.GetCapabilities(); len(c) != 1 || c[0].GetService().GetType() != csi.PluginCapability_Service_CONTROLLER_SERVICE {
		t.Errorf("GetPluginCapabilities = %v", caps)
	}
	probe, err := td.ident.Probe(ctx(t), &csi.ProbeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if !probe.GetReady().GetValue() {
		t.Errorf("Probe = %v, want ready", probe)
	}
}

func TestNodeInfo(t *testing.T) {
	td := startDriver(t)
	info, err := td.node.NodeGetInfo(ctx(t), &csi.NodeGetInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetNodeId() != "node-1" || info.GetAccessibleTopology() != nil {
		t.Errorf("NodeGetInfo = %v", info)
	}
	caps, err := td.node.NodeGetCapabilities(ctx(t), &csi.NodeGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if c := caps.GetCapabilities(); len(c) != 1 || c[0].GetRpc().GetType() != csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME {
		t.Errorf("NodeGetCapabilities = %v", caps)
	}
}

func TestControllerPublishUnpublish(t *testing.T) {
	td := startDriver(t)
	caps, err := td.ctrl.ControllerGetCapabilities(ctx(t), &csi.ControllerGetCapabilitiesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if c := caps.GetCapabilities(); len(c) != 1 || c[0].GetRpc().GetType() != csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME {
		t.Errorf("ControllerGetCapabilities = %v", caps)
	}
	// Each step runs in order; want is the volume's nodes afterwards.
	for _, step := range []struct {
		name, op, volume, node string
		want                   []string
	}{
		{"publish", "publish", "pv-1", "node-1", []string{"node-1"}},
		{"publish again", "publish", "pv-1", "node-1", []string{"node-1"}},
		{"publish to a second node", "publish", "pv-1", "node-2", []string{"node-1", "node-2"}},
		{"unpublish", "unpublish", "pv-1", "node-1", []string{"node-2"}},
		{"unpublish again", "unpublish", "pv-1", "node-1", []string{"node-2"}},
		{"unpublish from all nodes", "unpublish", "pv-1", "", nil},
		{"unpublish unknown volume", "unpublish", "pv-unknown", "node-1", nil},
	} {
		t.Run(step.name, func(t *testing.T) {
			if step.op == "publish" {
				resp, err := td.ctrl.ControllerPublishVolume(ctx(t), &csi.ControllerPublishVolumeRequest{
					VolumeId: step.volume, NodeId: step.node, VolumeCapability: mountCap})
				if err != nil {
					t.Fatal(err)
				}
				if got := resp.GetPublishContext(); len(got) != 1 || got["node"] != step.node {
					t.Errorf("publish context = %v, want node=%s", got, step.node)
				}
			} else if _, err := td.ctrl.ControllerUnpublishVolume(ctx(t), &csi.ControllerUnpublishVolumeRequest{
				VolumeId: step.volume, NodeId: step.node}); err != nil {
				t.Fatal(err)
			}
			td.d.mu.Lock()
			nodes := td.d.published[step.volume]
			td.d.mu.Unlock()
			if len(nodes) != len(step.want) {
				t.Errorf("published to %v, want %v", nodes, step.want)
			}
			for _, n := range step.want {
				if !nodes[n] {
					t.Errorf("published to %v, want %v", nodes, step.want)
				}
			}
		})
	}
}

func TestValidateVolumeCapabilities(t *testing.T) {
	td := startDriver(t)
	for _, tc := range []struct {
		name    string
		caps    []*csi.VolumeCapability
		confirm bool
	}{
		{"mount", []*csi.VolumeCapability{mountCap}, true},
		{"block", []*csi.VolumeCapability{mountCap, blockCap}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := td.ctrl.ValidateVolumeCapabilities(ctx(t), &csi.ValidateVolumeCapabilitiesRequest{
				VolumeId: "pv-1", VolumeCapabilities: tc.caps})
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.GetConfirmed() != nil; got != tc.confirm {
				t.Errorf("confirmed = %t, want %t (message %q)", got, tc.confirm, resp.GetMessage())
			}
		})
	}
}

func TestRejectedCalls(t *testing.T) {
	td := startDriver(t)
	const staging, target = "/nonexistent/staging", "/nonexistent/target"
	for _, tc := range []struct {
		name string
		call func(context.Context) error
		want codes.Code
	}{
		{"publish without volume id", func(c context.Context) error {
			_, err := td.ctrl.ControllerPublishVolume(c, &csi.ControllerPublishVolumeRequest{NodeId: "n", VolumeCapability: mountCap})
			return err
		}, codes.InvalidArgument},
		{"publish without node id", func(c context.Context) error {
			_, err := td.ctrl.ControllerPublishVolume(c, &csi.ControllerPublishVolumeRequest{VolumeId: "v", VolumeCapability: mountCap})
			return err
		}, codes.InvalidArgument},
		{"publish without capability", func(c context.Context) error {
			_, err := td.ctrl.ControllerPublishVolume(c, &csi.ControllerPublishVolumeRequest{VolumeId: "v", NodeId: "n"})
			return err
		}, codes.InvalidArgument},
		{"publish block", func(c context.Context) error {
			_, err := td.ctrl.ControllerPublishVolume(c, &csi.ControllerPublishVolumeRequest{VolumeId: "v", NodeId: "n", VolumeCapability: blockCap})
			return err
		}, codes.InvalidArgument},
		{"controller unpublish without volume id", func(c context.Context) error {
			_, err := td.ctrl.ControllerUnpublishVolume(c, &csi.ControllerUnpublishVolumeRequest{NodeId: "n"})
			return err
		}, codes.InvalidArgument},
		{"validate without capabilities", func(c context.Context) error {
			_, err := td.ctrl.ValidateVolumeCapabilities(c, &csi.ValidateVolumeCapabilitiesRequest{VolumeId: "v"})
			return err
		}, codes.InvalidArgument},
		{"stage without volume id", func(c context.Context) error {
			_, err := td.node.NodeStageVolume(c, &csi.NodeStageVolumeRequest{StagingTargetPath: staging, VolumeCapability: mountCap})
			return err
		}, codes.InvalidArgument},
		{"stage without staging path", func(c context.Context) error {
			_, err := td.node.NodeStageVolume(c, &csi.NodeStageVolumeRequest{VolumeId: "v", VolumeCapability: mountCap})
			return err
		}, codes.InvalidArgument},
		{"stage without capability", func(c context.Context) error {
			_, err := td.node.NodeStageVolume(c, &csi.NodeStageVolumeRequest{VolumeId: "v", StagingTargetPath: staging})
			return err
		}, codes.InvalidArgument},
		{"node publish without target", func(c context.Context) error {
			_, err := td.node.NodePublishVolume(c, &csi.NodePublishVolumeRequest{VolumeId: "v", StagingTargetPath: staging, VolumeCapability: mountCap})
			return err
		}, codes.InvalidArgument},
		{"node publish without staging path", func(c context.Context) error {
			_, err := td.node.NodePublishVolume(c, &csi.NodePublishVolumeRequest{VolumeId: "v", TargetPath: target, VolumeCapability: mountCap})
			return err
		}, codes.InvalidArgument},
		{"node unpublish without target", func(c context.Context) error {
			_, err := td.node.NodeUnpublishVolume(c, &csi.NodeUnpublishVolumeRequest{VolumeId: "v"})
			return err
		}, codes.InvalidArgument},
		{"unstage without volume id", func(c context.Context) error {
			_, err := td.node.NodeUnstageVolume(c, &csi.NodeUnstageVolumeRequest{StagingTargetPath: staging})
			return err
		}, codes.InvalidArgument},
		{"create volume", func(c context.Context) error {
			_, err := td.ctrl.CreateVolume(c, &csi.CreateVolumeRequest{Name: "v"})
			return err
		}, codes.Unimplemented},
		{"delete volume", func(c context.Context) error {
			_, err := td.ctrl.DeleteVolume(c, &csi.DeleteVolumeRequest{VolumeId: "v"})
			return err
		}, codes.Unimplemented},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := status.Code(tc.call(ctx(t))); got != tc.want {
				t.Errorf("code = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRegistration(t *testing.T) {
	td := startDriver(t)
	reg := registerapi.NewRegistrationClient(dial(t, td.regPath))
	info, err := reg.GetInfo(ctx(t), &registerapi.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetType() != "CSIPlugin" || info.GetName() != "test.csi.k8s.io" || info.GetEndpoint() != td.d.opts.Endpoint ||
		strings.Join(info.GetSupportedVersions(), ",") != "1.0.0" {
		t.Errorf("GetInfo = %v", info)
	}
	for _, st := range []*registerapi.RegistrationStatus{{PluginRegistered: true}, {Error: "test failure"}} {
		if _, err := reg.NotifyRegistrationStatus(ctx(t), st); err != nil {
			t.Errorf("NotifyRegistrationStatus(%v): %v", st, err)
		}
	}
}

func TestServeShutdown(t *testing.T) {
	td := startDriver(t)
	td.stop(t)
	for _, p := range []string{td.d.opts.Endpoint, td.regPath} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket %s after shutdown: %v, want it removed", p, err)
		}
	}
}

func TestServeStaleSocket(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stale   func(t *testing.T, p string)
		wantErr bool
	}{
		{"stale socket", func(t *testing.T, p string) {
			lis, err := net.Listen("unix", p)
			if err != nil {
				t.Fatal(err)
			}
			lis.(*net.UnixListener).SetUnlinkOnClose(false)
			lis.Close()
		}, false},
		{"regular file", func(t *testing.T, p string) {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := testOptions(shortTempDir(t), t)
			if err := os.MkdirAll(filepath.Dir(o.Endpoint), 0o755); err != nil {
				t.Fatal(err)
			}
			tc.stale(t, o.Endpoint)
			c, cancel := context.WithCancel(context.Background())
			if !tc.wantErr {
				cancel() // Serve listens, then stops at once.
			}
			defer cancel()
			if err := Serve(c, o); (err != nil) != tc.wantErr {
				t.Errorf("Serve = %v, want error %t", err, tc.wantErr)
			}
		})
	}
}

func TestVolumeDirName(t *testing.T) {
	long := strings.Repeat("x", 201)
	sum := sha256.Sum256([]byte(long))
	for _, tc := range []struct{ id, want string }{
		{"pv-1", "pv-1"},
		{"a.b", "a.b"},
		{"a/b", "a_2fb"},
		{"a_2fb", "a_5f2fb"},
		{"..", "_2e."},
		{"../x", "_2e._2fx"},
		{"vol 1", "vol_201"},
		{strings.Repeat("x", 200), strings.Repeat("x", 200)},
		{long, "_h" + hex.EncodeToString(sum[:])},
	} {
		if got := volumeDirName(tc.id); got != tc.want {
			t.Errorf("volumeDirName(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}

func TestMountinfoEscaper(t *testing.T) {
	for in, want := range map[string]string{
		"/var/lib/kubelet": "/var/lib/kubelet",
		"/a b":             `/a\040b`,
		"/a\\b\tc\nd":      `/a\134b\011c\012d`,
	} {
		if got := mountinfoEscaper.Replace(in); got != want {
			t.Errorf("escape %q = %q, want %q", in, got, want)
		}
	}
}

// mountsUnder lists the mount points under dir, as mountinfo escapes them.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var mounts []string
	for line := range strings.SplitSeq(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], mountinfoEscaper.Replace(dir)+"/") {
			mounts = append(mounts, f[4])
		}
	}
	return mounts
}

func TestNodeMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("bind mounts need root")
	}
	td := startDriver(t)
	dir, err := filepath.EvalSymlinks(td.dir)
	if err != nil {
		t.Fatal(err)
	}
	const vol = "pv/1"
	staging := filepath.Join(dir, "kubelet", "staging dir", "pv1") // mountinfo escapes the space
	target := filepath.Join(dir, "kubelet", "pods", "p1", "mount")
	roTarget := filepath.Join(dir, "kubelet", "pods", "p2", "mount")
	backing := filepath.Join(td.d.opts.StateDir, "pv_2f1")
	// Registered after startDriver, so it runs first: no mount outlives the
	// test, even if it fails half way.
	t.Cleanup(func() {
		for _, p := range []string{target, roTarget, staging} {
			for i := 0; i < 8; i++ {
				if m, err := isMountPoint(p); err != nil || !m {
					break
				}
				if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil {
					t.Errorf("cleanup: unmount %s: %v", p, err)
				}
			}
		}
		if mounts := mountsUnder(t, dir); len(mounts) != 0 {
			t.Errorf("cleanup: mounts left behind: %v", mounts)
		}
	})
	stage := &csi.NodeStageVolumeRequest{VolumeId: vol, StagingTargetPath: staging, VolumeCapability: mountCap}
	publish := func(target string, ro bool) *csi.NodePublishVolumeRequest {
		return &csi.NodePublishVolumeRequest{VolumeId: vol, StagingTargetPath: staging, TargetPath: target,
			VolumeCapability: mountCap, Readonly: ro, PublishContext: map[string]string{"node": "node-1"}}
	}
	mounted := func(p string, want bool) {
		t.Helper()
		if got, err := isMountPoint(p); err != nil || got != want {
			t.Fatalf("isMountPoint(%s) = %t, %v; want %t", p, got, err, want)
		}
	}

	if _, err := td.node.NodePublishVolume(ctx(t), publish(target, false)); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("NodePublishVolume before staging: %v, want FailedPrecondition", err)
	}
	for range 2 {
		if _, err := td.node.NodeStageVolume(ctx(t), stage); err != nil {
			t.Fatalf("NodeStageVolume: %v", err)
		}
		mounted(staging, true)
	}
	if fi, err := os.Stat(backing); err != nil || fi.Mode().Perm() != 0o777 {
		t.Fatalf("backing dir %s: %v, %v; want mode 0777", backing, fi, err)
	}
	for range 2 {
		for _, p := range []*csi.NodePublishVolumeRequest{publish(target, false), publish(roTarget, true)} {
			if _, err := td.node.NodePublishVolume(ctx(t), p); err != nil {
				t.Fatalf("NodePublishVolume(%s): %v", p.TargetPath, err)
			}
			mounted(p.TargetPath, true)
		}
	}
	if got := len(mountsUnder(t, dir)); got != 3 {
		t.Errorf("%d mounts under %s after staging and publishing twice, want 3: %v", got, dir, mountsUnder(t, dir))
	}

	if err := os.WriteFile(filepath.Join(target, "data"), []byte("hello"), 0o644); err != nil {
		t.Fatalf("write through target: %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(backing, "data")); err != nil || string(got) != "hello" {
		t.Errorf("backing dir has %q, %v; want hello", got, err)
	}
	if got, err := os.ReadFile(filepath.Join(roTarget, "data")); err != nil || string(got) != "hello" {
		t.Errorf("read-only target has %q, %v; want hello", got, err)
	}
	if err := os.WriteFile(filepath.Join(roTarget, "other"), nil, 0o644); !errors.Is(err, syscall.EROFS) {
		t.Errorf("write through read-only target: %v, want EROFS", err)
	}

	for range 2 {
		for _, p := range []string{target, roTarget} {
			if _, err := td.node.NodeUnpublishVolume(ctx(t), &csi.NodeUnpublishVolumeRequest{VolumeId: vol, TargetPath: p}); err != nil {
				t.Fatalf("NodeUnpublishVolume(%s): %v", p, err)
			}
			if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("target %s after unpublish: %v, want it removed", p, err)
			}
		}
	}
	for range 2 {
		if _, err := td.node.NodeUnstageVolume(ctx(t), &csi.NodeUnstageVolumeRequest{VolumeId: vol, StagingTargetPath: staging}); err != nil {
			t.Fatalf("NodeUnstageVolume: %v", err)
		}
		mounted(staging, false)
	}
	if mounts := mountsUnder(t, dir); len(mounts) != 0 {
		t.Errorf("mounts left behind: %v", mounts)
	}
	if got, err := os.ReadFile(filepath.Join(backing, "data")); err != nil || string(got) != "hello" {
		t.Errorf("backing dir after unstage has %q, %v; want hello", got, err)
	}
}
