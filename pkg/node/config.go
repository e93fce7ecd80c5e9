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
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// The pod network: a bridge with host-local addresses that is the pods'
// gateway, so that the host reaches them (probes, lifecycle hooks); no
// masquerading and no iptables rules. The bridge plugin turns on
// net.ipv4.ip_forward, which the node restores (Sysctls).
const (
	// CNIBridge is the pod network's bridge interface.
	CNIBridge    = "evmcni0"
	podSubnet    = "10.88.77.0/24"
	cniPluginDir = "/usr/lib/cni"
)

var cniPlugins = []string{"bridge", "host-local", "loopback"}

// writeConfigs writes the container runtime's, crictl's and the kubelet's
// configuration. They follow the local node recipe: everything under the
// work directory, no iptables chains, cgroupfs on cgroup v1, and no API
// server (anonymous, AlwaysAllow on 127.0.0.1).
func (n *Node) writeConfigs() error {
	w := n.work
	q := strconv.Quote
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
    "isGateway": true,
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

	files := n.runtime.configs(n)
	files[n.KubeletConfig()] = n.kubeletConfig()
	files[filepath.Join(w, "crictl.yaml")] = crictl
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// kubeletConfig is the kubelet's configuration file: BaseKubeletConfig,
// and the node's static pods, API access, maxPods and feature gates.
func (n *Node) kubeletConfig() string {
	return n.BaseKubeletConfig() + fmt.Sprintf(`staticPodPath: %s
address: 127.0.0.1
port: %d
readOnlyPort: 0
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
enableDebuggingHandlers: true
maxPods: %d
%s`, strconv.Quote(filepath.Join(n.work, "kubelet", "manifests")), kubeletPort, n.maxPods(), featureGates(n.opts))
}

// BaseKubeletConfig is what every kubelet on the node is configured with:
// its runtime, cgroups, directories and health check. The node e2e suite's
// kubelet starts from it (--kubelet-config-file) and sets the rest itself.
func (n *Node) BaseKubeletConfig() string {
	w := n.work
	q := strconv.Quote
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
makeIPTablesUtilChains: false
containerRuntimeEndpoint: unix://%s
imageServiceEndpoint: unix://%s
podLogsDir: %s
volumePluginDir: %s
healthzBindAddress: 127.0.0.1
healthzPort: %d
resolvConf: /etc/resolv.conf
`, n.Socket(), n.Socket(), q(filepath.Join(w, "kubelet", "podlogs")), q(filepath.Join(w, "kubelet", "volume-plugins")), healthzPort)
}

// KubeletConfig is the path of the kubelet's configuration file.
func (n *Node) KubeletConfig() string { return filepath.Join(n.work, "kubelet", "config.yaml") }

// SetKubelet sets the kubelet binary StartKubelet runs, as an operator
// swaps the binary on a node: empty means the series' (Options.Kubelet's
// default), and stock says it is upstream's (Options.StockKubelet), whose
// configuration leaves the series' gates out, so they go off. The kubelet
// must be stopped.
func (n *Node) SetKubelet(binary string, stock bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.kubelet.Running() {
		return errors.New("the kubelet is running: stop it before swapping its binary")
	}
	if binary != "" {
		if _, err := os.Stat(binary); err != nil {
			return fmt.Errorf("the kubelet %s is missing: %w", binary, err)
		}
	}
	n.opts.Kubelet, n.opts.StockKubelet = binary, stock
	if stock {
		n.opts.Gate, n.opts.Gates = false, nil
	}
	return os.WriteFile(n.KubeletConfig(), []byte(n.kubeletConfig()), 0o644)
}

// SetGate sets the EventedVolumeManager gate in the kubelet's configuration
// file, as an operator would before restarting the kubelet: the kubelet
// must be stopped, and StartKubelet starts it with the new value.
func (n *Node) SetGate(gate bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.kubelet.Running() {
		return errors.New("the kubelet is running: stop it before changing its gate")
	}
	if n.opts.StockKubelet && gate {
		return errors.New("upstream's kubelet has no EventedVolumeManager gate to turn on")
	}
	n.opts.Gate = gate
	return os.WriteFile(n.KubeletConfig(), []byte(n.kubeletConfig()), 0o644)
}

// The series' feature gates besides EventedVolumeManager, each in its own
// PR, for Options.Gates.
const (
	// RelistOnPodTermination has a pod worker relist its pod before a
	// termination step's wait.
	RelistOnPodTermination = "RelistOnPodTermination"
	// VolumesInUseNodeStatusUpdate runs the node status sync early when the
	// volumes in use change; it acts only with an API server (a cluster
	// node).
	VolumesInUseNodeStatusUpdate = "VolumesInUseNodeStatusUpdate"
)

// checkGates says why o's feature gates cannot go into the kubelet's
// configuration: upstream's kubelet (StockKubelet) knows none of the
// series' gates, and Gates must leave the gates of their own options alone.
func checkGates(o Options) error {
	if o.StockKubelet && o.Gate {
		return errors.New("upstream's kubelet has no EventedVolumeManager gate to turn on")
	}
	if o.StockKubelet && len(o.Gates) > 0 {
		return fmt.Errorf("upstream's kubelet knows none of the series' gates: it takes no Gates (%v)", o.Gates)
	}
	for _, name := range []string{"EventedVolumeManager", "EventedPLEG"} {
		if _, ok := o.Gates[name]; ok {
			return fmt.Errorf("Options.Gates names %s, which an option of its own sets", name)
		}
	}
	return nil
}

// featureGates is the kubelet configuration's featureGates block:
// EventedVolumeManager, the further Gates sorted by name, then EventedPLEG.
// Upstream's kubelet (StockKubelet) does not know the series' gates and
// refuses to start with them, so its block has EventedPLEG alone.
func featureGates(o Options) string {
	gates := "featureGates:\n"
	if !o.StockKubelet {
		gates += fmt.Sprintf("  EventedVolumeManager: %t\n", o.Gate)
		for _, name := range slices.Sorted(maps.Keys(o.Gates)) {
			gates += fmt.Sprintf("  %s: %t\n", name, o.Gates[name])
		}
	}
	return gates + fmt.Sprintf("  EventedPLEG: %t\n", o.EventedPLEG)
}

// DefaultMaxPods is the kubelet's default maxPods.
const DefaultMaxPods = 110

// PodsStartTimeout is how long that many idle pods may take to run: 10
// minutes, or a second a pod above 600. On two cores stock's kubelet took
// 438 to 537 s to run 1,000 pods, depending on the machine's other load.
func PodsStartTimeout(pods int) time.Duration {
	return max(10*time.Minute, time.Duration(pods)*time.Second)
}

// maxPods is the kubelet's maxPods: Options.MaxPods, or DefaultMaxPods.
func (n *Node) maxPods() int {
	if n.opts.MaxPods > 0 {
		return n.opts.MaxPods
	}
	return DefaultMaxPods
}
