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
// and make node-bench-cluster): the same Workload on a fresh node for each
// kubelet configuration (Config), round after round.
package nodebench

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"k8s.io/apimachinery/pkg/util/wait"

	"evented-volume-manager/pkg/bench"
	"evented-volume-manager/pkg/cluster"
	"evented-volume-manager/pkg/kubeletlog"
	"evented-volume-manager/pkg/node"
)

// Options configure a benchmark run.
type Options struct {
	// Out is the project's build output; Dir receives the work directories.
	Out, Dir string
	Workload Workload
	// Pods run idle within StartTimeout (zero: node.PodsStartTimeout), then Settle.
	Pods                 int
	StartTimeout, Settle time.Duration
	// Window is one idle CPU window, Windows how many, profiled together.
	Window  time.Duration
	Windows int
	Runtime node.Runtime
	// Singles pods (of each of ClusterPodKinds) are deleted and added Gap apart.
	Singles int
	Gap     time.Duration
	// A standalone node adds ExitPods exiting on their own, reading
	// mountinfo every ExitPoll, and CrashLoopPods measured for CrashLoopWindow.
	ExitPods        int
	ExitPoll        time.Duration
	CrashLoopPods   int
	CrashLoopWindow time.Duration
	// StockKubelet is Stock's binary; empty means node.StockKubelet's default.
	StockKubelet string
	// A cluster node updates ConfigMaps config maps, spread over
	// configMapSpread, ConfigMapWaves times.
	ConfigMaps, ConfigMapWaves int
	ConfigMapTimeout           time.Duration
	Logf                       func(format string, args ...any)
}

// Config is a kubelet configuration the benchmark runs.
type Config string

// The configurations; Config.Kubelet gives their kubelets.
const (
	Stock          Config = "stock"            // upstream's kubelet, without the series
	GateOff        Config = "gate off"         // the series' kubelet with its gates off
	GateOn         Config = "gate on"          // EventedVolumeManager on alone
	AllGates       Config = "all gates"        // every gate of the series on
	NodeStatusGate Config = "node-status gate" // GateOn and VolumesInUseNodeStatusUpdate
)

// Configs are every configuration, in the order of reports of older results.
var Configs = []Config{Stock, GateOff, GateOn, AllGates, NodeStatusGate}

// DefaultConfigs are the configurations a run has unless it says which.
func DefaultConfigs(cluster bool) []Config {
	if cluster {
		return []Config{GateOff, GateOn, NodeStatusGate, AllGates}
	}
	return []Config{Stock, GateOff, GateOn, AllGates}
}

// ParseConfigs reads comma-separated configurations, by name or hyphenated.
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

// Kubelet is c's kubelet; Stock's binary is stockBinary.
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

// WorkDir is c's work directory under Options.Dir, short: the CSI driver's
// registration socket lives under it, and a unix socket's path has at most 107 bytes.
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

// String is c's name.
func (c Config) String() string     { return string(c) }
func (c Config) hyphenated() string { return strings.ReplaceAll(string(c), " ", "-") }

// RoundOrder is the order of configs in a round: odd rounds rotate them, even
// ones run the one before backwards, so that a drift of the node over a round
// weighs on all configurations alike (also with one left out).
func RoundOrder(round int, configs []Config) []Config {
	k := ((round - 1) / 2) % len(configs)
	order := append(slices.Clone(configs[k:]), configs[:k]...)
	if round%2 == 0 {
		slices.Reverse(order)
	}
	return order
}

// Mode is one configuration's measurements in one round, in seconds.
type Mode struct {
	Config         Config       `json:"config,omitempty"`
	Kubelet        node.Kubelet `json:"kubelet"`
	KubeletVersion string       `json:"kubeletVersion,omitempty"`
	Runtime        string       `json:"runtime"` // node.Runtime.Label
	Pods           int          `json:"pods"`
	Volumes        int          `json:"volumes"`
	// The CPU fields are CPU-seconds per idle window of WindowSeconds.
	StartupSeconds       float64   `json:"startupSeconds"`
	WindowSeconds        float64   `json:"windowSeconds"`
	KubeletCPU           []float64 `json:"kubeletCPU"`
	RuntimeCPU           []float64 `json:"runtimeCPU"`
	APIServerCPU         []float64 `json:"apiserverCPU,omitempty"`
	ControllerManagerCPU []float64 `json:"controllerManagerCPU,omitempty"`
	// The kubelet's RSS read every memorySampleEvery, its live heap after
	// each idle window.
	KubeletRSSMiB      []float64 `json:"kubeletRSSSamplesMiB,omitempty"`
	KubeletAnonMiB     []float64 `json:"kubeletAnonSamplesMiB,omitempty"`
	KubeletLiveHeapMiB []float64 `json:"kubeletLiveHeapMiB,omitempty"`
	// ProfileCPUSeconds is the kubelet CPU sampled over ProfileSeconds.
	ProfileSeconds          float64            `json:"profileSeconds"`
	ProfileCPUSeconds       float64            `json:"profileCPUSeconds"`
	VolumeManagerCPUSeconds float64            `json:"volumeManagerCPUSeconds"`
	VolumeManagerTop        []node.FunctionCPU `json:"volumeManagerTop"`
	// The loops' counts by loop, "loop/kind" and trigger; none gate off.
	Iterations map[string]float64 `json:"iterations,omitempty"`
	Passes     map[string]float64 `json:"passes,omitempty"`
	Triggers   map[string]float64 `json:"triggers,omitempty"`
	GapSeconds float64            `json:"gapSeconds"`
	// Standalone node: the idle (Burst) and single pods' waits, and end to end.
	BurstMount      []float64 `json:"burstMount,omitempty"`
	Mount           []float64 `json:"mount,omitempty"`
	Unmount         []float64 `json:"unmount,omitempty"`
	MountEndToEnd   []float64 `json:"mountEndToEnd,omitempty"`
	SetUpToMounted  []float64 `json:"setUpToMounted,omitempty"`
	UnmountEndToEnd []float64 `json:"unmountEndToEnd,omitempty"`
	ChurnVerbosity  int       `json:"churnVerbosity,omitempty"`
	// DeletionPhases are by kubeletlog.DeletionPhase Key.
	DeletionPhases             map[string][]float64 `json:"deletionPhases,omitempty"`
	TerminatedToTearDown       []float64            `json:"terminatedToTearDown,omitempty"`
	TerminatedToSyncTerminated []float64            `json:"terminatedToSyncTerminated,omitempty"`
	// ExitUnmount times the exiting pods, ExitSteps by ExitStep key.
	ExitUnmount     []float64            `json:"exitUnmount,omitempty"`
	ExitPollSeconds float64              `json:"exitPollSeconds,omitempty"`
	ExitSteps       map[string][]float64 `json:"exitSteps,omitempty"`
	CrashLoop       *CrashLoopCost       `json:"crashLoop,omitempty"`
	DeleteCPU       *ChurnCPU            `json:"deleteCPU,omitempty"`
	AddCPU          *ChurnCPU            `json:"addCPU,omitempty"`
	// Cluster node: Kinds are the single pods' times by PodKind key.
	Kinds map[string]*KindTimes `json:"kinds,omitempty"`
	// ConfigMapUpdate times updates to the pod's file, Remount syncs' remounts.
	ConfigMapUpdate       []float64                      `json:"configMapUpdate,omitempty"`
	ConfigMapUpdateMissed int                            `json:"configMapUpdateMissed,omitempty"`
	Remount               []float64                      `json:"remount,omitempty"`
	RemountMissed         int                            `json:"remountMissed,omitempty"`
	APIRequests           map[string]cluster.APIRequests `json:"apiRequests,omitempty"`
}

// UnmarshalJSON reads m, also from older results without Config or Kubelet.
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

// RuntimeName is the short name of the mode's container runtime.
func (m Mode) RuntimeName() string { return node.RuntimeNameOf(m.Runtime) }

// ChurnCPU is the kubelet's and the runtime's CPU-seconds over Seconds of churn.
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

// PodKind is a kind of single pod on a cluster node (cluster.APIPod).
type PodKind struct {
	Key         string
	CSI         bool
	AttachDelay time.Duration
}

// ClusterPodKinds are the single pods' kinds: API volumes only, or a CSI one.
var ClusterPodKinds = []PodKind{
	{Key: "api"},
	{Key: "csi-0s", CSI: true},
	{Key: "csi-1s", CSI: true, AttachDelay: time.Second},
}

// KindTimes are one kind's single pods' times, in seconds.
type KindTimes struct {
	// Mount is the volume manager's wait; the others end with it, from the
	// pod's creation, last SetUp (or the wait's start), attach and listing.
	Mount             []float64 `json:"mount"`
	MountEndToEnd     []float64 `json:"mountEndToEnd"`
	SetUpToMounted    []float64 `json:"setUpToMounted,omitempty"`
	AttachedToMounted []float64 `json:"attachedToMounted,omitempty"`
	ListedToMounted   []float64 `json:"listedToMounted,omitempty"`
	// From the pod's deletion to its volumes unmounted, and detached.
	UnmountEndToEnd []float64 `json:"unmountEndToEnd"`
	DetachEndToEnd  []float64 `json:"detachEndToEnd,omitempty"`
}

// Result is a whole benchmark run: each configuration's rounds, and Orders.
type Result struct {
	Cluster bool `json:"cluster,omitempty"`
	// Configs are the run's configurations; empty in older results.
	Configs        []Config `json:"configs,omitempty"`
	Stock          []Mode   `json:"stock,omitempty"`
	Off, On        []Mode
	AllGates       []Mode     `json:"allGates,omitempty"`
	NodeStatusGate []Mode     `json:"nodeStatusGate,omitempty"`
	Orders         [][]Config `json:"orders"`
}

func (r *Result) modes(c Config) *[]Mode {
	return map[Config]*[]Mode{Stock: &r.Stock, GateOff: &r.Off, GateOn: &r.On, AllGates: &r.AllGates, NodeStatusGate: &r.NodeStatusGate}[c]
}

// Add files m with the rounds of m.Config, one of Configs.
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

// Benchmark runs rounds of configs (stock only if stock) and writes the report.
func Benchmark(ctx context.Context, o Options, rounds int, configs []Config, stock bool) error {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	leftOut := func(c Config) bool { return !stock && c == Stock }
	r := Result{Cluster: o.Workload.cluster(), Configs: slices.DeleteFunc(slices.Clone(configs), leftOut)}
	estimate := Estimate(o)
	fmt.Printf("==> %d round(s) of %s: about %v\n", rounds, join(r.Configs, ", "), (time.Duration(rounds*len(r.Configs)) * estimate).Round(time.Minute))
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

// Estimate is roughly how long Run takes for one configuration.
func Estimate(o Options) time.Duration {
	return o.Settle + time.Duration(o.Windows)*o.Window + o.Workload.estimate(o)
}

// WriteReport writes r's report.md and charts into dir, and prints the report.
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

// WriteScale writes and prints dir/scale.md, of every pods-N/results.json.
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

// churnVerbosity is the kubelet's --v while pods churn: the pod workers'
// deletion lines and a remount's MountVolume.SetUp are V(4).
const churnVerbosity = 4

const iterationsMetric, passesMetric = "volume_manager_loop_iterations_total", "volume_manager_loop_passes_total"

var loops, passKinds = []string{"desired_state_of_world_populator", "reconciler"}, []string{"full", "partial", "skipped"}

type cpuSample struct {
	at                              time.Time
	kubelet, runtime, apiserver, cm time.Duration
}

func sampleCPU(n *node.Node, cl *cluster.Cluster) (cpuSample, error) {
	s := cpuSample{at: time.Now()}
	var err error
	if s.kubelet, err = n.KubeletCPU(); err != nil {
		return s, err
	}
	if s.runtime, err = n.RuntimeCPU(); err != nil || cl == nil {
		return s, err
	}
	s.apiserver, s.cm, err = cl.ControlPlaneCPU()
	return s, err
}

// paced calls f(0) to f(count-1), gap apart, and returns the CPU it took.
func paced(ctx context.Context, n *node.Node, count int, gap time.Duration, f func(i int) error) (*ChurnCPU, error) {
	s, err := sampleCPU(n, nil)
	if err != nil {
		return nil, err
	}
	for i := range count {
		if err := f(i); err != nil {
			return nil, err
		}
		if err := sleep(ctx, gap); err != nil {
			return nil, err
		}
	}
	e, err := sampleCPU(n, nil)
	return &ChurnCPU{Seconds: e.at.Sub(s.at).Seconds(), Kubelet: (e.kubelet - s.kubelet).Seconds(), Runtime: (e.runtime - s.runtime).Seconds()}, err
}

// Workload is what a benchmark runs on its node: Standalone or Cluster.
type Workload interface {
	cluster() bool // whether the node has a control plane
	configure(o Options, no *node.Options, m *Mode)
	// start starts the kubelet and, if the node has one, the control plane.
	start(ctx context.Context, n *node.Node) (*cluster.Cluster, error)
	addIdle(ctx context.Context, r *runState, name string) error
	window(r *runState, w int, s0, s1 cpuSample)
	measure(ctx context.Context, r *runState, idle []string, idleFrom, idleTo time.Time) error
	estimate(o Options) time.Duration
}

// Standalone runs a kubelet with static pods, exiting and crash-looping ones.
type Standalone struct{}

func (Standalone) cluster() bool                               { return false }
func (Standalone) configure(Options, *node.Options, *Mode)     {}
func (Standalone) window(*runState, int, cpuSample, cpuSample) {}
func (Standalone) start(ctx context.Context, n *node.Node) (*cluster.Cluster, error) {
	return nil, n.StartKubelet(ctx)
}
func (Standalone) addIdle(_ context.Context, r *runState, name string) error {
	return r.n.AddPod(name, node.PodManifest(name, r.n.HostPathDir(), nil))
}

// estimate: the start, the single pods, the exits' 20 s and crash loops' warm-up.
func (Standalone) estimate(o Options) time.Duration {
	d := 90*time.Second + time.Duration(2*o.Singles)*o.Gap
	if o.ExitPods > 0 {
		d += 20 * time.Second
	}
	if o.CrashLoopPods > 0 {
		d += 30*time.Second + o.CrashLoopWindow
	}
	return d
}

// Cluster runs a node with a control plane, the project's CSI driver and API pods.
type Cluster struct{}

func (Cluster) cluster() bool { return true }
func (Cluster) configure(o Options, no *node.Options, m *Mode) {
	m.Volumes, no.MaxPods = cluster.APIPodVolumes(false), max(o.Pods+o.Singles+10, node.DefaultMaxPods)
}
func (Cluster) start(ctx context.Context, n *node.Node) (*cluster.Cluster, error) {
	return cluster.Start(ctx, n)
}
func (Cluster) addIdle(ctx context.Context, r *runState, name string) error {
	_, err := r.cl.CreateAPIPod(ctx, cluster.APIPod{Name: name})
	return err
}
func (Cluster) window(r *runState, w int, s0, s1 cpuSample) {
	m := r.m
	m.APIServerCPU = append(m.APIServerCPU, (s1.apiserver - s0.apiserver).Seconds())
	m.ControllerManagerCPU = append(m.ControllerManagerCPU, (s1.cm - s0.cm).Seconds())
	r.o.Logf("idle window %d/%d: kube-apiserver %.2f, kube-controller-manager %.2f CPU-s", w, r.o.Windows, m.APIServerCPU[w-1], m.ControllerManagerCPU[w-1])
}

// estimate: the control plane, 180 s a config map wave, each kind's pods and 20 s.
func (Cluster) estimate(o Options) time.Duration {
	return 2*time.Minute + time.Duration(o.ConfigMapWaves)*(configMapSpread+90*time.Second) + time.Duration(len(ClusterPodKinds))*(time.Duration(2*o.Singles)*o.Gap+20*time.Second)
}

type runState struct {
	o  Options
	n  *node.Node
	cl *cluster.Cluster // nil on a standalone node
	m  *Mode
}

// Run measures one configuration on a fresh node.
func Run(ctx context.Context, o Options, c Config) (Mode, error) {
	m, no, kubelet, err := prepare(ctx, o, c)
	if err != nil {
		return m, err
	}
	n, err := node.Start(ctx, no)
	if err != nil {
		return m, err
	}
	defer func() {
		if err := n.Stop(); err != nil {
			o.Logf("stopping the node: %v", err)
		}
	}()
	// Each configuration's kubelet starts with none of its binary cached,
	// so that the file-backed part of its RSS is what it touches.
	if err := node.DropCachedPages(kubelet); err != nil {
		return m, fmt.Errorf("dropping %s from the page cache: %w", kubelet, err)
	}
	r := &runState{o: o, n: n, m: &m}
	if r.cl, err = o.Workload.start(ctx, n); err != nil {
		return m, err
	}
	idle, err := r.addIdle(ctx)
	if err != nil {
		return m, err
	}
	idleFrom := time.Now()
	if err := r.idleWindows(ctx); err != nil {
		return m, err
	}
	return m, o.Workload.measure(ctx, r, idle, idleFrom, time.Now())
}

// prepare returns c's mode, its node's options and its kubelet binary.
func prepare(ctx context.Context, o Options, c Config) (Mode, node.Options, string, error) {
	k := c.Kubelet(o.StockKubelet)
	m := Mode{Config: c, Kubelet: k, Runtime: o.Runtime.Label(), Pods: o.Pods, Volumes: node.VolumesPerPod, WindowSeconds: o.Window.Seconds(), GapSeconds: o.Gap.Seconds()}
	no := node.Options{Out: o.Out, Work: filepath.Join(o.Dir, c.WorkDir()), Kubelet: k, Runtime: o.Runtime,
		MaxPods: max(o.Pods+o.ExitPods+o.CrashLoopPods, node.DefaultMaxPods), Logf: o.Logf}
	o.Workload.configure(o, &no, &m)
	kubelet := k.Binary(o.Out)
	out, err := exec.CommandContext(ctx, kubelet, "--version").Output()
	if err != nil {
		return m, no, "", fmt.Errorf("%s --version: %w", kubelet, err)
	}
	m.KubeletVersion = strings.TrimSpace(string(out))
	o.Logf("%s: %s", c, m.KubeletVersion)
	return m, no, kubelet, nil
}

func (r *runState) addIdle(ctx context.Context) ([]string, error) {
	o := r.o
	o.Logf("adding %d pods x %d volumes at once", o.Pods, r.m.Volumes)
	start := time.Now()
	idle := make([]string, o.Pods)
	for i := range idle {
		idle[i] = fmt.Sprintf("w-%03d", i)
		if err := o.Workload.addIdle(ctx, r, idle[i]); err != nil {
			return nil, err
		}
	}
	timeout := cmp.Or(o.StartTimeout, node.PodsStartTimeout(o.Pods))
	if err := waitRunning(ctx, r.n, o.Pods, timeout); err != nil {
		return nil, fmt.Errorf("%w; on a loaded machine, raise -start-timeout", err)
	}
	r.m.StartupSeconds = time.Since(start).Seconds()
	o.Logf("all %d pods run after %.1fs; settling for %v", o.Pods, r.m.StartupSeconds, o.Settle)
	return idle, sleep(ctx, o.Settle)
}

// idleWindows profiles the kubelet across all windows, for the resolution (a
// sample is 10 ms of CPU); it costs the kubelet well under 1 % of its CPU.
func (r *runState) idleWindows(ctx context.Context) error {
	o, n, m := r.o, r.n, r.m
	itersBefore, passesBefore := loopCounts(ctx, n)
	idleLength := time.Duration(o.Windows) * o.Window
	o.Logf("profiling the kubelet through the idle windows (%v)", idleLength)
	var prof *profile.Profile
	profiled := make(chan error, 1)
	go func() {
		var err error
		prof, err = n.Profile(ctx, idleLength)
		profiled <- err
	}()
	for w := 1; w <= o.Windows; w++ {
		if err := r.idleWindow(ctx, w); err != nil {
			return err
		}
	}
	iters, passes := loopCounts(ctx, n)
	m.Iterations, m.Passes = minus(iters, itersBefore), minus(passes, passesBefore)
	if err := <-profiled; err != nil {
		return fmt.Errorf("profiling the kubelet: %w", err)
	}
	if err := saveProfile(o.Dir, m.Config, prof); err != nil {
		return err
	}
	share, err := node.ShareOf(prof, node.VolumeManagerPackage)
	if err != nil {
		return err
	}
	m.ProfileSeconds, m.ProfileCPUSeconds, m.VolumeManagerCPUSeconds, m.VolumeManagerTop = idleLength.Seconds(), share.Total.Seconds(), share.Matched.Seconds(), share.Top
	o.Logf("volume manager: %.1f%% of %.2f CPU-s sampled", 100*share.Fraction(), share.Total.Seconds())
	return nil
}

// saveProfile writes prof beside results.json as cpu-<config>-<n>.pb.gz, of
// the nth run of c, for `go tool pprof`.
func saveProfile(dir string, c Config, prof *profile.Profile) error {
	var buf bytes.Buffer
	if err := prof.Write(&buf); err != nil {
		return err
	}
	for n := 1; ; n++ {
		name := filepath.Join(dir, fmt.Sprintf("cpu-%s-%d.pb.gz", c.hyphenated(), n))
		if _, err := os.Stat(name); err != nil {
			return os.WriteFile(name, buf.Bytes(), 0o644)
		}
	}
}

func (r *runState) idleWindow(ctx context.Context, w int) error {
	o, n, m := r.o, r.n, r.m
	s0, err := sampleCPU(n, r.cl)
	if err != nil {
		return err
	}
	rss, anon, err := sampleRSS(ctx, n, o.Window)
	if err != nil {
		return err
	}
	m.KubeletRSSMiB, m.KubeletAnonMiB = append(m.KubeletRSSMiB, rss...), append(m.KubeletAnonMiB, anon...)
	s1, err := sampleCPU(n, r.cl)
	if err != nil {
		return err
	}
	m.KubeletCPU = append(m.KubeletCPU, (s1.kubelet - s0.kubelet).Seconds())
	m.RuntimeCPU = append(m.RuntimeCPU, (s1.runtime - s0.runtime).Seconds())
	// After the CPU read: the forced collection costs the kubelet CPU.
	heap, err := n.LiveHeap(ctx)
	if err != nil {
		return err
	}
	m.KubeletLiveHeapMiB = append(m.KubeletLiveHeapMiB, heap/(1<<20))
	o.Logf("idle window %d/%d: kubelet %.2f, %s %.2f CPU-s in %v; kubelet RSS median %.1f MiB (anonymous %.1f), live heap %.1f MiB",
		w, o.Windows, m.KubeletCPU[w-1], n.RuntimeProcessName(), m.RuntimeCPU[w-1], o.Window, bench.Median(rss), bench.Median(anon), heap/(1<<20))
	o.Workload.window(r, w, s0, s1)
	return nil
}

func (r *runState) readTriggers(ctx context.Context) {
	if metrics, err := r.n.Metrics(ctx); err == nil && metrics.Has(iterationsMetric) {
		r.m.Triggers = metrics.ByLabel(iterationsMetric, "trigger")
	}
}

// loopCounts reads the loops' iterations and passes; nil with the gate off.
func loopCounts(ctx context.Context, n *node.Node) (iterations, passes map[string]float64) {
	metrics, err := n.Metrics(ctx)
	if err != nil || !metrics.Has(iterationsMetric) {
		return nil, nil
	}
	iterations = metrics.ByLabel(iterationsMetric, "loop")
	if metrics.Has(passesMetric) {
		passes = map[string]float64{}
		for _, loop := range loops {
			for _, kind := range passKinds {
				passes[loop+"/"+kind] = metrics.Sum(passesMetric, "loop", loop, "kind", kind)
			}
		}
	}
	return iterations, passes
}

// minus is the counts of a less those of b, or nil without a.
func minus(a, b map[string]float64) map[string]float64 {
	if a == nil {
		return nil
	}
	out := map[string]float64{}
	for k, v := range a {
		out[k] = v - b[k]
	}
	return out
}

func (Standalone) measure(ctx context.Context, r *runState, idle []string, _, _ time.Time) error {
	o, m := r.o, r.m
	if err := runSingles(ctx, r.n, o, idle, m); err != nil {
		return err
	}
	// Before the exits: the triggers cover the stretch of the other figures.
	r.readTriggers(ctx)
	var err error
	if o.ExitPods > 0 {
		if m.ExitUnmount, m.ExitSteps, err = measureExits(ctx, r.n, o.ExitPods, o.ExitPoll, o.Logf); err != nil {
			return err
		}
		m.ExitPollSeconds = o.ExitPoll.Seconds()
	}
	if o.CrashLoopPods > 0 {
		m.CrashLoop, err = measureCrashLoop(ctx, r.n, o.CrashLoopPods, o.CrashLoopWindow, o.Logf)
	}
	return err
}

// runSingles deletes o.Singles idle pods one at a time, then adds as many.
func runSingles(ctx context.Context, n *node.Node, o Options, idle []string, m *Mode) error {
	logf := o.Logf
	count := min(o.Singles, o.Pods)
	if err := n.SetVerbosity(ctx, churnVerbosity); err != nil {
		return err
	}
	m.ChurnVerbosity = churnVerbosity
	s := singlePods{removed: idle[:count], removedAt: make([]time.Time, count), added: make([]string, count), addedAt: make([]time.Time, count)}
	var err error
	logf("deleting %d pods, %v apart, at --v=%d", count, o.Gap, churnVerbosity)
	if m.DeleteCPU, err = paced(ctx, n, count, o.Gap, func(i int) error {
		s.removedAt[i] = time.Now()
		return n.RemovePod(s.removed[i])
	}); err != nil {
		return err
	}
	logf("deleting: kubelet %.2f CPU-s, %s %.2f CPU-s in %.0fs", m.DeleteCPU.Kubelet, n.RuntimeProcessName(), m.DeleteCPU.Runtime, m.DeleteCPU.Seconds)
	logf("adding %d pods, %v apart", count, o.Gap)
	if m.AddCPU, err = paced(ctx, n, count, o.Gap, func(i int) error {
		s.added[i], s.addedAt[i] = fmt.Sprintf("s-%03d", i), time.Now()
		return n.AddPod(s.added[i], node.PodManifest(s.added[i], n.HostPathDir(), nil))
	}); err != nil {
		return err
	}
	logf("adding: kubelet %.2f CPU-s, %s %.2f CPU-s in %.0fs", m.AddCPU.Kubelet, n.RuntimeProcessName(), m.AddCPU.Runtime, m.AddCPU.Seconds)
	if err := waitRunning(ctx, n, o.Pods, 5*time.Minute); err != nil {
		return err
	}
	if err := s.waitLogged(ctx, n, 5*time.Minute); err != nil {
		return err
	}
	if err := n.SetVerbosity(ctx, node.DefaultVerbosity); err != nil {
		return err
	}
	if err := s.waits(n, idle, m); err != nil {
		return err
	}
	whole, err := s.deletionPhases(n, m)
	if err != nil {
		return err
	}
	logf("deletion timelines: %d of %d pods have every phase", whole, count)
	if len(m.Mount) < count || len(m.Unmount) < count {
		return fmt.Errorf("the kubelet log has %d of %d mount waits and %d of %d unmount waits (it must run at --v=3)",
			len(m.Mount), count, len(m.Unmount), count)
	}
	return nil
}

type singlePods struct {
	removed, added     []string
	removedAt, addedAt []time.Time
}

// waitLogged waits until the kubelet log has every added pod's mount wait and
// every removed pod's unmount wait, or timeout passes (waits then says what is
// missing): on a loaded node a deleted pod's container may still run when the
// added pods' do, so the count of running containers does not say they ended.
func (s singlePods) waitLogged(ctx context.Context, n *node.Node, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 5*time.Second, timeout, true, func(context.Context) (bool, error) {
		waits, err := kubeletlog.ParseFile(n.KubeletLog(), kubeletlog.ParseVolumeWaits)
		if err != nil {
			return false, err
		}
		for i := range s.added {
			_, mounted := waits.Mount["default/"+n.PodName(s.added[i])]
			_, unmounted := waits.Unmount["default/"+n.PodName(s.removed[i])]
			if !mounted || !unmounted {
				return false, nil
			}
		}
		return true, nil
	})
	if wait.Interrupted(err) && ctx.Err() == nil {
		return nil
	}
	return err
}

func (s singlePods) waits(n *node.Node, idle []string, m *Mode) error {
	waits, err := kubeletlog.ParseFile(n.KubeletLog(), kubeletlog.ParseVolumeWaits)
	if err != nil {
		return err
	}
	key := func(name string) string { return "default/" + n.PodName(name) }
	for i, name := range idle {
		if d, ok := waits.Mount[key(name)]; ok {
			m.BurstMount = append(m.BurstMount, d.Seconds())
		}
		if d, ok := waits.Unmount[key(name)]; ok && i < len(s.removed) {
			m.Unmount = append(m.Unmount, d.Seconds())
			m.UnmountEndToEnd = append(m.UnmountEndToEnd, waits.UnmountedAt[key(name)].Sub(s.removedAt[i]).Seconds())
		}
	}
	for i, name := range s.added {
		if d, ok := waits.Mount[key(name)]; ok {
			m.Mount = append(m.Mount, d.Seconds())
			m.MountEndToEnd = append(m.MountEndToEnd, waits.MountedAt[key(name)].Sub(s.addedAt[i]).Seconds())
			if d, ok := waits.LastSetUp[key(name)]; ok {
				m.SetUpToMounted = append(m.SetUpToMounted, d.Seconds())
			}
		}
	}
	return nil
}

func (s singlePods) deletionPhases(n *node.Node, m *Mode) (int, error) {
	timelines, err := kubeletlog.ParseFile(n.KubeletLog(), kubeletlog.ParseDeletionTimeline)
	if err != nil {
		return 0, err
	}
	whole := 0
	m.DeletionPhases = map[string][]float64{}
	for i, name := range s.removed {
		t, ok := timelines["default/"+n.PodName(name)]
		if !ok {
			continue
		}
		phases := 0
		for _, p := range kubeletlog.DeletionPhases() {
			if t.Has(p) {
				m.DeletionPhases[p.Key()] = append(m.DeletionPhases[p.Key()], t.At[p].Sub(s.removedAt[i]).Seconds())
				phases++
			}
		}
		if phases == kubeletlog.NumDeletionPhases {
			whole++
		}
		if d, ok := t.Between(kubeletlog.TerminationComplete, kubeletlog.TearDownDone); ok {
			m.TerminatedToTearDown = append(m.TerminatedToTearDown, d.Seconds())
		}
		if d, ok := t.Between(kubeletlog.TerminationComplete, kubeletlog.SyncTerminatedEnter); ok {
			m.TerminatedToSyncTerminated = append(m.TerminatedToSyncTerminated, d.Seconds())
		}
	}
	return whole, nil
}

func (Cluster) measure(ctx context.Context, r *runState, idle []string, idleFrom, idleTo time.Time) error {
	o, n, cl, m := r.o, r.n, r.cl, r.m
	if min(o.ConfigMaps, len(idle)) > 0 && o.ConfigMapWaves > 0 {
		if err := r.configMapWaves(ctx, idle); err != nil {
			return err
		}
	}
	m.Kinds = map[string]*KindTimes{}
	var churnFrom time.Time // the CSI kinds come last
	for _, kind := range ClusterPodKinds {
		if kind.CSI && churnFrom.IsZero() {
			churnFrom = time.Now()
		}
		t, err := churn(ctx, n, cl, o, kind)
		if err != nil {
			return err
		}
		m.Kinds[kind.Key] = t
	}
	reqs, err := cl.KubeletAPIRequests()
	if err != nil {
		return fmt.Errorf("the API server's audit log: %w", err)
	}
	m.APIRequests = map[string]cluster.APIRequests{}
	for phase, w := range map[string][2]time.Time{PhaseIdle: {idleFrom, idleTo}, PhaseChurn: {churnFrom, time.Now()}} {
		m.APIRequests[phase] = cluster.CountAPIRequests(reqs, w[0], w[1])
		o.Logf("the kubelet's API requests, %s: %s in %.0f s", phase, formatCounts(m.APIRequests[phase].Count), w[1].Sub(w[0]).Seconds())
	}
	r.readTriggers(ctx)
	return nil
}

func (r *runState) configMapWaves(ctx context.Context, idle []string) error {
	o, n, m := r.o, r.n, r.m
	if err := n.SetVerbosity(ctx, churnVerbosity); err != nil {
		return err
	}
	from := time.Now()
	for range o.ConfigMapWaves {
		if err := configMapWave(ctx, n, r.cl, o, idle, m); err != nil {
			return err
		}
	}
	// The last syncs' remounts may be logged after the verbosity is back.
	to := time.Now().Add(-5 * time.Second)
	if err := n.SetVerbosity(ctx, node.DefaultVerbosity); err != nil {
		return err
	}
	remounts, err := kubeletlog.ParseFile(n.KubeletLog(), func(r io.Reader) (ds []time.Duration, err error) {
		ds, m.RemountMissed, err = kubeletlog.ParseRemounts(r, from, to)
		return ds, err
	})
	if err != nil {
		return err
	}
	for _, d := range remounts {
		m.Remount = append(m.Remount, d.Seconds())
	}
	o.Logf("pod sync → volumes remounted: p50 %.1f ms, p99 %.1f ms over %d syncs, %d with no remount logged",
		1000*bench.Quantile(m.Remount, 0.5), 1000*bench.Quantile(m.Remount, 0.99), len(m.Remount), m.RemountMissed)
	return nil
}

func churn(ctx context.Context, n *node.Node, cl *cluster.Cluster, o Options, kind PodKind) (*KindTimes, error) {
	names := make([]string, o.Singles)
	created, deleted := make([]time.Time, o.Singles), make([]time.Time, o.Singles)
	o.Logf("adding %d %s pods, %v apart", o.Singles, kind.Key, o.Gap)
	if _, err := paced(ctx, n, o.Singles, o.Gap, func(i int) (err error) {
		names[i] = fmt.Sprintf("%s-%03d", kind.Key, i)
		p := cluster.APIPod{Name: names[i], CSI: kind.CSI}
		if kind.CSI {
			p.AttachDelay = &kind.AttachDelay
		}
		// Its claim was bound before, as a scheduler would wait for.
		created[i], err = cl.CreateAPIPod(ctx, p)
		return err
	}); err != nil {
		return nil, err
	}
	if err := waitRunning(ctx, n, o.Pods+o.Singles, 5*time.Minute); err != nil {
		return nil, err
	}
	o.Logf("deleting the %d %s pods, %v apart", o.Singles, kind.Key, o.Gap)
	if _, err := paced(ctx, n, o.Singles, o.Gap, func(i int) error {
		deleted[i] = time.Now()
		return cl.DeleteAPIPod(ctx, names[i])
	}); err != nil {
		return nil, err
	}
	waits, err := waitGone(ctx, n, cl, kind, names)
	if err != nil {
		return nil, err
	}
	t := kindTimes(cl, kind, names, created, deleted, waits)
	o.Logf("%s pods: mount wait p50 %.1f ms, created → mounted p50 %.1f ms, deleted → unmounted p50 %.0f ms (%d/%d/%d samples)",
		kind.Key, 1000*bench.Median(t.Mount), 1000*bench.Median(t.MountEndToEnd), 1000*bench.Median(t.UnmountEndToEnd),
		len(t.Mount), len(t.MountEndToEnd), len(t.UnmountEndToEnd))
	if len(t.Mount) < len(names) || len(t.UnmountEndToEnd) < len(names) {
		return nil, fmt.Errorf("the kubelet log has %d of %d mount waits and %d of %d unmount waits of the %s pods (it must run at --v=3)",
			len(t.Mount), len(names), len(t.UnmountEndToEnd), len(names), kind.Key)
	}
	return t, nil
}

// waitGone waits until the pods are gone, unmounted and detached: a pod may be
// gone before its worker's last sync logs its unmount.
func waitGone(ctx context.Context, n *node.Node, cl *cluster.Cluster, kind PodKind, names []string) (kubeletlog.VolumeWaits, error) {
	for deadline := time.Now().Add(3 * time.Minute); ; {
		waits, err := kubeletlog.ParseFile(n.KubeletLog(), kubeletlog.ParseVolumeWaits)
		if err != nil {
			return waits, err
		}
		left := 0
		for _, name := range names {
			gone, err := cl.APIPodGone(ctx, name)
			if err != nil {
				return waits, err
			}
			_, unmounted := waits.UnmountedAt[cluster.APIPodNamespace+"/"+name]
			if !gone || !unmounted || (kind.CSI && cl.Attacher().Times(cluster.PVName(name)).Detached.IsZero()) {
				left++
			}
		}
		if left == 0 {
			return waits, nil
		}
		if time.Now().After(deadline) {
			return waits, fmt.Errorf("%d of %d %s pods are not gone, unmounted or detached 3 minutes after their deletion; see %s",
				left, len(names), kind.Key, n.KubeletLog())
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return waits, err
		}
	}
}

func kindTimes(cl *cluster.Cluster, kind PodKind, names []string, created, deleted []time.Time, waits kubeletlog.VolumeWaits) *KindTimes {
	t := &KindTimes{}
	for i, name := range names {
		key := cluster.APIPodNamespace + "/" + name
		var attach cluster.VolumeTimes // zero for pods without a CSI volume
		if kind.CSI {
			attach = cl.Attacher().Times(cluster.PVName(name))
		}
		if d, ok := waits.Mount[key]; ok {
			mounted := waits.MountedAt[key]
			t.Mount = append(t.Mount, d.Seconds())
			t.MountEndToEnd = append(t.MountEndToEnd, mounted.Sub(created[i]).Seconds())
			if d, ok := waits.LastSetUp[key]; ok {
				t.SetUpToMounted = append(t.SetUpToMounted, d.Seconds())
			}
			if !attach.Attached.IsZero() {
				t.AttachedToMounted = append(t.AttachedToMounted, mounted.Sub(attach.Attached).Seconds())
			}
			if !attach.Listed.IsZero() {
				t.ListedToMounted = append(t.ListedToMounted, mounted.Sub(attach.Listed).Seconds())
			}
		}
		if at, ok := waits.UnmountedAt[key]; ok {
			t.UnmountEndToEnd = append(t.UnmountEndToEnd, at.Sub(deleted[i]).Seconds())
		}
		if !attach.Detached.IsZero() {
			t.DetachEndToEnd = append(t.DetachEndToEnd, attach.Detached.Sub(deleted[i]).Seconds())
		}
	}
	return t
}

// configMapSpread is how long a wave's updates are spread over, evenly: the
// longest of the kubelet's pod resync periods (60 s, with up to 50 % jitter).
// A pod's file changes at the pod's next sync, and pods started together
// resync together: updates made at once would sample one phase of their
// resync, so that each round's figure would depend on when its wave came.
const configMapSpread = 90 * time.Second

func configMapWave(ctx context.Context, n *node.Node, cl *cluster.Cluster, o Options, idle []string, m *Mode) error {
	count := min(o.ConfigMaps, len(idle))
	files := make([]string, count)
	for i := range count {
		uid, err := cl.APIPodUID(ctx, idle[i])
		if err != nil {
			return err
		}
		files[i] = cl.ConfigMapFile(uid)
	}
	value := fmt.Sprintf("v-%d", time.Now().UnixNano())
	o.Logf("updating %d config maps over %v; waiting up to %v for each pod's file", count, configMapSpread, o.ConfigMapTimeout)
	updated, seen, missed := make([]time.Time, count), make([]time.Time, count), make([]bool, count)
	start, next := time.Now(), 0
	for left := count; left > 0; {
		for ; next < count && !time.Now().Before(start.Add(configMapSpread*time.Duration(next)/time.Duration(count))); next++ {
			updated[next] = time.Now()
			if err := cl.UpdateConfigMap(ctx, idle[next], value); err != nil {
				return err
			}
		}
		for i := range next {
			if !seen[i].IsZero() || missed[i] {
				continue
			}
			if data, err := os.ReadFile(files[i]); err == nil && strings.TrimSpace(string(data)) == value {
				seen[i] = time.Now()
				left--
			} else if time.Since(updated[i]) > o.ConfigMapTimeout {
				missed[i] = true
				left--
			}
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	for i := range count {
		if missed[i] {
			m.ConfigMapUpdateMissed++
		} else {
			m.ConfigMapUpdate = append(m.ConfigMapUpdate, seen[i].Sub(updated[i]).Seconds())
		}
	}
	o.Logf("config map → file: p50 %.1f s over %d updates so far, %d not within %v", bench.Median(m.ConfigMapUpdate), len(m.ConfigMapUpdate),
		m.ConfigMapUpdateMissed, o.ConfigMapTimeout)
	return nil
}

// The exiting pods' containers sleep from exitMin to exitMax, spread evenly
// so that their exits do not coincide, within exitTimeout.
const exitMin, exitMax, exitTimeout = 3 * time.Second, 8 * time.Second, 3 * time.Minute

func exitAfter(i, n int) time.Duration {
	if n < 2 {
		return exitMin
	}
	return exitMin + (exitMax-exitMin)*time.Duration(i)/time.Duration(n-1)
}

// measureExits times exiting pods from finishedAt to their volumes unmounted.
func measureExits(ctx context.Context, n *node.Node, count int, poll time.Duration, logf func(string, ...any)) ([]float64, map[string][]float64, error) {
	logf("adding %d pods with restartPolicy Never whose container exits on its own after %v to %v, at --v=%d", count, exitMin, exitMax, churnVerbosity)
	if err := n.SetVerbosity(ctx, churnVerbosity); err != nil {
		return nil, nil, err
	}
	latencies, exited, err := exitLatencies(ctx, n, count, poll)
	if err != nil {
		return nil, nil, err
	}
	if err := n.SetVerbosity(ctx, node.DefaultVerbosity); err != nil {
		return nil, nil, err
	}
	logf("container exited → volumes unmounted: p50 %.0f ms, p99 %.0f ms over %d pods (mountinfo every %v)",
		1000*bench.Quantile(latencies, 0.5), 1000*bench.Quantile(latencies, 0.99), len(latencies), poll)
	steps, err := exitSteps(n, exited)
	return latencies, steps, err
}

func exitLatencies(ctx context.Context, n *node.Node, count int, poll time.Duration) ([]float64, map[string]container, error) {
	names := map[string]bool{}
	for i := range count {
		name := fmt.Sprintf("x-%03d", i)
		names[n.PodName(name)] = true
		if err := n.AddPod(name, node.ExitingPodManifest(name, n.HostPathDir(), exitAfter(i, count))); err != nil {
			return nil, nil, err
		}
	}
	podsDir := filepath.Join(n.KubeletRoot(), "pods")
	uids := map[string]bool{}      // the exiting pods', from the kubelet's /pods
	seen := map[string]bool{}      // UIDs seen with a mount
	gone := map[string]time.Time{} // when a seen UID's last mount was found gone
	// The kubelet may remove a terminal pod's container soon after its
	// volumes are unmounted: the runtime is asked while the pods exit.
	exited := map[string]container{}
	deadline := time.Now().Add(exitTimeout)
	var listed time.Time
	for len(gone) < count {
		if (len(uids) < count || len(exited) < count) && time.Since(listed) >= 200*time.Millisecond {
			listed = time.Now()
			pods, err := n.Pods(ctx)
			if err != nil {
				return nil, nil, err
			}
			for _, p := range pods {
				if names[p.Name] {
					uids[p.UID] = true
				}
			}
			if err := inspectExits(ctx, n, exited); err != nil {
				return nil, nil, err
			}
		}
		at := time.Now()
		ids, err := node.MountIDs(podsDir)
		if err != nil {
			return nil, nil, err
		}
		mounted := mountedPods(maps.Keys(ids), podsDir)
		for uid := range uids {
			if _, done := gone[uid]; done {
				continue
			}
			if mounted[uid] {
				seen[uid] = true
			} else if seen[uid] {
				gone[uid] = at
			}
		}
		if time.Now().After(deadline) {
			return nil, nil, fmt.Errorf("after %v, %d of %d exiting pods had their volumes unmounted (%d known to the kubelet, %d seen mounted); see %s",
				exitTimeout, len(gone), count, len(uids), len(seen), n.KubeletLog())
		}
		if err := sleep(ctx, poll); err != nil {
			return nil, nil, err
		}
	}
	if err := inspectExits(ctx, n, exited); err != nil {
		return nil, nil, err
	}
	var latencies []float64
	for _, e := range exited {
		at, ok := gone[e.podUID()]
		if !ok {
			continue
		}
		if e.Status.State != "CONTAINER_EXITED" || e.Status.ExitCode != 0 {
			return nil, nil, fmt.Errorf("pod %s's container is %s with exit code %d, want CONTAINER_EXITED with 0", e.podUID(), e.Status.State, e.Status.ExitCode)
		}
		latencies = append(latencies, at.Sub(e.Status.FinishedAt).Seconds())
	}
	if len(latencies) < count {
		return nil, nil, fmt.Errorf("the runtime reported %d of %d exiting pods' containers exited", len(latencies), count)
	}
	return latencies, exited, nil
}

// ExitStep is a stretch of an exiting pod's way to its last TearDown, between
// log lines From and To (containerExit: the runtime's finishedAt).
type ExitStep struct {
	Key, Name string
	From, To  kubeletlog.ExitPhase
}

const containerExit kubeletlog.ExitPhase = -1

// ExitSteps are the steps the report shows. The event and the relist overlap:
// with EventedPLEG the relist follows the event, without it polls find the exit.
var ExitSteps = []ExitStep{
	{"exitToEvent", "exit → runtime's event seen (the runtime's part)", containerExit, kubeletlog.ExitEventSeen},
	{"exitToRelist", "exit → a relist sees it", containerExit, kubeletlog.ExitRelisted},
	{"relistToTerminal", "relist → pod found terminal (SyncPod)", kubeletlog.ExitRelisted, kubeletlog.ExitPodTerminal},
	{"terminalToTerminating", "pod terminal → SyncTerminatingPod (waits for a newer status)", kubeletlog.ExitPodTerminal, kubeletlog.ExitTerminatingEnter},
	{"terminatingToTerminated", "SyncTerminatingPod → termination complete (stops the sandbox)", kubeletlog.ExitTerminatingEnter, kubeletlog.ExitTerminated},
	{"terminatedToTearDown", "termination complete → last TearDown", kubeletlog.ExitTerminated, kubeletlog.ExitTearDownDone},
}

func exitSteps(n *node.Node, exited map[string]container) (map[string][]float64, error) {
	timelines, err := kubeletlog.ParseFile(n.KubeletLog(), kubeletlog.ParseExitTimelines)
	if err != nil {
		return nil, err
	}
	steps := map[string][]float64{}
	for _, c := range exited {
		t, ok := timelines[c.podUID()]
		if !ok {
			continue
		}
		for _, s := range ExitSteps {
			from := c.Status.FinishedAt
			if s.From != containerExit {
				from = t.At[s.From]
			}
			if from.IsZero() || !t.Has(s.To) {
				continue
			}
			steps[s.Key] = append(steps[s.Key], t.At[s.To].Sub(from).Seconds())
		}
	}
	return steps, nil
}

// CrashLoopCost is what Pods crash-looping cost over WindowSeconds.
type CrashLoopCost struct {
	Pods          int     `json:"pods"`
	WindowSeconds float64 `json:"windowSeconds"`
	Restarts      float64 `json:"restarts"`
	PodRelists    float64 `json:"podRelists"`
	KubeletCPU    float64 `json:"kubeletCPU"`
}

const crashLoopAfter = 2 * time.Second

// measureCrashLoop measures what crash-looping pods cost: the watcher requests
// a relist on every container stop, not only on those that end a pod.
func measureCrashLoop(ctx context.Context, n *node.Node, pods int, window time.Duration, logf func(string, ...any)) (*CrashLoopCost, error) {
	logf("adding %d crash-looping pods (a container that exits 1 after %v, restartPolicy Always); measuring %v", pods, crashLoopAfter, window)
	for i := range pods {
		name := fmt.Sprintf("crash-%03d", i)
		if err := n.AddPod(name, node.CrashLoopPodManifest(name, n.HostPathDir(), crashLoopAfter)); err != nil {
			return nil, err
		}
	}
	// The first start and crash of each, then the back-off's first steps.
	if err := sleep(ctx, 30*time.Second); err != nil {
		return nil, err
	}
	var before, after node.Metrics
	s, err := paced(ctx, n, 1, window, func(int) (err error) {
		before, err = n.Metrics(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	if after, err = n.Metrics(ctx); err != nil {
		return nil, err
	}
	const started, relists = "kubelet_started_containers_total", "kubelet_pleg_pod_relist_duration_seconds"
	cost := &CrashLoopCost{Pods: pods, WindowSeconds: s.Seconds, Restarts: after.Sum(started) - before.Sum(started),
		PodRelists: after.Sum(relists) - before.Sum(relists), KubeletCPU: s.Kubelet}
	logf("crash loop: %v containers started, %v single-pod relists, kubelet %.2f CPU-s in %.0f s",
		cost.Restarts, cost.PodRelists, cost.KubeletCPU, cost.WindowSeconds)
	return cost, nil
}

// mountedPods are the UIDs of the pods with a mount under podsDir/<uid>/volumes.
func mountedPods(mounts iter.Seq[string], podsDir string) map[string]bool {
	pods := map[string]bool{}
	for m := range mounts {
		rest, ok := strings.CutPrefix(m, strings.TrimSuffix(podsDir, "/")+"/")
		if !ok {
			continue
		}
		if uid, sub, _ := strings.Cut(rest, "/"); sub == "volumes" || strings.HasPrefix(sub, "volumes/") {
			pods[uid] = true
		}
	}
	return pods
}

// container is as crictl inspect --output json reports it.
type container struct {
	Status struct {
		State      string            `json:"state"`
		ExitCode   int32             `json:"exitCode"`
		FinishedAt time.Time         `json:"finishedAt"`
		Labels     map[string]string `json:"labels"`
	} `json:"status"`
}

func (c container) podUID() string { return c.Status.Labels["io.kubernetes.pod.uid"] }
func inspectExits(ctx context.Context, n *node.Node, exited map[string]container) error {
	ids, err := n.Crictl(ctx, "ps", "--all", "--quiet", "--name", "^"+node.ExitContainer+"$")
	if err != nil || strings.TrimSpace(ids) == "" {
		return err
	}
	out, err := n.Crictl(ctx, append([]string{"inspect", "--output", "json"}, strings.Fields(ids)...)...)
	if err != nil {
		// A container removed since ps: the next poll asks again.
		return ctx.Err()
	}
	cs, err := parseInspect([]byte(out))
	if err != nil {
		return err
	}
	for _, c := range cs {
		if c.Status.State == "CONTAINER_EXITED" {
			exited[c.podUID()] = c
		}
	}
	return nil
}

func parseInspect(out []byte) ([]container, error) {
	var list []container
	out = bytes.TrimSpace(out)
	if len(out) > 0 && out[0] == '{' {
		out = append(append([]byte{'['}, out...), ']')
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("crictl inspect: %w", err)
	}
	return list, nil
}

// waitRunning waits until want containers named bb run.
func waitRunning(ctx context.Context, n *node.Node, want int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		out, err := n.Crictl(ctx, "ps", "--quiet", "--state", "running", "--name", "^bb$")
		got := len(strings.Fields(out))
		if err == nil && got >= want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d containers run after %v (last error: %v); see %s", got, want, timeout, err, n.KubeletLog())
		}
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
	}
}

const memorySampleEvery = 5 * time.Second

// sampleRSS reads the kubelet's RSS from /proc, which costs it nothing.
func sampleRSS(ctx context.Context, n *node.Node, d time.Duration) (rss, anon []float64, err error) {
	for end := time.Now().Add(d); ; {
		left := time.Until(end)
		if err := sleep(ctx, min(left, memorySampleEvery)); err != nil {
			return nil, nil, err
		}
		r, a, err := node.ProcessRSS(n.KubeletPID())
		if err != nil {
			return nil, nil, err
		}
		rss, anon = append(rss, float64(r)/(1<<20)), append(anon, float64(a)/(1<<20))
		if left <= memorySampleEvery {
			return rss, anon, nil
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
