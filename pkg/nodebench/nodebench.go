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

// Package nodebench is the real-node side-by-side benchmark (make node-bench
// and make node-bench-cluster): the same workload on a fresh node for each
// kubelet configuration (Config), round after round. Both kinds of node
// measure idle CPU, memory, the volume manager's share of a pprof profile and
// the loops' passes; a standalone node (static pods) then times single pods'
// mounts, unmounts and deletion phases, and exiting and crash-looping pods; a
// cluster node (a control plane, API pods, the project's CSI driver and
// attacher) times config map updates, single pods by kind, and counts the
// kubelet's API requests.
package nodebench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"evented-volume-manager/pkg/cluster"
	"evented-volume-manager/pkg/node"
)

// Options configure a benchmark run.
type Options struct {
	// Out is the project's build output, _output.
	Out string
	// Dir receives the per-configuration work directories.
	Dir string
	// Workload is what runs on the node, by the node's kind: Standalone
	// or Cluster.
	Workload Workload
	// Pods is how many pods run idle, each with its volumes.
	Pods int
	// StartTimeout is how long all pods may take to run; zero means
	// node.PodsStartTimeout(Pods).
	StartTimeout time.Duration
	// Settle is how long the node rests after the pods run, before measuring.
	Settle time.Duration
	// Window is one idle CPU measurement window; Windows is how many. The
	// kubelet's CPU profile spans them.
	Window  time.Duration
	Windows int
	// Runtime is the container runtime with its options.
	Runtime node.Runtime
	// Singles is how many single pods are added and deleted one at a time,
	// Gap apart: on a standalone node idle pods deleted, then new ones added;
	// on a cluster node, of each of ClusterPodKinds, added, then deleted.
	Singles int
	Gap     time.Duration
	// ExitPods is how many pods whose container exits on its own a
	// standalone node adds (measureExits), ExitPoll how often it reads
	// /proc/self/mountinfo meanwhile.
	ExitPods int
	ExitPoll time.Duration
	// CrashLoopPods is how many crash-looping pods a standalone node adds
	// last, CrashLoopWindow how long their cost is measured.
	CrashLoopPods   int
	CrashLoopWindow time.Duration
	// StockKubelet is the Stock configuration's binary; empty means
	// node.StockKubelet's default.
	StockKubelet string
	// ConfigMaps is how many of a cluster node's idle pods get their config
	// map updated at once in each of ConfigMapWaves waves; ConfigMapTimeout
	// bounds a wave's wait (the kubelet remounts at a pod's resync).
	ConfigMaps       int
	ConfigMapWaves   int
	ConfigMapTimeout time.Duration
	// Logf reports progress.
	Logf func(format string, args ...any)
}

// Config is a kubelet configuration the benchmark runs.
type Config string

// The configurations (their kubelets: Config.Kubelet).
const (
	// Stock is upstream's kubelet, built from the release's tag without the
	// series, which knows none of its gates.
	Stock Config = "stock"
	// GateOff is the series' kubelet with its gates off.
	GateOff Config = "gate off"
	// GateOn is the series' kubelet with EventedVolumeManager on alone.
	GateOn Config = "gate on"
	// AllGates is the series' kubelet with every gate of the series on.
	AllGates Config = "all gates"
	// NodeStatusGate is GateOn with VolumesInUseNodeStatusUpdate on too,
	// which acts only with an API server.
	NodeStatusGate Config = "node-status gate"
)

// Configs are every configuration, in the order the report shows them for
// results that do not say their run's (Result.Configs).
var Configs = []Config{Stock, GateOff, GateOn, AllGates, NodeStatusGate}

// DefaultConfigs are the configurations a run has unless it says which; a
// cluster node runs no stock kubelet.
func DefaultConfigs(cluster bool) []Config {
	if cluster {
		return []Config{GateOff, GateOn, NodeStatusGate, AllGates}
	}
	return []Config{Stock, GateOff, GateOn, AllGates}
}

// ParseConfigs reads a comma-separated list of configurations, each by its
// name ("gate off") or with hyphens for its spaces ("gate-off", which a
// shell's word splitting leaves whole).
func ParseConfigs(s string) ([]Config, error) {
	var cs []Config
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(Configs, func(c Config) bool { return name == string(c) || name == c.hyphenated() })
		switch {
		case i < 0:
			return nil, fmt.Errorf("no configuration %q: want some of %q", name, Configs)
		case slices.Contains(cs, Configs[i]):
			return nil, fmt.Errorf("configuration %q twice", name)
		}
		cs = append(cs, Configs[i])
	}
	return cs, nil
}

// Kubelet is c's kubelet: for Stock upstream's at stockBinary, which knows
// none of the series' gates; otherwise the series' with c's gates on.
func (c Config) Kubelet(stockBinary string) node.Kubelet {
	switch c {
	case Stock:
		return node.StockKubelet(stockBinary, false)
	case GateOn:
		return node.SeriesKubelet("", map[string]bool{node.EventedVolumeManager: true})
	case AllGates:
		return node.SeriesKubelet("", map[string]bool{node.EventedVolumeManager: true, node.RelistOnPodTermination: true, node.VolumesInUseNodeStatusUpdate: true})
	case NodeStatusGate:
		return node.SeriesKubelet("", map[string]bool{node.EventedVolumeManager: true, node.VolumesInUseNodeStatusUpdate: true})
	}
	return node.SeriesKubelet("", nil)
}

// WorkDir is c's work directory under Options.Dir. The names stay short:
// the CSI driver's registration socket lives under it, and a unix socket's
// path has at most 107 bytes.
func (c Config) WorkDir() string {
	switch c {
	case GateOff, GateOn:
		return fmt.Sprintf("work-gate-%t", c == GateOn)
	case AllGates:
		return "work-all"
	case NodeStatusGate:
		return "work-nsg"
	}
	return "work-" + c.hyphenated()
}

// hyphenated is c's name with hyphens for its spaces.
func (c Config) hyphenated() string { return strings.ReplaceAll(string(c), " ", "-") }

// RoundOrder is the order of a run's configurations in a round: odd rounds
// take the rotations of configs in turn, and each even round runs the round
// before it backwards. So each configuration goes first in one of the first
// len(configs) odd rounds, and over each pair of rounds every configuration
// (also with one left out of every order, as -stock=false does) stands in
// the middle on average: a drift of the node over a round weighs on all of
// them alike instead of always on the last.
func RoundOrder(round int, configs []Config) []Config {
	k := ((round - 1) / 2) % len(configs)
	order := append(slices.Clone(configs[k:]), configs[:k]...)
	if round%2 == 0 {
		slices.Reverse(order)
	}
	return order
}

// Mode is one configuration's measurements in one round; the fields of one
// kind of node only are empty on the other. Times are in seconds.
type Mode struct {
	// Config is the configuration and Kubelet its kubelet (UnmarshalJSON
	// reads older results); Runtime is node.Runtime.Label.
	Config         Config       `json:"config,omitempty"`
	Kubelet        node.Kubelet `json:"kubelet"`
	KubeletVersion string       `json:"kubeletVersion,omitempty"`
	Runtime        string       `json:"runtime"`
	Pods           int          `json:"pods"`
	Volumes        int          `json:"volumes"`
	// StartupSeconds is how long the pods took to run, all added at once.
	StartupSeconds float64 `json:"startupSeconds"`
	// KubeletCPU, RuntimeCPU and, on a cluster node, APIServerCPU and
	// ControllerManagerCPU are CPU-seconds per idle window of WindowSeconds.
	WindowSeconds        float64   `json:"windowSeconds"`
	KubeletCPU           []float64 `json:"kubeletCPU"`
	RuntimeCPU           []float64 `json:"runtimeCPU"`
	APIServerCPU         []float64 `json:"apiserverCPU,omitempty"`
	ControllerManagerCPU []float64 `json:"controllerManagerCPU,omitempty"`
	// KubeletRSSMiB is the kubelet's resident set and KubeletAnonMiB its
	// anonymous part, read every memorySampleEvery through the idle windows;
	// KubeletLiveHeapMiB is its live Go heap after a forced collection at
	// the end of each idle window.
	KubeletRSSMiB      []float64 `json:"kubeletRSSSamplesMiB,omitempty"`
	KubeletAnonMiB     []float64 `json:"kubeletAnonSamplesMiB,omitempty"`
	KubeletLiveHeapMiB []float64 `json:"kubeletLiveHeapMiB,omitempty"`
	// ProfileCPUSeconds is the kubelet CPU the profile sampled over
	// ProfileSeconds, VolumeManagerCPUSeconds its volume manager part.
	ProfileSeconds          float64            `json:"profileSeconds"`
	ProfileCPUSeconds       float64            `json:"profileCPUSeconds"`
	VolumeManagerCPUSeconds float64            `json:"volumeManagerCPUSeconds"`
	VolumeManagerTop        []node.FunctionCPU `json:"volumeManagerTop"`
	// Iterations counts the loops' iterations over the idle windows by
	// loop, Passes their passes keyed "loop/kind", Triggers the iterations
	// over the run by trigger; none with the gate off.
	Iterations map[string]float64 `json:"iterations,omitempty"`
	Passes     map[string]float64 `json:"passes,omitempty"`
	Triggers   map[string]float64 `json:"triggers,omitempty"`
	// GapSeconds is the time between single pods.
	GapSeconds float64 `json:"gapSeconds"`

	// Standalone node: BurstMount are the mount waits of the pods added at
	// once, Mount and Unmount those of the single pods, MountEndToEnd and
	// UnmountEndToEnd from their manifest written or removed to their
	// wait's end; ChurnVerbosity is the kubelet's --v meanwhile.
	BurstMount      []float64 `json:"burstMount,omitempty"`
	Mount           []float64 `json:"mount,omitempty"`
	Unmount         []float64 `json:"unmount,omitempty"`
	MountEndToEnd   []float64 `json:"mountEndToEnd,omitempty"`
	UnmountEndToEnd []float64 `json:"unmountEndToEnd,omitempty"`
	ChurnVerbosity  int       `json:"churnVerbosity,omitempty"`
	// DeletionPhases are, by kubeletlog.DeletionPhase Key, the seconds from
	// each single pod's manifest removed to the kubelet's line of the phase,
	// if its log has it.
	DeletionPhases map[string][]float64 `json:"deletionPhases,omitempty"`
	// TerminatedToTearDown and TerminatedToSyncTerminated time each single
	// pod's termination complete to its last TearDown and to
	// SyncTerminatedPod enter.
	TerminatedToTearDown       []float64 `json:"terminatedToTearDown,omitempty"`
	TerminatedToSyncTerminated []float64 `json:"terminatedToSyncTerminated,omitempty"`
	// ExitUnmount times the exiting pods (measureExits), reading
	// /proc/self/mountinfo every ExitPollSeconds.
	ExitUnmount     []float64 `json:"exitUnmount,omitempty"`
	ExitPollSeconds float64   `json:"exitPollSeconds,omitempty"`
	// ExitSteps breaks ExitUnmount down by ExitStep key.
	ExitSteps map[string][]float64 `json:"exitSteps,omitempty"`
	// CrashLoop is what crash-looping pods cost (measureCrashLoop).
	CrashLoop *CrashLoopCost `json:"crashLoop,omitempty"`
	// DeleteCPU and AddCPU are the CPU spent while the single pods are
	// deleted and added.
	DeleteCPU *ChurnCPU `json:"deleteCPU,omitempty"`
	AddCPU    *ChurnCPU `json:"addCPU,omitempty"`

	// Cluster node: Kinds are the single pods' times by PodKind key.
	Kinds map[string]*KindTimes `json:"kinds,omitempty"`
	// ConfigMapUpdate times each config map update through the API to the
	// pod's file; ConfigMapUpdateMissed counts those past the timeout.
	ConfigMapUpdate       []float64 `json:"configMapUpdate,omitempty"`
	ConfigMapUpdateMissed int       `json:"configMapUpdateMissed,omitempty"`
	// Remount times each pod sync during the updates, from reaching the
	// volume manager to the last MountVolume.SetUp; RemountMissed counts
	// the syncs with no remount logged.
	Remount       []float64 `json:"remount,omitempty"`
	RemountMissed int       `json:"remountMissed,omitempty"`
	// APIRequests are the kubelet's requests by phase, from the audit log.
	APIRequests map[string]cluster.APIRequests `json:"apiRequests,omitempty"`
}

// UnmarshalJSON reads m; results of runs before Mode.Config get theirs
// from the fields stock and gate, those before Mode.Kubelet their
// configuration's kubelet.
func (m *Mode) UnmarshalJSON(data []byte) error {
	type mode Mode // without this method
	old := struct {
		*mode
		Gate    bool          `json:"gate"`
		Stock   bool          `json:"stock"`
		Kubelet *node.Kubelet `json:"kubelet"`
	}{mode: (*mode)(m)}
	if err := json.Unmarshal(data, &old); err != nil {
		return err
	}
	switch {
	case m.Config != "":
	case old.Stock:
		m.Config = Stock
	case old.Gate:
		m.Config = GateOn
	default:
		m.Config = GateOff
	}
	m.Kubelet = m.Config.Kubelet("")
	if old.Kubelet != nil {
		m.Kubelet = *old.Kubelet
	}
	return nil
}

// RuntimeName is the short name of the mode's container runtime: containerd
// or CRI-O.
func (m Mode) RuntimeName() string { return node.RuntimeNameOf(m.Runtime) }

// ChurnCPU is the kubelet's and the runtime's CPU-seconds over a stretch of
// pod churn Seconds long.
type ChurnCPU struct {
	Seconds float64 `json:"seconds"`
	Kubelet float64 `json:"kubelet"`
	Runtime float64 `json:"runtime"`
}

// Phases of a cluster round whose API requests a Mode counts.
const (
	PhaseIdle  = "idle"  // the idle windows
	PhaseChurn = "churn" // the CSI pods added and deleted
)

// PodKind is a kind of single pod the cluster benchmark adds and deletes.
type PodKind struct {
	// Key names the kind in results; CSI and AttachDelay are as in
	// cluster.APIPod.
	Key         string
	CSI         bool
	AttachDelay time.Duration
}

// ClusterPodKinds are the single pods' kinds: the token, configMap, secret
// and emptyDir only, and those with a CSI volume that requires attach, its
// attach marked 0 s and 1 s after the VolumeAttachment appears.
var ClusterPodKinds = []PodKind{
	{Key: "api"},
	{Key: "csi-0s", CSI: true},
	{Key: "csi-1s", CSI: true, AttachDelay: time.Second},
}

// KindTimes are one kind's single pods' times, in seconds.
type KindTimes struct {
	// Mount is the volume manager's wait; MountEndToEnd is from the pod's
	// creation through the API to the wait's end.
	Mount         []float64 `json:"mount"`
	MountEndToEnd []float64 `json:"mountEndToEnd"`
	// SetUpToMounted is from the pod's last MountVolume.SetUp (or the
	// wait's start if later) to the wait's end: the volume manager's own
	// reaction, without the plugins' work.
	SetUpToMounted []float64 `json:"setUpToMounted,omitempty"`
	// AttachedToMounted and ListedToMounted are from the attacher marking
	// the volume attached, and from the node's status listing it (which the
	// kubelet waits for), to the wait's end (CSI kinds).
	AttachedToMounted []float64 `json:"attachedToMounted,omitempty"`
	ListedToMounted   []float64 `json:"listedToMounted,omitempty"`
	// UnmountEndToEnd is from the pod's deletion through the API to its
	// volumes unmounted, DetachEndToEnd to its VolumeAttachment gone.
	UnmountEndToEnd []float64 `json:"unmountEndToEnd"`
	DetachEndToEnd  []float64 `json:"detachEndToEnd,omitempty"`
}

// Result is a whole benchmark run: the rounds of each configuration, and
// the configurations each round ran, in order.
type Result struct {
	Cluster bool `json:"cluster,omitempty"`
	// Configs are the run's configurations in the report's order; empty in
	// older results, shown in the order of Configs.
	Configs        []Config `json:"configs,omitempty"`
	Stock          []Mode   `json:"stock,omitempty"`
	Off, On        []Mode
	AllGates       []Mode     `json:"allGates,omitempty"`
	NodeStatusGate []Mode     `json:"nodeStatusGate,omitempty"`
	Orders         [][]Config `json:"orders"`
}

// modes is where r keeps the rounds of configuration c; nil for a c not in
// Configs.
func (r *Result) modes(c Config) *[]Mode {
	return map[Config]*[]Mode{Stock: &r.Stock, GateOff: &r.Off, GateOn: &r.On, AllGates: &r.AllGates, NodeStatusGate: &r.NodeStatusGate}[c]
}

// Add files m with the rounds of its configuration, m.Config, which must be
// one of Configs.
func (r *Result) Add(m Mode) {
	p := r.modes(m.Config)
	*p = append(*p, m)
}

// Modes are the rounds of configuration c.
func (r Result) Modes(c Config) []Mode {
	if p := r.modes(c); p != nil {
		return *p
	}
	return nil
}

// configs are the configurations r has rounds of, in the report's order:
// the run's (Result.Configs), or that of Configs.
func (r Result) configs() []Config {
	cs := r.Configs
	if len(cs) == 0 {
		cs = Configs
	}
	return slices.DeleteFunc(slices.Clone(cs), func(c Config) bool { return len(r.Modes(c)) == 0 })
}

// Load reads a result written by Save.
func Load(path string) (Result, error) {
	var r Result
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if len(r.configs()) == 0 {
		return r, fmt.Errorf("%s: want results of a configuration", path)
	}
	return r, nil
}

// Save writes r as JSON.
func (r Result) Save(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// Benchmark runs rounds of configs on fresh nodes, each round in its
// RoundOrder, stock left out unless stock is set, saving o.Dir/results.json
// after each configuration, and then writes the report (WriteReport).
func Benchmark(ctx context.Context, o Options, rounds int, configs []Config, stock bool) error {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	leftOut := func(c Config) bool { return !stock && c == Stock }
	r := Result{Cluster: o.Workload.cluster(), Configs: slices.DeleteFunc(slices.Clone(configs), leftOut)}
	estimate := Estimate(o)
	names := make([]string, len(r.Configs))
	for i, c := range r.Configs {
		names[i] = string(c)
	}
	fmt.Printf("==> %d round(s) of %s: about %v\n", rounds, strings.Join(names, ", "), (time.Duration(rounds*len(r.Configs)) * estimate).Round(time.Minute))
	for round := 1; round <= rounds; round++ {
		order := slices.DeleteFunc(RoundOrder(round, configs), leftOut)
		r.Orders = append(r.Orders, order)
		for _, c := range order {
			fmt.Printf("==> round %d of %d, %s: %d pods (about %v)\n", round, rounds, c, o.Pods, estimate.Round(time.Minute))
			m, err := Run(ctx, o, c)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w; the node's logs are under %s", round, c, err, filepath.Join(o.Dir, c.WorkDir(), "logs"))
			}
			r.Add(m)
			if err := r.Save(filepath.Join(o.Dir, "results.json")); err != nil {
				return err
			}
		}
	}
	return WriteReport(r, o.Dir)
}

// Estimate is roughly how long Run takes for one configuration: settling,
// the idle windows and the rest of the workload (Workload.estimate).
func Estimate(o Options) time.Duration {
	return o.Settle + time.Duration(o.Windows)*o.Window + o.Workload.estimate(o)
}

// WriteReport writes r's report.md and charts into dir, and prints the
// report.
func WriteReport(r Result, dir string) error {
	md := Markdown(r)
	files, err := Charts(r, dir)
	if err != nil {
		return err
	}
	md += "\nCharts: " + strings.Join(files, ", ") + "\n"
	fmt.Print("\n" + md)
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(md), 0o644)
}

// WriteScale writes the scale table of every pods-N/results.json under dir
// into dir/scale.md, and prints it.
func WriteScale(dir string) error {
	matches, err := filepath.Glob(filepath.Join(dir, "pods-*", "results.json"))
	if err != nil {
		return err
	}
	var sizes []Size
	for _, m := range matches {
		pods, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(m)), "pods-"))
		if err != nil {
			continue
		}
		r, err := Load(m)
		if err != nil {
			return err
		}
		sizes = append(sizes, Size{Pods: pods, Result: r})
	}
	if len(sizes) == 0 {
		return fmt.Errorf("no pods-N/results.json under %s: run node-bench -sizes \"110 250\" first", dir)
	}
	md := ScaleMarkdown(sizes)
	fmt.Print(md)
	return os.WriteFile(filepath.Join(dir, "scale.md"), []byte(md), 0o644)
}
