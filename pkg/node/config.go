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

package node

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// The pod network: a bridge with host-local addresses and nothing else.
const (
	// CNIBridge is the pod network's bridge interface.
	CNIBridge    = "evmcni0"
	podSubnet    = "10.88.77.0/24"
	cniPluginDir = "/usr/lib/cni"
)

var cniPlugins = []string{"bridge", "host-local", "loopback"}

// writeConfigs writes containerd's, crictl's and the kubelet's
// configuration. They follow the local node recipe: everything under the
// work directory, no iptables chains, cgroupfs on cgroup v1, and no API
// server (anonymous, AlwaysAllow on 127.0.0.1).
func (n *Node) writeConfigs() error {
	w := n.work
	q := strconv.Quote
	containerd := fmt.Sprintf(`version = 3
root = %s
state = %s
[grpc]
  address = %s
[ttrpc]
  address = %s
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = %s
[plugins.'io.containerd.cri.v1.runtime']
  enable_selinux = false
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = %s
        SystemdCgroup = false
        Root = %s
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = [%s]
    conf_dir = %s
[plugins.'io.containerd.nri.v1.nri']
  disable = true
`, q(filepath.Join(w, "containerd", "root")), q(filepath.Join(w, "containerd", "state")),
		q(n.Socket()), q(n.Socket()+".ttrpc"), q(Images["pause.tar"]),
		q(filepath.Join(n.bin, "runc")), q(filepath.Join(w, "runc-root")),
		q(filepath.Join(w, "cni", "bin")), q(filepath.Join(w, "cni", "net.d")))

	kubelet := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: %s
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
makeIPTablesUtilChains: false
containerRuntimeEndpoint: unix://%s
imageServiceEndpoint: unix://%s
podLogsDir: %s
volumePluginDir: %s
address: 127.0.0.1
port: %d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %d
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
resolvConf: /etc/resolv.conf
enableDebuggingHandlers: true
featureGates:
  EventedVolumeManager: %t
  EventedPLEG: %t
`, q(filepath.Join(w, "kubelet", "manifests")), n.Socket(), n.Socket(),
		q(filepath.Join(w, "kubelet", "podlogs")), q(filepath.Join(w, "kubelet", "volume-plugins")),
		kubeletPort, healthzPort, n.opts.Gate, n.opts.EventedPLEG)

	if n.opts.PodNetwork {
		for _, p := range cniPlugins {
			if err := os.Symlink(filepath.Join(cniPluginDir, p), filepath.Join(w, "cni", "bin", p)); err != nil {
				return err
			}
		}
		conflist := fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "evm",
  "plugins": [{
    "type": "bridge",
    "bridge": %s,
    "isGateway": false,
    "ipMasq": false,
    "ipam": {"type": "host-local", "dataDir": %s, "ranges": [[{"subnet": %s}]]}
  }]
}
`, q(CNIBridge), q(filepath.Join(w, "cni", "ipam")), q(podSubnet))
		if err := os.WriteFile(filepath.Join(w, "cni", "net.d", "10-evm.conflist"), []byte(conflist), 0o644); err != nil {
			return err
		}
	}

	crictl := fmt.Sprintf("runtime-endpoint: unix://%s\nimage-endpoint: unix://%s\ntimeout: 10\n", n.Socket(), n.Socket())

	for path, content := range map[string]string{
		filepath.Join(w, "containerd", "config.toml"): containerd,
		filepath.Join(w, "kubelet", "config.yaml"):    kubelet,
		filepath.Join(w, "crictl.yaml"):               crictl,
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}
