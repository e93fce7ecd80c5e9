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
// the EventedVolumeManager gate off and on.
//
// On a standalone node (static pods) it measures idle kubelet CPU from
// /proc, the volume manager's share of it from a pprof profile, the loops'
// iterations and passes, the mount and unmount waits from the kubelet's log,
// the single pods' deletion phase by phase and the CPU it costs, and the time
// from a container exiting on its own to its pod's volumes unmounted. On a
// cluster node (Options.Cluster: a control plane, API pods, the project's
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
	// Cluster runs a cluster node with API pods instead of a standalone
	// node with static pods.
	Cluster bool
	// Pods is how many pods run idle, each with its volumes.
	Pods int
	// StartTimeout is how long all pods may take to run; zero means
	// node.PodsStartTimeout(Pods).
	StartTimeout time.Duration
	// Settle is how long the node rests after the pods run, before measuring.
	Settle time.Duration
	// Window is one idle CPU measurement window; Windows is how many.
	Window  time.Duration
	Windows int
	// Profile is the length of the pprof profile.
	Profile time.Duration
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
// gate off and on.
const (
	// Stock is upstream's kubelet of the release, built from its tag
	// without the series, with no EventedVolumeManager gate in its
	// configuration: upstream's kubelet does not know the gate.
	Stock Config = "stock"
	// GateOff is the patched kubelet with the gate off.
	GateOff Config = "gate off"
	// GateOn is the patched kubelet with the gate on.
	GateOn Config = "gate on"
)

// Configs are the configurations in the order the report shows them.
var Configs = []Config{Stock, GateOff, GateOn}

// Gate is the EventedVolumeManager gate's value in c; false for Stock,
// which has no such gate.
func (c Config) Gate() bool { return c == GateOn }

// WorkDir is c's work directory under Options.Dir: work-stock,
// work-gate-false or work-gate-true.
func (c Config) WorkDir() string {
	if c == Stock {
		return "work-stock"
	}
	return fmt.Sprintf("work-gate-%t", c.Gate())
}

// RoundOrder is the order of the configurations in a round. Odd rounds take
// the rotations of stock, gate off, gate on in turn (round 1: stock, off,
// on; round 3: off, on, stock; round 5: on, stock, off), and each even
// round runs the round before it backwards. So each configuration goes
// first in one of the first three rounds, rounds 1 to 6 run all six orders,
// and over each pair of rounds (1 and 2, 3 and 4, ...) every configuration
// stands in the middle on average: a drift of the node over a round (the
// runtime's state growing, the host warming up) weighs on all of them alike
// instead of always on the last. Without stock, the same orders with stock
// left out: gate off and on trade places within each pair of rounds.
func RoundOrder(round int, stock bool) []Config {
	k := ((round - 1) / 2) % len(Configs)
	order := append(slices.Clone(Configs[k:]), Configs[:k]...)
	if round%2 == 0 {
		slices.Reverse(order)
	}
	if !stock {
		order = slices.DeleteFunc(order, func(c Config) bool { return c == Stock })
	}
	return order
}

// Mode is one configuration's measurements in one round; the fields of one
// kind of node only are empty on the other. Times are in seconds.
type Mode struct {
	// Gate and Stock (upstream's kubelet; Gate is then false) say the
	// configuration; KubeletVersion is the kubelet's --version, Runtime the
	// container runtime (node.Options.RuntimeLabel).
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
	// skipped); MissedSignals counts by loop the timer-started passes over
	// the whole run that started work no signal announced, and Triggers
	// the iterations over the whole run by trigger. A kubelet with the gate
	// off has none of them.
	Iterations    map[string]float64 `json:"iterations,omitempty"`
	Passes        map[string]float64 `json:"passes,omitempty"`
	MissedSignals map[string]float64 `json:"missedSignals,omitempty"`
	Triggers      map[string]float64 `json:"triggers,omitempty"`
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

// Config is the configuration m measured.
func (m Mode) Config() Config {
	switch {
	case m.Stock:
		return Stock
	case m.Gate:
		return GateOn
	default:
		return GateOff
	}
}

// RuntimeName is the short name of the mode's container runtime: containerd
// or CRI-O.
func (m Mode) RuntimeName() string {
	if strings.HasPrefix(m.Runtime, "CRI-O") {
		return "CRI-O"
	}
	return "containerd"
}

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
// upstream's kubelet (none without stock) and of the series' kubelet with
// the gate off and on, and the configurations each round ran, in order.
type Result struct {
	Cluster bool   `json:"cluster,omitempty"`
	Stock   []Mode `json:"stock,omitempty"`
	Off, On []Mode
	Orders  [][]Config `json:"orders"`
}

// Add files m with the rounds of its configuration.
func (r *Result) Add(m Mode) {
	switch m.Config() {
	case Stock:
		r.Stock = append(r.Stock, m)
	case GateOn:
		r.On = append(r.On, m)
	default:
		r.Off = append(r.Off, m)
	}
}

// Modes are the rounds of configuration c.
func (r Result) Modes(c Config) []Mode {
	return map[Config][]Mode{Stock: r.Stock, GateOff: r.Off, GateOn: r.On}[c]
}

// configs are the configurations r has rounds of, in the report's order.
func (r Result) configs() []Config {
	return slices.DeleteFunc(slices.Clone(Configs), func(c Config) bool { return len(r.Modes(c)) == 0 })
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
	if len(r.Off) == 0 || len(r.On) == 0 {
		return r, fmt.Errorf("%s: want results for the gate off and on", path)
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
