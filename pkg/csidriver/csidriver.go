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

// Package csidriver is a minimal, real CSI driver for tests on a real node,
// whose volumes are bind-mounted directories.
package csidriver

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net"
	"os"
	"path"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// DefaultName is the driver's name unless told otherwise.
const DefaultName = "evm.csi.k8s.io"

const vendorVersion = "v0.1.0"

// Options configures Serve. All but Logf are required.
type Options struct {
	Name            string               // the CSI driver name, such as DefaultName
	NodeID          string               // what NodeGetInfo reports
	Endpoint        string               // the unix socket path of the CSI services
	RegistrationDir string               // the kubelet's <root-dir>/plugins_registry
	StateDir        string               // holds the per-volume backing directories
	Logf            func(string, ...any) // logs one line; log.Printf if nil
}

// driver serves the CSI services, for static volumes (publishing is a no-op
// the attacher waits for), and the kubelet's plugin registration.
type driver struct {
	csi.UnimplementedIdentityServer
	csi.UnimplementedControllerServer
	csi.UnimplementedNodeServer
	registerapi.UnimplementedRegistrationServer
	opts Options
	mu   sync.Mutex // serializes mount operations
}

// Serve serves the CSI services on o.Endpoint and the plugin registration
// service in o.RegistrationDir until ctx ends, then removes the sockets.
func Serve(ctx context.Context, o Options) error {
	if o.Logf == nil {
		o.Logf = log.Printf
	}
	if err := required("name", o.Name, "node ID", o.NodeID, "endpoint", o.Endpoint,
		"registration dir", o.RegistrationDir, "state dir", o.StateDir); err != nil {
		return fmt.Errorf("csi driver %s: %s", o.Name, status.Convert(err).Message())
	}
	var err error
	for _, p := range []*string{&o.Endpoint, &o.StateDir} {
		if *p, err = filepath.Abs(*p); err != nil {
			return fmt.Errorf("csi driver %s: %w", o.Name, err)
		}
	}
	if err := os.MkdirAll(o.StateDir, 0o755); err != nil {
		return fmt.Errorf("csi driver %s: create state dir: %w", o.Name, err)
	}
	d := &driver{opts: o}
	csiSrv := grpc.NewServer(grpc.UnaryInterceptor(d.logCall))
	csi.RegisterIdentityServer(csiSrv, d)
	csi.RegisterControllerServer(csiSrv, d)
	csi.RegisterNodeServer(csiSrv, d)
	regSrv := grpc.NewServer()
	registerapi.RegisterRegistrationServer(regSrv, d)
	// The CSI socket listens before the registration socket appears, so the
	// kubelet never finds a registered driver it cannot reach.
	regPath := filepath.Join(o.RegistrationDir, o.Name+"-reg.sock")
	csiLis, err := listenUnix(o.Endpoint)
	if err != nil {
		return fmt.Errorf("csi driver %s: %w", o.Name, err)
	}
	regLis, err := listenUnix(regPath)
	if err != nil {
		csiLis.Close()
		return fmt.Errorf("csi driver %s: %w", o.Name, err)
	}
	// Either server failing stops both.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 2)
	serve := func(what string, s *grpc.Server, lis net.Listener) {
		// Serve is nil once s was stopped, even if that was before it started.
		if err := s.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			errc <- fmt.Errorf("serve %s on %s: %w", what, lis.Addr(), err)
		} else {
			errc <- nil
		}
		cancel()
	}
	go serve("CSI", csiSrv, csiLis)
	go serve("registration", regSrv, regLis)
	o.Logf("csi driver %s on node %s: CSI on %s, registration on %s", o.Name, o.NodeID, o.Endpoint, regPath)
	<-ctx.Done()
	regSrv.GracefulStop()
	csiSrv.GracefulStop()
	failed := errors.Join(<-errc, <-errc)
	o.Logf("csi driver %s stopped", o.Name)
	if failed != nil {
		return fmt.Errorf("csi driver %s: %w", o.Name, failed)
	}
	return nil
}

// listenUnix listens on the unix socket p, replacing a stale socket.
func listenUnix(p string) (net.Listener, error) {
	if len(p) > 107 { // sun_path holds 108 bytes with the NUL
		return nil, fmt.Errorf("socket path %s is %d bytes, longer than the 107 a unix socket allows", p, len(p))
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return nil, fmt.Errorf("create socket dir: %w", err)
	}
	if fi, err := os.Lstat(p); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", p)
		}
		if err := os.Remove(p); err != nil {
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	}
	lis, err := net.Listen("unix", p)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", p, err)
	}
	return lis, nil
}

func (d *driver) logCall(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := h(ctx, req)
	vol := ""
	if r, ok := req.(interface{ GetVolumeId() string }); ok {
		vol = r.GetVolumeId()
	}
	d.opts.Logf("csi %s volume=%q took=%v err=%v", path.Base(info.FullMethod), vol, time.Since(start).Round(time.Microsecond), err)
	return resp, err
}

// required is an error naming the first empty field of the name, value pairs.
func required(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return status.Errorf(codes.InvalidArgument, "%s is required", pairs[i])
		}
	}
	return nil
}

func checkCapability(c *csi.VolumeCapability) error {
	if c == nil {
		return status.Error(codes.InvalidArgument, "volume_capability is required")
	}
	if c.GetMount() == nil {
		return status.Error(codes.InvalidArgument, "only mount access type is supported")
	}
	return nil
}

// GetPluginInfo reports the driver's name and version.
func (d *driver) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: d.opts.Name, VendorVersion: vendorVersion}, nil
}

// GetPluginCapabilities reports the controller service.
func (*driver) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	return &csi.GetPluginCapabilitiesResponse{Capabilities: []*csi.PluginCapability{{
		Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{
			Type: csi.PluginCapability_Service_CONTROLLER_SERVICE,
		}},
	}}}, nil
}

// Probe reports the driver ready.
func (*driver) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{Ready: wrapperspb.Bool(true)}, nil
}

// GetInfo describes the driver to the kubelet's plugin watcher.
func (d *driver) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{
		Type:              registerapi.CSIPlugin,
		Name:              d.opts.Name,
		Endpoint:          d.opts.Endpoint,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

// NotifyRegistrationStatus logs whether the kubelet registered the driver.
func (d *driver) NotifyRegistrationStatus(_ context.Context, st *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	if st.GetPluginRegistered() {
		d.opts.Logf("csi driver %s registered with the kubelet", d.opts.Name)
	} else {
		d.opts.Logf("csi driver %s not registered with the kubelet: %s", d.opts.Name, st.GetError())
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}

// ControllerGetCapabilities reports PUBLISH_UNPUBLISH_VOLUME.
func (*driver) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: []*csi.ControllerServiceCapability{{
		Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{
			Type: csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME,
		}},
	}}}, nil
}

// ControllerPublishVolume returns the publish context {"node": node_id}.
func (*driver) ControllerPublishVolume(_ context.Context, req *csi.ControllerPublishVolumeRequest) (*csi.ControllerPublishVolumeResponse, error) {
	if err := cmp.Or(required("volume_id", req.GetVolumeId(), "node_id", req.GetNodeId()), checkCapability(req.GetVolumeCapability())); err != nil {
		return nil, err
	}
	return &csi.ControllerPublishVolumeResponse{PublishContext: map[string]string{"node": req.GetNodeId()}}, nil
}

// ControllerUnpublishVolume succeeds for any volume and node.
func (*driver) ControllerUnpublishVolume(_ context.Context, req *csi.ControllerUnpublishVolumeRequest) (*csi.ControllerUnpublishVolumeResponse, error) {
	if err := required("volume_id", req.GetVolumeId()); err != nil {
		return nil, err
	}
	return &csi.ControllerUnpublishVolumeResponse{}, nil
}

// NodeGetInfo reports the node ID, without topology.
func (d *driver) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: d.opts.NodeID}, nil
}

// NodeGetCapabilities reports STAGE_UNSTAGE_VOLUME.
func (*driver) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{Capabilities: []*csi.NodeServiceCapability{{
		Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{
			Type: csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME,
		}},
	}}}, nil
}

// NodeStageVolume bind-mounts the volume's backing directory onto the staging path.
func (d *driver) NodeStageVolume(_ context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	id, staging := req.GetVolumeId(), req.GetStagingTargetPath()
	if err := cmp.Or(required("volume_id", id, "staging_target_path", staging), checkCapability(req.GetVolumeCapability())); err != nil {
		return nil, err
	}
	backing := filepath.Join(d.opts.StateDir, fmt.Sprintf("%x", sha256.Sum256([]byte(id))))
	d.mu.Lock()
	defer d.mu.Unlock()
	// Like an emptyDir: writable by any pod, whatever the umask.
	err := os.MkdirAll(backing, 0o777)
	if err == nil {
		err = os.Chmod(backing, 0o777)
	}
	if err == nil {
		err = bindMount(backing, staging)
	}
	if err != nil {
		return nil, status.Errorf(codes.Internal, "stage volume %s: %v", id, err)
	}
	return &csi.NodeStageVolumeResponse{}, nil
}

// NodeUnstageVolume unmounts the staging path if it is mounted.
func (d *driver) NodeUnstageVolume(_ context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	id, staging := req.GetVolumeId(), req.GetStagingTargetPath()
	if err := required("volume_id", id, "staging_target_path", staging); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := unmountAll(staging); err != nil {
		return nil, status.Errorf(codes.Internal, "unstage volume %s: %v", id, err)
	}
	return &csi.NodeUnstageVolumeResponse{}, nil
}

// NodePublishVolume bind-mounts the staging path onto the target path, read-write.
func (d *driver) NodePublishVolume(_ context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	id, staging, target := req.GetVolumeId(), req.GetStagingTargetPath(), req.GetTargetPath()
	if err := cmp.Or(required("volume_id", id, "staging_target_path", staging, "target_path", target), checkCapability(req.GetVolumeCapability())); err != nil {
		return nil, err
	}
	if req.GetReadonly() {
		return nil, status.Error(codes.InvalidArgument, "read-only volumes are not supported")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if staged, err := isMountPoint(staging); err != nil {
		return nil, status.Errorf(codes.Internal, "publish volume %s: %v", id, err)
	} else if !staged {
		return nil, status.Errorf(codes.FailedPrecondition, "publish volume %s: %s is not staged", id, staging)
	}
	if err := bindMount(staging, target); err != nil {
		return nil, status.Errorf(codes.Internal, "publish volume %s: %v", id, err)
	}
	return &csi.NodePublishVolumeResponse{}, nil
}

// NodeUnpublishVolume unmounts and removes the target path.
func (d *driver) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	id, target := req.GetVolumeId(), req.GetTargetPath()
	if err := required("volume_id", id, "target_path", target); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	err := unmountAll(target)
	if err == nil {
		if err = os.Remove(target); errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
	}
	if err != nil {
		return nil, status.Errorf(codes.Internal, "unpublish volume %s: %v", id, err)
	}
	return &csi.NodeUnpublishVolumeResponse{}, nil
}

// bindMount creates dst and bind-mounts src onto it, unless it is mounted.
func bindMount(src, dst string) error {
	if err := os.MkdirAll(dst, 0o750); err != nil {
		return fmt.Errorf("create mount point: %w", err)
	}
	if mounted, err := isMountPoint(dst); err != nil || mounted {
		return err
	}
	if err := syscall.Mount(src, dst, "", syscall.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mount %s on %s: %w", src, dst, err)
	}
	return nil
}

func unmountAll(p string) error {
	for range 8 {
		mounted, err := isMountPoint(p)
		if err != nil || !mounted {
			return err
		}
		if err := syscall.Unmount(p, 0); err != nil {
			return fmt.Errorf("unmount %s: %w", p, err)
		}
	}
	return fmt.Errorf("%s is still a mount point after 8 unmounts", p)
}

// isMountPoint reports whether p exists and is the root of a mount. Device
// numbers would not do: a bind mount on the same filesystem keeps them.
func isMountPoint(p string) (bool, error) {
	var st unix.Statx_t
	err := unix.Statx(unix.AT_FDCWD, p, 0, 0, &st)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("statx %s: %w", p, err)
	}
	if st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT == 0 {
		return false, errors.New("the kernel does not report mount roots (statx, Linux 5.8)")
	}
	return st.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0, nil
}
