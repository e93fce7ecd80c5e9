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
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// nodeServer is the CSI Node service. Staging bind-mounts the volume's
// backing directory onto the staging path; publishing bind-mounts the staging
// path onto the target path.
type nodeServer struct {
	csi.UnimplementedNodeServer
	d *driver
}

// NodeGetInfo reports the node ID, without topology.
func (s nodeServer) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{NodeId: s.d.opts.NodeID}, nil
}

// NodeGetCapabilities reports STAGE_UNSTAGE_VOLUME.
func (nodeServer) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	return &csi.NodeGetCapabilitiesResponse{Capabilities: []*csi.NodeServiceCapability{{
		Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{
			Type: csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME,
		}},
	}}}, nil
}

// NodeStageVolume creates the volume's backing directory under the state
// directory and bind-mounts it onto the staging path. It is idempotent.
func (s nodeServer) NodeStageVolume(_ context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	id, staging := req.GetVolumeId(), req.GetStagingTargetPath()
	if err := required("volume_id", id, "staging_target_path", staging); err != nil {
		return nil, err
	}
	if err := checkCapability(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	// Named by the ID's SHA-256, a safe and distinct name for any ID.
	backing := filepath.Join(s.d.opts.StateDir, fmt.Sprintf("%x", sha256.Sum256([]byte(id))))
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	// Like an emptyDir: writable by any pod, whatever the umask.
	err := os.MkdirAll(backing, 0o777)
	if err == nil {
		err = os.Chmod(backing, 0o777)
	}
	if err == nil {
		err = bindMount(backing, staging, false)
	}
	if err != nil {
		return nil, status.Errorf(codes.Internal, "stage volume %s: %v", id, err)
	}
	return &csi.NodeStageVolumeResponse{}, nil
}

// NodeUnstageVolume unmounts the staging path if it is mounted.
func (s nodeServer) NodeUnstageVolume(_ context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	id, staging := req.GetVolumeId(), req.GetStagingTargetPath()
	if err := required("volume_id", id, "staging_target_path", staging); err != nil {
		return nil, err
	}
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if err := unmountAll(staging); err != nil {
		return nil, status.Errorf(codes.Internal, "unstage volume %s: %v", id, err)
	}
	return &csi.NodeUnstageVolumeResponse{}, nil
}

// NodePublishVolume bind-mounts the staging path onto the target path,
// read-only if asked. It is idempotent.
func (s nodeServer) NodePublishVolume(_ context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	id, staging, target := req.GetVolumeId(), req.GetStagingTargetPath(), req.GetTargetPath()
	if err := required("volume_id", id, "staging_target_path", staging, "target_path", target); err != nil {
		return nil, err
	}
	if err := checkCapability(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	if staged, err := isMountPoint(staging); err != nil {
		return nil, status.Errorf(codes.Internal, "publish volume %s: %v", id, err)
	} else if !staged {
		return nil, status.Errorf(codes.FailedPrecondition, "publish volume %s: %s is not staged", id, staging)
	}
	if err := bindMount(staging, target, req.GetReadonly()); err != nil {
		return nil, status.Errorf(codes.Internal, "publish volume %s: %v", id, err)
	}
	return &csi.NodePublishVolumeResponse{}, nil
}

// NodeUnpublishVolume unmounts the target path if it is mounted and removes
// it; a missing target path is success.
func (s nodeServer) NodeUnpublishVolume(_ context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	id, target := req.GetVolumeId(), req.GetTargetPath()
	if err := required("volume_id", id, "target_path", target); err != nil {
		return nil, err
	}
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
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

// bindMount creates dst and bind-mounts src onto it, then remounts it
// read-only if readonly. It does nothing if dst is already a mount point.
func bindMount(src, dst string, readonly bool) error {
	if err := os.MkdirAll(dst, 0o750); err != nil {
		return fmt.Errorf("create mount point: %w", err)
	}
	if mounted, err := isMountPoint(dst); err != nil || mounted {
		return err
	}
	if err := syscall.Mount(src, dst, "", syscall.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mount %s on %s: %w", src, dst, err)
	}
	if !readonly {
		return nil
	}
	// A bind remount must keep the mount's locked flags (nosuid, nodev, ...),
	// or it fails inside a user namespace; statfs's ST_* flags equal MS_*.
	var st syscall.Statfs_t
	err := syscall.Statfs(dst, &st)
	if err == nil {
		keep := uintptr(st.Flags) & (syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC |
			syscall.MS_NOATIME | syscall.MS_NODIRATIME | syscall.MS_RELATIME)
		err = syscall.Mount(src, dst, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY|keep, "")
	}
	if err != nil {
		return errors.Join(fmt.Errorf("remount %s read-only: %w", dst, err), unmountAll(dst))
	}
	return nil
}

// unmountAll unmounts p until it is no longer a mount point.
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

// isMountPoint reports whether p (symlinks resolved) is the root of a
// mount. A missing p is not. Device numbers would not do: a bind mount of a
// directory on the same filesystem keeps them.
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
