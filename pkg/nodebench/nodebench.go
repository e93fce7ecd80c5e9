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

// Package nodebench is the real-node side-by-side benchmark (make
// node-bench): the same workload of static pods on a container runtime and
// three kubelets: upstream's (stock, built from the release's tag without the
// series) and the patched kubelet with the EventedVolumeManager gate off and
// on. It
// measures idle kubelet CPU from /proc, the volume manager's share of it
// from a pprof profile, the loops' iterations, the volume manager's mount
// and unmount waits from the kubelet's own log lines, the single pods'
// deletion phase by phase, the CPU that deleting and adding them costs, and
// the time from a container exiting on its own to its pod's volumes
// unmounted.
package nodebench

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"evented-volume-manager/pkg/bench"
	"evented-volume-manager/pkg/node"
)

// Options configure a benchmark run.
type Options struct {
	// Out is the project's build output, _output.
	Out string
	// Dir receives the per-mode work directories.
	Dir string
	// Pods is how many static pods run, each with node.VolumesPerPod volumes.
	Pods int
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
	// Singles is how many pods are deleted, one at a time, and then added,
	// one at a time, Gap apart, to time unmount and mount waits.
	Singles int
	Gap     time.Duration
	// ExitPods is how many pods with restartPolicy Never whose container
	// exits on its own are added at the end, to time their volumes'
	// unmount from the container's exit; ExitPoll is how often
	// /proc/self/mountinfo is read meanwhile. Zero ExitPods adds none.
	ExitPods int
	ExitPoll time.Duration
	// StockKubelet is upstream's kubelet, built without the series, that
	// the Stock configuration runs.
	StockKubelet string
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

// Mode is one configuration's measurements in one round.
type Mode struct {
	Gate bool `json:"gate"`
	// Stock marks upstream's kubelet, built without the series (Gate is
	// then false); results from before the stock configuration have none.
	Stock bool `json:"stock,omitempty"`
	// KubeletVersion is the kubelet's --version; empty in results from
	// before it was recorded.
	KubeletVersion string `json:"kubeletVersion,omitempty"`
	// Runtime names the container runtime (node.Options.RuntimeLabel);
	// empty in results from before CRI-O, which ran containerd.
	Runtime string `json:"runtime,omitempty"`
	Pods    int    `json:"pods"`
	Volumes int    `json:"volumes"`
	// StartupSeconds is how long the pods took to run, all added at once.
	StartupSeconds float64 `json:"startupSeconds"`
	// WindowSeconds is the length of each idle window.
	WindowSeconds float64 `json:"windowSeconds"`
	// KubeletCPU and RuntimeCPU (the container runtime's daemon) are
	// CPU-seconds per idle window. LegacyContainerdCPU is RuntimeCPU in
	// results from before CRI-O; Load moves it.
	KubeletCPU          []float64 `json:"kubeletCPU"`
	RuntimeCPU          []float64 `json:"runtimeCPU"`
	LegacyContainerdCPU []float64 `json:"containerdCPU,omitempty"`
	// ProfileSeconds is the profile's length; ProfileCPUSeconds is the
	// kubelet CPU it sampled, and VolumeManagerCPUSeconds the part with the
	// volume manager on the stack.
	ProfileSeconds          float64            `json:"profileSeconds"`
	ProfileCPUSeconds       float64            `json:"profileCPUSeconds"`
	VolumeManagerCPUSeconds float64            `json:"volumeManagerCPUSeconds"`
	VolumeManagerTop        []node.FunctionCPU `json:"volumeManagerTop"`
	// Iterations counts the loops' iterations over the idle windows, by
	// loop; a kubelet with the gate off has no such counter.
	Iterations map[string]float64 `json:"iterations,omitempty"`
	// Passes counts the loops' passes over the idle windows by loop and
	// kind (full, partial, skipped), keyed "loop/kind"; kubelets from
	// before the passes metric have none.
	Passes map[string]float64 `json:"passes,omitempty"`
	// MissedSignals counts, by loop, the timer-started passes over the
	// whole run that started work no signal announced.
	MissedSignals map[string]float64 `json:"missedSignals,omitempty"`
	// Triggers counts the iterations over the whole run by trigger.
	Triggers map[string]float64 `json:"triggers,omitempty"`
	// BurstMount are the mount waits of the pods added at once; Mount and
	// Unmount those of the single pods, in seconds.
	BurstMount []float64 `json:"burstMount"`
	Mount      []float64 `json:"mount"`
	Unmount    []float64 `json:"unmount"`
	// MountEndToEnd and UnmountEndToEnd time the single pods from their
	// manifest written or removed to the end of their wait, in seconds.
	MountEndToEnd   []float64 `json:"mountEndToEnd"`
	UnmountEndToEnd []float64 `json:"unmountEndToEnd"`
	GapSeconds      float64   `json:"gapSeconds"`
	// ChurnVerbosity is the kubelet's --v while the single pods are deleted
	// and added; zero in results from before it was raised.
	ChurnVerbosity int `json:"churnVerbosity,omitempty"`
	// DeletionPhases time the single pods' deletion phase by phase: by
	// node.DeletionPhase Key, the seconds from each pod's manifest removed
	// to the kubelet's line of the phase. A pod whose log lacks the line is
	// left out of that phase.
	DeletionPhases map[string][]float64 `json:"deletionPhases,omitempty"`
	// TerminatedToTearDown and TerminatedToSyncTerminated time, for each
	// single pod whose log has both lines, its termination complete to its
	// last TearDown and to SyncTerminatedPod enter, in seconds.
	TerminatedToTearDown       []float64 `json:"terminatedToTearDown,omitempty"`
	TerminatedToSyncTerminated []float64 `json:"terminatedToSyncTerminated,omitempty"`
	// ExitUnmount times the pods with restartPolicy Never whose container
	// exits on its own: for each, the seconds from its container's
	// finishedAt (the runtime's) to /proc/self/mountinfo, read every
	// ExitPollSeconds, showing no mount left under the pod's volumes
	// directory. Results from before it have none.
	ExitUnmount     []float64 `json:"exitUnmount,omitempty"`
	ExitPollSeconds float64   `json:"exitPollSeconds,omitempty"`
	// DeleteCPU and AddCPU are the CPU spent while the single pods are
	// deleted and while they are added.
	DeleteCPU *ChurnCPU `json:"deleteCPU,omitempty"`
	AddCPU    *ChurnCPU `json:"addCPU,omitempty"`
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

// ChurnCPU is the CPU spent over a stretch of pod churn.
type ChurnCPU struct {
	// Seconds is the stretch's length.
	Seconds float64 `json:"seconds"`
	// Kubelet and Runtime (the container runtime's daemon) are the
	// processes' CPU-seconds in it. LegacyContainerd is Runtime in results
	// from before CRI-O; Load moves it.
	Kubelet          float64 `json:"kubelet"`
	Runtime          float64 `json:"runtime"`
	LegacyContainerd float64 `json:"containerd,omitempty"`
}

// churnVerbosity is the kubelet's --v while the single pods are deleted and
// added: the pod workers' deletion lines are V(4).
const churnVerbosity = 4

// cpuSample is the kubelet's and the runtime's CPU so far.
type cpuSample struct {
	at               time.Time
	kubelet, runtime time.Duration
}

func sampleCPU(n *node.Node) (cpuSample, error) {
	s := cpuSample{at: time.Now()}
	var err error
	if s.kubelet, err = n.KubeletCPU(); err != nil {
		return s, err
	}
	s.runtime, err = n.RuntimeCPU()
	return s, err
}

// until is the CPU from s to e.
func (s cpuSample) until(e cpuSample) ChurnCPU {
	return ChurnCPU{
		Seconds: e.at.Sub(s.at).Seconds(),
		Kubelet: (e.kubelet - s.kubelet).Seconds(),
		Runtime: (e.runtime - s.runtime).Seconds(),
	}
}

// Run measures one configuration.
func Run(ctx context.Context, o Options, c Config) (Mode, error) {
	logf := o.Logf
	m := Mode{Gate: c.Gate(), Stock: c == Stock, Pods: o.Pods, Volumes: node.VolumesPerPod, WindowSeconds: o.Window.Seconds(), GapSeconds: o.Gap.Seconds()}
	no := node.Options{
		Out:          o.Out,
		Work:         filepath.Join(o.Dir, c.WorkDir()),
		Gate:         c.Gate(),
		Runtime:      o.Runtime,
		PodEventsOff: o.PodEventsOff,
		MaxPods:      max(o.Pods+o.ExitPods, node.DefaultMaxPods),
		Logf:         logf,
	}
	kubelet := node.KubeletBinary(o.Out)
	if c == Stock {
		if o.StockKubelet == "" {
			return m, fmt.Errorf("no stock kubelet to run (Options.StockKubelet)")
		}
		no.Kubelet, no.StockKubelet, kubelet = o.StockKubelet, true, o.StockKubelet
	}
	m.Runtime = no.RuntimeLabel()
	version, err := kubeletVersion(ctx, kubelet)
	if err != nil {
		return m, err
	}
	m.KubeletVersion = version
	logf("%s: %s", c, version)
	n, err := node.Start(ctx, no)
	if err != nil {
		return m, err
	}
	defer func() {
		if err := n.Stop(); err != nil {
			logf("stopping the node: %v", err)
		}
	}()

	logf("adding %d pods x %d volumes at once", o.Pods, node.VolumesPerPod)
	start := time.Now()
	burst := make([]string, o.Pods)
	for i := range burst {
		burst[i] = fmt.Sprintf("w-%03d", i)
		if err := n.AddPod(burst[i], node.PodManifest(burst[i], n.HostPathDir(), nil)); err != nil {
			return m, err
		}
	}
	if err := waitRunning(ctx, n, o.Pods, 10*time.Minute); err != nil {
		return m, err
	}
	m.StartupSeconds = time.Since(start).Seconds()
	logf("all %d pods run after %.1fs; settling for %v", o.Pods, m.StartupSeconds, o.Settle)
	if err := sleep(ctx, o.Settle); err != nil {
		return m, err
	}

	var itersBefore, passesBefore map[string]float64
	if metrics, err := n.Metrics(ctx); err == nil {
		itersBefore = metrics.ByLabel("volume_manager_loop_iterations_total", "loop")
		passesBefore = passesByLoopAndKind(metrics)
	}
	for w := 1; w <= o.Windows; w++ {
		s0, err := sampleCPU(n)
		if err != nil {
			return m, err
		}
		if err := sleep(ctx, o.Window); err != nil {
			return m, err
		}
		s1, err := sampleCPU(n)
		if err != nil {
			return m, err
		}
		c := s0.until(s1)
		m.KubeletCPU = append(m.KubeletCPU, c.Kubelet)
		m.RuntimeCPU = append(m.RuntimeCPU, c.Runtime)
		logf("idle window %d/%d: kubelet %.2f CPU-s, %s %.2f CPU-s in %v", w, o.Windows, c.Kubelet, n.RuntimeProcessName(), c.Runtime, o.Window)
	}
	if metrics, err := n.Metrics(ctx); err == nil && metrics.Has("volume_manager_loop_iterations_total") {
		m.Iterations = map[string]float64{}
		for loop, v := range metrics.ByLabel("volume_manager_loop_iterations_total", "loop") {
			m.Iterations[loop] = v - itersBefore[loop]
		}
		if metrics.Has(loopPassesMetric) {
			m.Passes = map[string]float64{}
			for key, v := range passesByLoopAndKind(metrics) {
				m.Passes[key] = v - passesBefore[key]
			}
		}
	}

	if m.ProfileSeconds, m.ProfileCPUSeconds, m.VolumeManagerCPUSeconds, m.VolumeManagerTop, err = profileVolumeManager(ctx, n, o.Profile, logf); err != nil {
		return m, err
	}

	singles := min(o.Singles, o.Pods)
	// The pod workers log the deletion's phases at V(4); the idle windows
	// and the profile above ran at the default --v, and the mount waits of
	// the pods added below are timed at the same --v as the deletions.
	if err := n.SetVerbosity(ctx, churnVerbosity); err != nil {
		return m, err
	}
	m.ChurnVerbosity = churnVerbosity
	logf("deleting %d pods, %v apart, at --v=%d", singles, o.Gap, churnVerbosity)
	churn0, err := sampleCPU(n)
	if err != nil {
		return m, err
	}
	removedAt := make([]time.Time, singles)
	for i := range singles {
		removedAt[i] = time.Now()
		if err := n.RemovePod(burst[i]); err != nil {
			return m, err
		}
		if err := sleep(ctx, o.Gap); err != nil {
			return m, err
		}
	}
	churn1, err := sampleCPU(n)
	if err != nil {
		return m, err
	}
	deleteCPU := churn0.until(churn1)
	m.DeleteCPU = &deleteCPU
	logf("deleting: kubelet %.2f CPU-s, %s %.2f CPU-s in %.0fs", deleteCPU.Kubelet, n.RuntimeProcessName(), deleteCPU.Runtime, deleteCPU.Seconds)
	logf("adding %d pods, %v apart", singles, o.Gap)
	added := make([]string, singles)
	addedAt := make([]time.Time, singles)
	for i := range added {
		added[i] = fmt.Sprintf("s-%03d", i)
		addedAt[i] = time.Now()
		if err := n.AddPod(added[i], node.PodManifest(added[i], n.HostPathDir(), nil)); err != nil {
			return m, err
		}
		if err := sleep(ctx, o.Gap); err != nil {
			return m, err
		}
	}
	churn2, err := sampleCPU(n)
	if err != nil {
		return m, err
	}
	addCPU := churn1.until(churn2)
	m.AddCPU = &addCPU
	logf("adding: kubelet %.2f CPU-s, %s %.2f CPU-s in %.0fs", addCPU.Kubelet, n.RuntimeProcessName(), addCPU.Runtime, addCPU.Seconds)
	if err := waitRunning(ctx, n, o.Pods, 5*time.Minute); err != nil {
		return m, err
	}
	if err := n.SetVerbosity(ctx, node.DefaultVerbosity); err != nil {
		return m, err
	}
	// Every pod's waits are logged before its containers run, or right
	// after it is deleted.
	waits, err := n.VolumeWaits()
	if err != nil {
		return m, err
	}
	key := func(name string) string { return "default/" + n.PodName(name) }
	for i, name := range burst {
		if d, ok := waits.Mount[key(name)]; ok {
			m.BurstMount = append(m.BurstMount, d.Seconds())
		}
		if i < singles {
			if d, ok := waits.Unmount[key(name)]; ok {
				m.Unmount = append(m.Unmount, d.Seconds())
				m.UnmountEndToEnd = append(m.UnmountEndToEnd, waits.UnmountedAt[key(name)].Sub(removedAt[i]).Seconds())
			}
		}
	}
	for i, name := range added {
		if d, ok := waits.Mount[key(name)]; ok {
			m.Mount = append(m.Mount, d.Seconds())
			m.MountEndToEnd = append(m.MountEndToEnd, waits.MountedAt[key(name)].Sub(addedAt[i]).Seconds())
		}
	}
	timelines, err := n.DeletionTimeline()
	if err != nil {
		return m, err
	}
	var whole int
	m.DeletionPhases = map[string][]float64{}
	for i := range singles {
		t, ok := timelines[key(burst[i])]
		if !ok {
			continue
		}
		phases := 0
		for _, p := range node.DeletionPhases() {
			if t.Has(p) {
				m.DeletionPhases[p.Key()] = append(m.DeletionPhases[p.Key()], t.At[p].Sub(removedAt[i]).Seconds())
				phases++
			}
		}
		if phases == node.NumDeletionPhases {
			whole++
		}
		if d, ok := t.Between(node.TerminationComplete, node.TearDownDone); ok {
			m.TerminatedToTearDown = append(m.TerminatedToTearDown, d.Seconds())
		}
		if d, ok := t.Between(node.TerminationComplete, node.SyncTerminatedEnter); ok {
			m.TerminatedToSyncTerminated = append(m.TerminatedToSyncTerminated, d.Seconds())
		}
	}
	logf("deletion timelines: %d of %d pods have every phase", whole, singles)
	if len(m.Mount) < singles || len(m.Unmount) < singles {
		return m, fmt.Errorf("the kubelet log has %d of %d mount waits and %d of %d unmount waits (it must run at --v=3)",
			len(m.Mount), singles, len(m.Unmount), singles)
	}
	if metrics, err := n.Metrics(ctx); err == nil && metrics.Has("volume_manager_loop_iterations_total") {
		m.Triggers = metrics.ByLabel("volume_manager_loop_iterations_total", "trigger")
		m.MissedSignals = metrics.ByLabel("volume_manager_loop_missed_signals_total", "loop")
	}
	// Last: the trigger and missed-signal counts above cover the same
	// stretch of the run as before this measurement.
	if o.ExitPods > 0 {
		if m.ExitUnmount, err = measureExits(ctx, n, o.ExitPods, o.ExitPoll, logf); err != nil {
			return m, err
		}
		m.ExitPollSeconds = o.ExitPoll.Seconds()
	}
	return m, nil
}

// kubeletVersion is what the kubelet binary's --version prints, such as
// "Kubernetes v1.37.0".
func kubeletVersion(ctx context.Context, binary string) (string, error) {
	out, err := exec.CommandContext(ctx, binary, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", binary, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// profileVolumeManager profiles the kubelet for d and returns the profile's
// length and the CPU it sampled, in seconds, and the volume manager's part
// of it with its top functions.
func profileVolumeManager(ctx context.Context, n *node.Node, d time.Duration, logf func(string, ...any)) (seconds, total, volumeManager float64, top []node.FunctionCPU, err error) {
	logf("profiling the kubelet for %v", d)
	prof, err := n.Profile(ctx, d)
	if err != nil {
		return 0, 0, 0, nil, fmt.Errorf("profiling the kubelet: %w", err)
	}
	share, err := node.ShareOf(prof, node.VolumeManagerPackage)
	if err != nil {
		return 0, 0, 0, nil, err
	}
	logf("volume manager: %.1f%% of %.2f CPU-s sampled", 100*share.Fraction(), share.Total.Seconds())
	return d.Seconds(), share.Total.Seconds(), share.Matched.Seconds(), share.Top, nil
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

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// Median is the middle value of xs, or the mean of the two middle values
// when their number is even (two rounds are not summed up by the lower of
// them), or NaN for none.
func Median(xs []float64) float64 {
	if len(xs)%2 == 1 || len(xs) == 0 {
		return bench.Quantile(xs, 0.5)
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// loopPassesMetric counts the loops' passes by loop and kind.
const loopPassesMetric = "volume_manager_loop_passes_total"

// Loops and pass kinds, as the gate's metrics label them.
var (
	loops     = []string{"desired_state_of_world_populator", "reconciler"}
	passKinds = []string{"full", "partial", "skipped"}
)

// passesByLoopAndKind reads the passes metric keyed "loop/kind".
func passesByLoopAndKind(metrics node.Metrics) map[string]float64 {
	out := map[string]float64{}
	for _, loop := range loops {
		for _, kind := range passKinds {
			out[loop+"/"+kind] = metrics.Sum(loopPassesMetric, "loop", loop, "kind", kind)
		}
	}
	return out
}
