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
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
)

// kubeletClient talks to the kubelet's secure port, whose certificate is
// self-signed; kubeletURL serves /metrics, /pods and the debugging handlers.
var (
	kubeletClient = &http.Client{
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // a local, self-signed kubelet
	}
	kubeletURL = fmt.Sprintf("https://127.0.0.1:%d", kubeletPort)
)

// do sends a request and returns the body of a 200 answer.
func do(ctx context.Context, client *http.Client, method, url string, reqBody []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(reqBody))
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, bytes.TrimSpace(body))
	}
	return body, nil
}

func (n *Node) kubeletGet(ctx context.Context, path string) ([]byte, error) {
	return do(ctx, kubeletClient, http.MethodGet, kubeletURL+path, nil)
}

// SetVerbosity changes the running kubelet's --v through its PUT
// /debug/flags/v handler (enableDebugFlagsHandler, on by default), klog's and
// contextual logging's alike. A restarted kubelet starts with Options.Verbosity.
func (n *Node) SetVerbosity(ctx context.Context, level int) error {
	return setVerbosity(ctx, kubeletClient, kubeletURL, level)
}

func setVerbosity(ctx context.Context, client *http.Client, base string, level int) error {
	if level < 0 {
		return fmt.Errorf("verbosity %d is negative", level)
	}
	if _, err := do(ctx, client, http.MethodPut, base+"/debug/flags/v", []byte(strconv.Itoa(level))); err != nil {
		return fmt.Errorf("setting the kubelet's verbosity to %d: %w", level, err)
	}
	return nil
}

// Metrics are a scrape of the kubelet's /metrics.
type Metrics map[string]*dto.MetricFamily

// Metrics scrapes the kubelet's /metrics.
func (n *Node) Metrics(ctx context.Context) (Metrics, error) {
	body, err := n.kubeletGet(ctx, "/metrics")
	if err != nil {
		return nil, err
	}
	return ParseMetrics(body)
}

// ParseMetrics parses the Prometheus text format.
func ParseMetrics(text []byte) (Metrics, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	return Metrics(families), nil
}

// Has reports whether the scrape has the metric family.
func (m Metrics) Has(name string) bool {
	_, ok := m[name]
	return ok
}

// Sum adds up the values of a counter or gauge family's series (for a
// histogram, its observation counts) whose labels include every pair of
// labels (given as name, value, name, value...).
func (m Metrics) Sum(name string, labels ...string) float64 {
	var sum float64
	for _, s := range m[name].GetMetric() {
		if hasLabels(s, labels) {
			sum += value(s)
		}
	}
	return sum
}

// ByLabel returns a family's values, as Sum adds them, summed by one label's value.
func (m Metrics) ByLabel(name, label string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range m[name].GetMetric() {
		var key string
		for _, l := range s.GetLabel() {
			if l.GetName() == label {
				key = l.GetValue()
			}
		}
		out[key] += value(s)
	}
	return out
}

// value is a series' value; a histogram's is how many observations it has.
func value(s *dto.Metric) float64 {
	switch {
	case s.Counter != nil:
		return s.GetCounter().GetValue()
	case s.Gauge != nil:
		return s.GetGauge().GetValue()
	case s.Untyped != nil:
		return s.GetUntyped().GetValue()
	case s.Histogram != nil:
		return float64(s.GetHistogram().GetSampleCount())
	}
	return 0
}

func hasLabels(s *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		if !slices.ContainsFunc(s.GetLabel(), func(l *dto.LabelPair) bool {
			return l.GetName() == labels[i] && l.GetValue() == labels[i+1]
		}) {
			return false
		}
	}
	return true
}

// VolumeManagerPackage is the import path of the volume manager's code.
const VolumeManagerPackage = "k8s.io/kubernetes/pkg/kubelet/volumemanager"

// Profile takes a CPU profile of the kubelet over d.
func (n *Node) Profile(ctx context.Context, d time.Duration) (*profile.Profile, error) {
	body, err := n.kubeletGet(ctx, fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(d.Seconds())))
	if err != nil {
		return nil, err
	}
	return profile.ParseData(body)
}

// LiveHeap is the kubelet's live Go heap in bytes: go_memstats_heap_alloc_bytes
// right after a heap profile with gc=1 collected garbage, so that it does not
// depend on where the collector is in its cycle.
func (n *Node) LiveHeap(ctx context.Context) (float64, error) {
	if _, err := n.kubeletGet(ctx, "/debug/pprof/heap?gc=1"); err != nil {
		return 0, fmt.Errorf("collecting the kubelet's garbage: %w", err)
	}
	m, err := n.Metrics(ctx)
	if err != nil {
		return 0, err
	}
	return m.Sum("go_memstats_heap_alloc_bytes"), nil
}

// CPUShare is a profile's CPU time, the part of it ShareOf matched, and the
// matched leaf functions with the most CPU, most first.
type CPUShare struct {
	Total, Matched time.Duration
	Top            []FunctionCPU
}

// FunctionCPU is a function's CPU in a profile.
type FunctionCPU struct {
	Function string
	CPU      time.Duration
}

// Fraction is Matched/Total, or 0.
func (s CPUShare) Fraction() float64 {
	if s.Total == 0 {
		return 0
	}
	return float64(s.Matched) / float64(s.Total)
}

// ShareOf measures the CPU in p spent with a function of prefix on the
// stack: a sample counts once however many such frames it has.
func ShareOf(p *profile.Profile, prefix string) (CPUShare, error) {
	idx := slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool { return st.Type == "cpu" && st.Unit == "nanoseconds" })
	if idx < 0 {
		return CPUShare{}, fmt.Errorf("the profile has no cpu/nanoseconds samples")
	}
	var share CPUShare
	leaves := map[string]time.Duration{}
	for _, s := range p.Sample {
		v := time.Duration(s.Value[idx])
		share.Total += v
		var leaf string
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if leaf == "" && line.Function != nil && strings.HasPrefix(line.Function.Name, prefix) {
					leaf = line.Function.Name
				}
			}
		}
		if leaf != "" {
			share.Matched += v
			leaves[leaf] += v
		}
	}
	for f, v := range leaves {
		share.Top = append(share.Top, FunctionCPU{Function: f, CPU: v})
	}
	slices.SortFunc(share.Top, func(a, b FunctionCPU) int { return cmp.Compare(b.CPU, a.CPU) })
	if len(share.Top) > 5 {
		share.Top = share.Top[:5]
	}
	return share, nil
}

// PodManifest is a static pod's manifest with the benchmark's four volumes:
// an emptyDir the container writes to (/data), a hostPath of hostPathDir
// (/host), and downwardAPI volumes of its labels (/etc/podinfo) and
// annotations (/etc/podmeta). Its container "bb" runs busybox and exits at
// once on SIGTERM. Annotations change the pod's UID.
func PodManifest(name, hostPathDir string, annotations map[string]string) string {
	return podManifest(name, hostPathDir, annotations, "", "bb",
		"trap 'exit 0' TERM; echo written-by-container > /data/hello; sleep 3600 & wait")
}

// ExitContainer is the one container of an ExitingPodManifest pod.
const ExitContainer = "exit"

// ExitingPodManifest is a PodManifest pod with restartPolicy Never whose
// container, ExitContainer, writes to its emptyDir, sleeps for after and
// exits 0: the kubelet must notice, finish the pod and unmount its volumes.
func ExitingPodManifest(name, hostPathDir string, after time.Duration) string {
	return podManifest(name, hostPathDir, nil, "Never", ExitContainer,
		fmt.Sprintf("echo written-by-container > /data/hello; sleep %.3f", after.Seconds()))
}

// CrashLoopPodManifest is a PodManifest pod with restartPolicy Always whose
// one container, ExitContainer, sleeps for after and exits 1: the kubelet
// restarts it after its crash-loop back-off, again and again.
func CrashLoopPodManifest(name, hostPathDir string, after time.Duration) string {
	return podManifest(name, hostPathDir, nil, "Always", ExitContainer, fmt.Sprintf("sleep %.3f; exit 1", after.Seconds()))
}

// podManifest is PodManifest's manifest, with an optional restartPolicy.
func podManifest(name, hostPathDir string, annotations map[string]string, restartPolicy, container, command string) string {
	var ann strings.Builder
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		fmt.Fprintf(&ann, "\n    %q: %q", k, annotations[k])
	}
	if ann.Len() == 0 {
		ann.WriteString(" {}")
	}
	if restartPolicy != "" {
		restartPolicy = "\n  restartPolicy: " + restartPolicy
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %q
  namespace: default
  labels:
    app: evm
  annotations:%s
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 0%s
  containers:
  - name: %s
    image: %q
    imagePullPolicy: Never
    command: ["sh", "-c", %q]
    volumeMounts:
    - {name: scratch, mountPath: /data}
    - {name: host, mountPath: /host}
    - {name: labels, mountPath: /etc/podinfo}
    - {name: annotations, mountPath: /etc/podmeta}
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: host, hostPath: {path: %q, type: Directory}}
  - name: labels
    downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}
  - name: annotations
    downwardAPI: {items: [{path: annotations, fieldRef: {fieldPath: metadata.annotations}}]}
`, name, ann.String(), restartPolicy, container, BusyboxImage, command, hostPathDir)
}

// VolumesPerPod is how many volumes a PodManifest pod has.
const VolumesPerPod = 4

// AddPod writes a static pod manifest atomically: the kubelet never reads half of it.
func (n *Node) AddPod(name, manifest string) error {
	dir := filepath.Join(n.work, "kubelet", "manifests")
	tmp := filepath.Join(dir, "."+name+".yaml")
	if err := os.WriteFile(tmp, []byte(manifest), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name+".yaml"))
}

// RemovePod removes a static pod's manifest.
func (n *Node) RemovePod(name string) error {
	return os.Remove(filepath.Join(n.work, "kubelet", "manifests", name+".yaml"))
}

// PodName is the name the kubelet gives the static pod of a manifest name.
func (n *Node) PodName(name string) string { return name + "-" + n.opts.Name }

// Pod is a pod as the kubelet reports it.
type Pod struct{ Name, Namespace, UID, Phase string }

// Pods lists the kubelet's pods, from its /pods endpoint.
func (n *Node) Pods(ctx context.Context) ([]Pod, error) {
	body, err := n.kubeletGet(ctx, "/pods")
	if err != nil {
		return nil, err
	}
	var list corev1.PodList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("the kubelet's /pods: %w", err)
	}
	pods := make([]Pod, 0, len(list.Items))
	for _, p := range list.Items {
		pods = append(pods, Pod{Name: p.Name, Namespace: p.Namespace, UID: string(p.UID), Phase: string(p.Status.Phase)})
	}
	return pods, nil
}

// PodUID is the UID of the kubelet's pod named podName, or "".
func (n *Node) PodUID(ctx context.Context, podName string) (string, error) {
	pods, err := n.Pods(ctx)
	if err != nil {
		return "", err
	}
	for _, p := range pods {
		if p.Name == podName {
			return p.UID, nil
		}
	}
	return "", nil
}

// PodDir is the kubelet's directory of a pod.
func (n *Node) PodDir(uid string) string { return filepath.Join(n.KubeletRoot(), "pods", uid) }

// Crictl runs crictl against the node's containerd.
func (n *Node) Crictl(ctx context.Context, args ...string) (string, error) {
	return n.run(ctx, filepath.Join(n.bin, "crictl"), append([]string{"--config", filepath.Join(n.work, "crictl.yaml")}, args...)...)
}

// RunningContainer is the ID of the running container named container in podName, or "".
func (n *Node) RunningContainer(ctx context.Context, podName, container string) (string, error) {
	cs, err := n.RunningContainers(ctx, container)
	return cs[podName].ID, err
}

// Container is a running container as the runtime reports it.
type Container struct {
	ID, PodName string
	Attempt     uint32 // the container's restarts in its sandbox
}

// RunningContainers lists the running containers named container by their pods' names.
func (n *Node) RunningContainers(ctx context.Context, container string) (map[string]Container, error) {
	out, err := n.Crictl(ctx, "ps", "--state", "running", "--name", "^"+container+"$", "--output", "json")
	if err != nil {
		return nil, err
	}
	var list struct {
		Containers []struct {
			ID       string `json:"id"`
			Metadata struct {
				Attempt uint32 `json:"attempt"`
			} `json:"metadata"`
			Labels map[string]string `json:"labels"`
		} `json:"containers"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, fmt.Errorf("crictl ps: %w", err)
	}
	cs := map[string]Container{}
	for _, c := range list.Containers {
		pod := c.Labels["io.kubernetes.pod.name"]
		cs[pod] = Container{ID: c.ID, PodName: pod, Attempt: c.Metadata.Attempt}
	}
	return cs, nil
}

// Exec runs a command in a container and returns its output, trimmed.
func (n *Node) Exec(ctx context.Context, containerID string, cmd ...string) (string, error) {
	out, err := n.Crictl(ctx, append([]string{"exec", containerID}, cmd...)...)
	return strings.TrimSpace(out), err
}

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

// kubeletConfig is BaseKubeletConfig with the node's static pods, API access, maxPods and gates.
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

// SetKubelet sets the stopped kubelet's binary and gates for StartKubelet,
// as an operator swaps the binary or edits its configuration.
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
// upstream's EventedPLEG. VolumesInUseNodeStatusUpdate acts only with an API
// server (a cluster node).
const (
	EventedVolumeManager         = "EventedVolumeManager"
	RelistOnPodTermination       = "RelistOnPodTermination"
	VolumesInUseNodeStatusUpdate = "VolumesInUseNodeStatusUpdate"
	EventedPLEG                  = "EventedPLEG"
)

// Kubelet is a kubelet to run, upstream's (StockKubelet, which refuses the
// series' gates) or the series' (SeriesKubelet), with its binary and feature
// gates. The zero value is the series' kubelet with every gate off.
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
// KubeletBinary) with gates; a gate left out is off.
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

// kubeletOf is upstream's kubelet if stock says so, else the series'.
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

// kubeletJSON is a Kubelet in JSON, without its binary, a path on the machine that ran it.
type kubeletJSON struct {
	Stock bool            `json:"stock,omitempty"`
	Gates map[string]bool `json:"gates"`
}

// MarshalJSON writes which kubelet k is, and every gate in its configuration.
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
	err := json.Unmarshal(data, &j)
	if err == nil {
		*k, err = kubeletOf(j.Stock, "", j.Gates)
	}
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
