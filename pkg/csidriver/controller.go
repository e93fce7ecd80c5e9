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

	"github.com/container-storage-interface/spec/lib/go/csi"
)

// controllerServer is the CSI Controller service. Volumes are static PVs, so
// it only tracks which nodes a volume is published to; CreateVolume,
// DeleteVolume and the rest are Unimplemented.
type controllerServer struct {
	csi.UnimplementedControllerServer
	d *driver
}

// ControllerGetCapabilities reports PUBLISH_UNPUBLISH_VOLUME.
func (controllerServer) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: []*csi.ControllerServiceCapability{{
		Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{
			Type: csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME,
		}},
	}}}, nil
}

// ControllerPublishVolume records that the volume is published to the node
// and returns the publish context {"node": node_id}. It is idempotent.
func (s controllerServer) ControllerPublishVolume(_ context.Context, req *csi.ControllerPublishVolumeRequest) (*csi.ControllerPublishVolumeResponse, error) {
	if err := required("volume_id", req.GetVolumeId(), "node_id", req.GetNodeId()); err != nil {
		return nil, err
	}
	if err := checkCapability(req.GetVolumeCapability()); err != nil {
		return nil, err
	}
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	nodes := s.d.published[req.GetVolumeId()]
	if nodes == nil {
		nodes = map[string]bool{}
		s.d.published[req.GetVolumeId()] = nodes
	}
	nodes[req.GetNodeId()] = true
	return &csi.ControllerPublishVolumeResponse{PublishContext: map[string]string{"node": req.GetNodeId()}}, nil
}

// ControllerUnpublishVolume forgets that the volume is published to the node,
// or to every node if node_id is empty. Unknown volumes and nodes succeed.
func (s controllerServer) ControllerUnpublishVolume(_ context.Context, req *csi.ControllerUnpublishVolumeRequest) (*csi.ControllerUnpublishVolumeResponse, error) {
	if err := required("volume_id", req.GetVolumeId()); err != nil {
		return nil, err
	}
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	nodes := s.d.published[req.GetVolumeId()]
	if node := req.GetNodeId(); node != "" {
		delete(nodes, node)
	} else {
		nodes = nil
	}
	if len(nodes) == 0 {
		delete(s.d.published, req.GetVolumeId())
	}
	return &csi.ControllerUnpublishVolumeResponse{}, nil
}

// ValidateVolumeCapabilities confirms mount capabilities; any volume ID is a
// valid static volume.
func (controllerServer) ValidateVolumeCapabilities(_ context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	if err := required("volume_id", req.GetVolumeId()); err != nil {
		return nil, err
	}
	if len(req.GetVolumeCapabilities()) == 0 {
		return nil, required("volume_capabilities", "")
	}
	for _, c := range req.GetVolumeCapabilities() {
		if err := checkCapability(c); err != nil {
			return &csi.ValidateVolumeCapabilitiesResponse{Message: err.Error()}, nil
		}
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext:      req.GetVolumeContext(),
		VolumeCapabilities: req.GetVolumeCapabilities(),
		Parameters:         req.GetParameters(),
	}}, nil
}
