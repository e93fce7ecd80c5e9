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
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
	files := n.runtime.configs(n)
	files[n.KubeletConfig()] = n.kubeletConfig()
	files[filepath.Join(w, "crictl.yaml")] = fmt.Sprintf("runtime-endpoint: unix://%s\nimage-endpoint: unix://%s\ntimeout: 10\n", n.Socket(), n.Socket())
	if n.opts.PodNetwork {
		for _, p := range cniPlugins {
			if err := os.Symlink(filepath.Join(cniPluginDir, p), filepath.Join(w, "cni", "bin", p)); err != nil {
				return err
			}
		}
		files[filepath.Join(w, "cni", "net.d", "10-evm.conflist")] = fmt.Sprintf(`{
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
	}
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
%s`, strconv.Quote(filepath.Join(n.work, "kubelet", "manifests")), kubeletPort, n.opts.MaxPods, n.opts.Kubelet.featureGates())
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

// SetKubelet sets the kubelet StartKubelet runs, with its gates, as an
// operator swaps the binary or edits its configuration's feature gates: the
// kubelet must be stopped.
func (n *Node) SetKubelet(k Kubelet) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.procs[KubeletService].Running() {
		return errors.New("the kubelet is running: stop it before changing it")
	}
	if err := k.check(filepath.Dir(n.bin)); err != nil {
		return err
	}
	n.opts.Kubelet = k
	return os.WriteFile(n.KubeletConfig(), []byte(n.kubeletConfig()), 0o644)
}

// The feature gates the harness sets: the series', each in its own PR, and
// upstream's EventedPLEG.
const (
	EventedVolumeManager = "EventedVolumeManager"
	// RelistOnPodTermination has a pod worker relist its pod before a
	// termination step's wait.
	RelistOnPodTermination = "RelistOnPodTermination"
	// VolumesInUseNodeStatusUpdate runs the node status sync early when the
	// volumes in use change; it acts only with an API server (a cluster
	// node).
	VolumesInUseNodeStatusUpdate = "VolumesInUseNodeStatusUpdate"
	EventedPLEG                  = "EventedPLEG"
)

// Kubelet is a kubelet to run: upstream's (StockKubelet) or the series'
// (SeriesKubelet), its binary and its feature gates. Upstream's kubelet
// refuses a gate it does not know, so it has EventedPLEG alone. The zero
// value is the series' kubelet, KubeletBinary, with every gate off.
type Kubelet struct {
	stock  bool
	binary string
	gates  map[string]bool
}

// StockKubelet is upstream's kubelet, built without the series, at binary:
// empty means Out/bin/kubelet-stock (make kubelet-stock).
func StockKubelet(binary string, eventedPLEG bool) Kubelet {
	return Kubelet{stock: true, binary: binary, gates: map[string]bool{EventedPLEG: eventedPLEG}}
}

// SeriesKubelet is the series' kubelet at binary (empty means
// KubeletBinary) with gates, the series' and EventedPLEG; a gate left out
// is off.
func SeriesKubelet(binary string, gates map[string]bool) Kubelet {
	return Kubelet{binary: binary, gates: maps.Clone(gates)}
}

// ParseKubelet is the kubelet kind names, series or stock, at binary, with
// featureGates as the kubelet's --feature-gates takes them:
// EventedVolumeManager=true,RelistOnPodTermination=false.
func ParseKubelet(kind, binary, featureGates string) (Kubelet, error) {
	gates := map[string]bool{}
	for gate := range strings.SplitSeq(featureGates, ",") {
		if gate = strings.TrimSpace(gate); gate == "" {
			continue
		}
		name, value, _ := strings.Cut(gate, "=")
		on, err := strconv.ParseBool(value)
		if err != nil {
			return Kubelet{}, fmt.Errorf("feature gate %q: want Name=true or Name=false", gate)
		}
		gates[name] = on
	}
	if kind != "series" && kind != "stock" {
		return Kubelet{}, fmt.Errorf("kubelet %q: want series or stock", kind)
	}
	return kubeletOf(kind == "stock", binary, gates)
}

// kubeletOf is upstream's kubelet if stock says so, else the series', at
// binary with gates, of which upstream's takes EventedPLEG alone.
func kubeletOf(stock bool, binary string, gates map[string]bool) (Kubelet, error) {
	if !stock {
		return SeriesKubelet(binary, gates), nil
	}
	if names := slices.Sorted(maps.Keys(gates)); len(names) > 1 || len(names) == 1 && names[0] != EventedPLEG {
		return Kubelet{}, fmt.Errorf("upstream's kubelet knows none of the series' gates: it takes EventedPLEG alone, not %v", names)
	}
	return StockKubelet(binary, gates[EventedPLEG]), nil
}

// Stock reports whether k is upstream's kubelet.
func (k Kubelet) Stock() bool { return k.stock }

// Gate is the value of the feature gate name in k's configuration.
func (k Kubelet) Gate(name string) bool { return k.gates[name] }

// Binary is k's binary, given the build output out.
func (k Kubelet) Binary(out string) string {
	switch {
	case k.binary != "":
		return k.binary
	case k.stock:
		return filepath.Join(out, "bin", "kubelet-stock")
	}
	return KubeletBinary(out)
}

// check says why k cannot run, given the build output out.
func (k Kubelet) check(out string) error {
	if _, err := os.Stat(k.Binary(out)); err != nil {
		return fmt.Errorf("the kubelet %s is missing: %w", k.Binary(out), err)
	}
	return nil
}

// GateNames are the gates in k's configuration, in its order: upstream's has
// EventedPLEG alone; the series' EventedVolumeManager, its further gates
// sorted by name, then EventedPLEG.
func (k Kubelet) GateNames() []string {
	if k.stock {
		return []string{EventedPLEG}
	}
	further := slices.DeleteFunc(slices.Sorted(maps.Keys(k.gates)), func(name string) bool {
		return name == EventedVolumeManager || name == EventedPLEG
	})
	return append(append([]string{EventedVolumeManager}, further...), EventedPLEG)
}

// FeatureGates are k's gates as the kubelet's --feature-gates takes them.
func (k Kubelet) FeatureGates() string {
	var gates []string
	for _, name := range k.GateNames() {
		gates = append(gates, fmt.Sprintf("%s=%t", name, k.gates[name]))
	}
	return strings.Join(gates, ",")
}

// String is k for logs: which kubelet, and its gates.
func (k Kubelet) String() string {
	if k.stock {
		return "upstream's kubelet (" + k.FeatureGates() + ")"
	}
	return "the series' kubelet (" + k.FeatureGates() + ")"
}

// featureGates is the kubelet configuration's featureGates block.
func (k Kubelet) featureGates() string {
	block := "featureGates:\n"
	for _, name := range k.GateNames() {
		block += fmt.Sprintf("  %s: %t\n", name, k.gates[name])
	}
	return block
}

// kubeletJSON is a Kubelet in JSON, without its binary, a path on the
// machine that ran it.
type kubeletJSON struct {
	Stock bool            `json:"stock,omitempty"`
	Gates map[string]bool `json:"gates"`
}

// MarshalJSON writes which kubelet k is, and every gate in its
// configuration.
func (k Kubelet) MarshalJSON() ([]byte, error) {
	j := kubeletJSON{Stock: k.stock, Gates: map[string]bool{}}
	for _, name := range k.GateNames() {
		j.Gates[name] = k.gates[name]
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes, its binary the default.
func (k *Kubelet) UnmarshalJSON(data []byte) error {
	var j kubeletJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	var err error
	*k, err = kubeletOf(j.Stock, "", j.Gates)
	return err
}

// DefaultMaxPods is the kubelet's default maxPods.
const DefaultMaxPods = 110

// PodsStartTimeout is how long that many idle pods may take to run: 10
// minutes, or a second a pod above 600. On two cores stock's kubelet took
// 438 to 537 s to run 1,000 pods, depending on the machine's other load.
func PodsStartTimeout(pods int) time.Duration {
	return max(10*time.Minute, time.Duration(pods)*time.Second)
}
