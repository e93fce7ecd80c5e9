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
// kubelet configuration, round after round: upstream's kubelet (stock, built
// from the release's tag without the series) and the patched kubelet with
// the EventedVolumeManager gate off and on, with every gate of the series
// on, and with the VolumesInUseNodeStatusUpdate gate on beside it.
//
// On a standalone node (static pods) it measures idle kubelet CPU from
// /proc, the volume manager's share of it from a pprof profile, the loops'
// iterations and passes, the mount and unmount waits from the kubelet's log,
// the single pods' deletion phase by phase and the CPU it costs, and the time
// from a container exiting on its own to its pod's volumes unmounted. On a
// cluster node (the Cluster workload: a control plane, API pods, the project's
// CSI driver and attacher) it measures the same idle figures with the
// control plane's CPU, a config map's way into its pods' files, the single
// pods' times by kind, and the kubelet's API requests from the audit log.
package nodebench

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
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
	// Runtime is the container runtime, and PodEventsOff turns CRI-O's
	// container events off.
	Runtime      node.Runtime
	PodEventsOff bool
	// Singles is how many single pods are added and deleted one at a time,
	// Gap apart: on a standalone node idle pods deleted, then new ones
	// added; on a cluster node, of each of ClusterPodKinds, added, then
	// deleted.
	Singles int
	Gap     time.Duration
	// ExitPods is how many pods whose container exits on its own a
	// standalone node adds at the end (measureExits), and ExitPoll how
	// often /proc/self/mountinfo is read meanwhile.
	ExitPods int
	ExitPoll time.Duration
	// CrashLoopPods is how many pods whose container exits 1 every
	// CrashLoopAfter (restartPolicy Always, so they crash-loop) a
	// standalone node adds last, and CrashLoopWindow how long their cost
	// is measured (measureCrashLoop).
	CrashLoopPods   int
	CrashLoopWindow time.Duration
	// StockKubelet is upstream's kubelet, built without the series, that
	// the Stock configuration runs.
	StockKubelet string
	// ConfigMaps is how many of a cluster node's idle pods get their config
	// map updated at once in each of ConfigMapWaves waves; ConfigMapTimeout
	// bounds a wave's wait (the kubelet remounts at a pod's resync, every
	// 60 to 90 s).
	ConfigMaps       int
	ConfigMapWaves   int
	ConfigMapTimeout time.Duration
	// Logf reports progress.
	Logf func(format string, args ...any)
}

// Config is a kubelet configuration the benchmark runs.
type Config string

// The configurations: upstream's kubelet, and the patched kubelet with the
// series' gates set in turn.
const (
	// Stock is upstream's kubelet of the release, built from its tag
	// without the series, with none of the series' gates in its
	// configuration: upstream's kubelet does not know them.
	Stock Config = "stock"
	// GateOff is the patched kubelet with the EventedVolumeManager gate
	// off, and the series' other gates off too.
	GateOff Config = "gate off"
	// GateOn is the patched kubelet with the EventedVolumeManager gate on
	// alone.
	GateOn Config = "gate on"
	// AllGates is the patched kubelet with every gate of the series on:
	// EventedVolumeManager, RelistOnPodTermination and
	// VolumesInUseNodeStatusUpdate.
	AllGates Config = "all gates"
	// NodeStatusGate is the patched kubelet with VolumesInUseNodeStatusUpdate
	// and EventedVolumeManager, which it needs, on: GateOn plus the node
	// status gate. The gate acts only with an API server: on a standalone
	// node it runs as GateOn does.
	NodeStatusGate Config = "node-status gate"
)

// Configs are every configuration, in the order the report shows them for
// results that do not say their run's (Result.Configs).
var Configs = []Config{Stock, GateOff, GateOn, AllGates, NodeStatusGate}

// DefaultConfigs are the configurations a run has unless it says which: on
// a standalone node stock, gate off, gate on and all gates; on a cluster
// node, which runs no stock kubelet, gate off, gate on, node-status gate and
// all gates.
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

// FeatureGates are c's gate values as node.Options takes them:
// EventedVolumeManager's (Options.Gate) and the series' other gates on
// (Options.Gates). Stock has none: upstream's kubelet knows none of them.
func (c Config) FeatureGates() (gate bool, gates map[string]bool) {
	switch c {
	case GateOn:
		return true, nil
	case AllGates:
		return true, map[string]bool{node.RelistOnPodTermination: true, node.VolumesInUseNodeStatusUpdate: true}
	case NodeStatusGate:
		return true, map[string]bool{node.VolumesInUseNodeStatusUpdate: true}
	}
	return false, nil
}

// Gate is the EventedVolumeManager gate's value in c; false for Stock,
// which has no such gate.
func (c Config) Gate() bool {
	gate, _ := c.FeatureGates()
	return gate
}

// WorkDir is c's work directory under Options.Dir: work-stock,
// work-gate-false, work-gate-true, work-all or work-nsg. The names stay
// short: the CSI driver's registration socket lives under it, and a unix
// socket's path has at most 107 bytes.
func (c Config) WorkDir() string {
	switch c {
	case GateOff, GateOn:
		return fmt.Sprintf("work-gate-%t", c.Gate())
	case AllGates:
		return "work-all"
	case NodeStatusGate:
		return "work-nsg"
	}
	return "work-" + c.hyphenated()
}

// hyphenated is c's name with hyphens for its spaces.
func (c Config) hyphenated() string { return strings.ReplaceAll(string(c), " ", "-") }

// RoundOrder is the order of a run's configurations in a round. Odd rounds
// take the rotations of configs in turn (of stock, gate off, gate on: round
// 1 stock, off, on; round 3 off, on, stock; round 5 on, stock, off), and
// each even round runs the round before it backwards. So each
// configuration goes first in one of the first len(configs) odd rounds
// (with three, rounds 1 to 6 run all six orders), and over each pair of
// rounds (1 and 2, 3 and 4, ...) every configuration stands in the middle
// on average: a drift of the node over a round (the runtime's state
// growing, the host warming up) weighs on all of them alike instead of
// always on the last. Leaving a configuration out of every order keeps
// that: node-bench -stock=false leaves stock out of these orders, so that
// without stock gate off and on trade places within each pair of rounds.
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
	// Config is the configuration; Gate is its EventedVolumeManager gate,
	// and Stock says it is upstream's kubelet (Gate is then false): results
	// of runs before Config have these two alone (UnmarshalJSON).
	// KubeletVersion is the kubelet's --version, Runtime the container
	// runtime (node.Options.RuntimeLabel).
	Config         Config `json:"config,omitempty"`
	Gate           bool   `json:"gate"`
	Stock          bool   `json:"stock,omitempty"`
	KubeletVersion string `json:"kubeletVersion,omitempty"`
	Runtime        string `json:"runtime"`
	Pods           int    `json:"pods"`
	Volumes        int    `json:"volumes"`
	// StartupSeconds is how long the pods took to run, all added at once.
	StartupSeconds float64 `json:"startupSeconds"`
	// KubeletCPU, RuntimeCPU (the container runtime's daemon), and on a
	// cluster node APIServerCPU and ControllerManagerCPU, are CPU-seconds
	// per idle window of WindowSeconds.
	WindowSeconds        float64   `json:"windowSeconds"`
	KubeletCPU           []float64 `json:"kubeletCPU"`
	RuntimeCPU           []float64 `json:"runtimeCPU"`
	APIServerCPU         []float64 `json:"apiserverCPU,omitempty"`
	ControllerManagerCPU []float64 `json:"controllerManagerCPU,omitempty"`
	// KubeletRSSMiB is the kubelet's resident set, and KubeletAnonMiB its
	// anonymous part, read every memorySampleEvery through the idle windows
	// (node.ProcessRSS); KubeletLiveHeapMiB is its
	// live Go heap after a forced collection, read at the end of each idle
	// window (node.LiveHeap).
	KubeletRSSMiB      []float64 `json:"kubeletRSSSamplesMiB,omitempty"`
	KubeletAnonMiB     []float64 `json:"kubeletAnonSamplesMiB,omitempty"`
	KubeletLiveHeapMiB []float64 `json:"kubeletLiveHeapMiB,omitempty"`
	// ProfileSeconds is the profile's length; ProfileCPUSeconds is the
	// kubelet CPU it sampled, and VolumeManagerCPUSeconds the part with the
	// volume manager on the stack.
	ProfileSeconds          float64            `json:"profileSeconds"`
	ProfileCPUSeconds       float64            `json:"profileCPUSeconds"`
	VolumeManagerCPUSeconds float64            `json:"volumeManagerCPUSeconds"`
	VolumeManagerTop        []node.FunctionCPU `json:"volumeManagerTop"`
	// Iterations counts the loops' iterations over the idle windows by
	// loop, and Passes their passes keyed "loop/kind" (full, partial,
	// skipped), and Triggers the iterations over the whole run by trigger.
	// A kubelet with the gate off has none of them.
	Iterations map[string]float64 `json:"iterations,omitempty"`
	Passes     map[string]float64 `json:"passes,omitempty"`
	Triggers   map[string]float64 `json:"triggers,omitempty"`
	// GapSeconds is the time between single pods.
	GapSeconds float64 `json:"gapSeconds"`

	// Standalone node: BurstMount are the mount waits of the pods added at
	// once, Mount and Unmount those of the single pods; MountEndToEnd and
	// UnmountEndToEnd time the single pods from their manifest written or
	// removed to the end of their wait. ChurnVerbosity is the kubelet's --v
	// while the single pods are deleted and added.
	BurstMount      []float64 `json:"burstMount,omitempty"`
	Mount           []float64 `json:"mount,omitempty"`
	Unmount         []float64 `json:"unmount,omitempty"`
	MountEndToEnd   []float64 `json:"mountEndToEnd,omitempty"`
	UnmountEndToEnd []float64 `json:"unmountEndToEnd,omitempty"`
	ChurnVerbosity  int       `json:"churnVerbosity,omitempty"`
	// DeletionPhases time the single pods' deletion phase by phase: by
	// kubeletlog.DeletionPhase Key, the seconds from each pod's manifest removed
	// to the kubelet's line of the phase. A pod whose log lacks the line is
	// left out of that phase.
	DeletionPhases map[string][]float64 `json:"deletionPhases,omitempty"`
	// TerminatedToTearDown and TerminatedToSyncTerminated time, for each
	// single pod whose log has both lines, its termination complete to its
	// last TearDown and to SyncTerminatedPod enter.
	TerminatedToTearDown       []float64 `json:"terminatedToTearDown,omitempty"`
	TerminatedToSyncTerminated []float64 `json:"terminatedToSyncTerminated,omitempty"`
	// ExitUnmount times the pods whose container exits on its own, from
	// its finishedAt to /proc/self/mountinfo, read every ExitPollSeconds,
	// showing no mount left under the pod's volumes directory.
	ExitUnmount     []float64 `json:"exitUnmount,omitempty"`
	ExitPollSeconds float64   `json:"exitPollSeconds,omitempty"`
	// ExitSteps breaks ExitUnmount down, by ExitStep key: for each exiting
	// pod whose kubelet log (at --v=4) has both ends of a step, its time in
	// seconds.
	ExitSteps map[string][]float64 `json:"exitSteps,omitempty"`
	// CrashLoop is what crash-looping pods cost (measureCrashLoop).
	CrashLoop *CrashLoopCost `json:"crashLoop,omitempty"`
	// DeleteCPU and AddCPU are the CPU spent while the single pods are
	// deleted and while they are added.
	DeleteCPU *ChurnCPU `json:"deleteCPU,omitempty"`
	AddCPU    *ChurnCPU `json:"addCPU,omitempty"`

	// Cluster node: Kinds are the single pods' times by PodKind key.
	Kinds map[string]*KindTimes `json:"kinds,omitempty"`
	// ConfigMapUpdate is, per updated config map, the time from its update
	// through the API to the new content in the pod's file; missed counts
	// those not there within the timeout.
	ConfigMapUpdate       []float64 `json:"configMapUpdate,omitempty"`
	ConfigMapUpdateMissed int       `json:"configMapUpdateMissed,omitempty"`
	// Remount is, for each pod sync while the config maps were updated, the
	// time from the sync reaching the volume manager to the pod's remounted
	// volumes' last MountVolume.SetUp; RemountMissed counts the syncs with
	// no remount logged.
	Remount       []float64 `json:"remount,omitempty"`
	RemountMissed int       `json:"remountMissed,omitempty"`
	// APIRequests are the kubelet's requests to the API server by phase
	// (PhaseIdle, PhaseChurn), from its audit log.
	APIRequests map[string]cluster.APIRequests `json:"apiRequests,omitempty"`
}

// UnmarshalJSON reads m; results of runs before Mode.Config get theirs
// from Stock and Gate: stock, gate on or gate off.
func (m *Mode) UnmarshalJSON(data []byte) error {
	type mode Mode // without this method
	if err := json.Unmarshal(data, (*mode)(m)); err != nil {
		return err
	}
	switch {
	case m.Config != "":
	case m.Stock:
		m.Config = Stock
	case m.Gate:
		m.Config = GateOn
	default:
		m.Config = GateOff
	}
	return nil
}

// RuntimeName is the short name of the mode's container runtime: containerd
// or CRI-O.
func (m Mode) RuntimeName() string { return node.RuntimeNameOf(m.Runtime) }

// ChurnCPU is the CPU spent over a stretch of pod churn.
type ChurnCPU struct {
	// Seconds is the stretch's length.
	Seconds float64 `json:"seconds"`
	// Kubelet and Runtime (the container runtime's daemon) are the
	// processes' CPU-seconds in it.
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
	// Mount is the volume manager's wait (Waiting for volumes → All
	// volumes are attached and mounted); MountEndToEnd is from the pod's
	// creation through the API to the wait's end.
	Mount         []float64 `json:"mount"`
	MountEndToEnd []float64 `json:"mountEndToEnd"`
	// SetUpToMounted is from the pod's last volume mounted (its last
	// MountVolume.SetUp line, or the wait's start if later) to the wait's
	// end: the volume manager's own reaction, without the plugins' work.
	SetUpToMounted []float64 `json:"setUpToMounted,omitempty"`
	// AttachedToMounted is from the attacher marking the volume attached
	// to the wait's end, and ListedToMounted from the node's status listing
	// it attached (the attach/detach controller's write, which the kubelet
	// waits for) to the wait's end (CSI kinds).
	AttachedToMounted []float64 `json:"attachedToMounted,omitempty"`
	ListedToMounted   []float64 `json:"listedToMounted,omitempty"`
	// UnmountEndToEnd is from the pod's deletion through the API to All
	// volumes are unmounted; DetachEndToEnd to the VolumeAttachment gone
	// (CSI kinds).
	UnmountEndToEnd []float64 `json:"unmountEndToEnd"`
	DetachEndToEnd  []float64 `json:"detachEndToEnd,omitempty"`
}

// Result is a whole benchmark run, on a cluster node or not: the rounds of
// each configuration (upstream's kubelet, none without stock; the series'
// kubelet with the gate off and on; with all gates; with the node-status
// gate), and the configurations each round ran, in order.
type Result struct {
	Cluster bool `json:"cluster,omitempty"`
	// Configs are the run's configurations, in the order the report shows
	// them; empty in results of runs before it, which the report shows in
	// the order of Configs.
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
