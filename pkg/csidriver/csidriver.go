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

// Package csidriver is a minimal, real CSI driver for tests on a real node:
// a kubelet registers it through its plugin watcher, and it backs each static
// volume with a directory under a state directory, bind-mounted onto the
// staging and target paths the kubelet asks for.
package csidriver

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// DefaultName is the driver name used when Options.Name is empty.
const DefaultName = "evm.csi.k8s.io"

// vendorVersion is what GetPluginInfo reports.
const vendorVersion = "v0.1.0"

// Options configures Serve.
type Options struct {
	// Name is the CSI driver name; DefaultName if empty.
	Name string
	// NodeID is what NodeGetInfo reports as the node's ID.
	NodeID string
	// Endpoint is the unix socket path of the CSI services.
	Endpoint string
	// RegistrationDir is the kubelet's <root-dir>/plugins_registry; the
	// registration socket <Name>-reg.sock is created in it.
	RegistrationDir string
	// StateDir holds the per-volume backing directories.
	StateDir string
	// Logf logs one line; log.Printf if nil.
	Logf func(string, ...any)
}

// driver is the state shared by the CSI and registration services.
type driver struct {
	opts Options
	// mu serializes mount operations.
	mu sync.Mutex
}

// Serve serves CSI Identity, Controller and Node on o.Endpoint and the kubelet
// plugin registration service on <o.RegistrationDir>/<o.Name>-reg.sock until
// ctx ends, then stops both servers gracefully and removes the sockets.
func Serve(ctx context.Context, o Options) error {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.Logf == nil {
		o.Logf = log.Printf
	}
	for _, f := range []struct{ name, value string }{
		{"node ID", o.NodeID}, {"endpoint", o.Endpoint}, {"registration dir", o.RegistrationDir}, {"state dir", o.StateDir},
	} {
		if f.value == "" {
			return fmt.Errorf("csi driver %s: %s is required", o.Name, f.name)
		}
	}
	var err error
	if o.Endpoint, err = filepath.Abs(o.Endpoint); err != nil {
		return fmt.Errorf("csi driver %s: endpoint: %w", o.Name, err)
	}
	if o.StateDir, err = filepath.Abs(o.StateDir); err != nil {
		return fmt.Errorf("csi driver %s: state dir: %w", o.Name, err)
	}
	if err := os.MkdirAll(o.StateDir, 0o755); err != nil {
		return fmt.Errorf("csi driver %s: create state dir: %w", o.Name, err)
	}
	d := &driver{opts: o}
	csiSrv := grpc.NewServer(grpc.UnaryInterceptor(d.logCall))
	csi.RegisterIdentityServer(csiSrv, identityServer{d: d})
	csi.RegisterControllerServer(csiSrv, controllerServer{})
	csi.RegisterNodeServer(csiSrv, nodeServer{d: d})
	regSrv := grpc.NewServer()
	registerapi.RegisterRegistrationServer(regSrv, registrationServer{d: d})

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
	// Stopping closed the listeners, which removed the sockets.
	failed := errors.Join(<-errc, <-errc)
	o.Logf("csi driver %s stopped", o.Name)
	if failed != nil {
		return fmt.Errorf("csi driver %s: %w", o.Name, failed)
	}
	return nil
}

// listenUnix listens on the unix socket p, creating its parent directory and
// removing a stale socket first. It refuses to remove anything but a socket.
func listenUnix(p string) (net.Listener, error) {
	// sun_path holds 108 bytes including the terminating NUL.
	if len(p) > 107 {
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

// logCall logs every CSI call: method, volume ID, duration and error.
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

// required is an InvalidArgument error naming the first empty field of the
// name, value pairs, or nil.
func required(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return status.Errorf(codes.InvalidArgument, "%s is required", pairs[i])
		}
	}
	return nil
}

// checkCapability accepts only mount (filesystem) volume capabilities.
func checkCapability(c *csi.VolumeCapability) error {
	if c == nil {
		return status.Error(codes.InvalidArgument, "volume_capability is required")
	}
	if c.GetMount() == nil {
		return status.Error(codes.InvalidArgument, "only mount access type is supported")
	}
	return nil
}

// identityServer is the CSI Identity service.
type identityServer struct {
	csi.UnimplementedIdentityServer
	d *driver
}

// GetPluginInfo reports the driver's name and version.
func (s identityServer) GetPluginInfo(context.Context, *csi.GetPluginInfoRequest) (*csi.GetPluginInfoResponse, error) {
	return &csi.GetPluginInfoResponse{Name: s.d.opts.Name, VendorVersion: vendorVersion}, nil
}

// GetPluginCapabilities reports the controller service.
func (identityServer) GetPluginCapabilities(context.Context, *csi.GetPluginCapabilitiesRequest) (*csi.GetPluginCapabilitiesResponse, error) {
	return &csi.GetPluginCapabilitiesResponse{Capabilities: []*csi.PluginCapability{{
		Type: &csi.PluginCapability_Service_{Service: &csi.PluginCapability_Service{
			Type: csi.PluginCapability_Service_CONTROLLER_SERVICE,
		}},
	}}}, nil
}

// Probe reports the driver ready.
func (identityServer) Probe(context.Context, *csi.ProbeRequest) (*csi.ProbeResponse, error) {
	return &csi.ProbeResponse{Ready: wrapperspb.Bool(true)}, nil
}

// registrationServer is the kubelet plugin registration service.
type registrationServer struct {
	registerapi.UnimplementedRegistrationServer
	d *driver
}

// GetInfo describes the driver to the kubelet's plugin watcher.
func (s registrationServer) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{
		Type:              registerapi.CSIPlugin,
		Name:              s.d.opts.Name,
		Endpoint:          s.d.opts.Endpoint,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

// NotifyRegistrationStatus logs whether the kubelet registered the driver.
func (s registrationServer) NotifyRegistrationStatus(_ context.Context, st *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	if st.GetPluginRegistered() {
		s.d.opts.Logf("csi driver %s registered with the kubelet", s.d.opts.Name)
	} else {
		s.d.opts.Logf("csi driver %s not registered with the kubelet: %s", s.d.opts.Name, st.GetError())
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}
