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

package nodebench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"evented-volume-manager/pkg/bench"
	"evented-volume-manager/pkg/node"
)

// ClusterOptions configure a benchmark run on a cluster node (make
// node-bench-cluster).
type ClusterOptions struct {
	Options
	// ConfigMaps is how many of the idle pods get their config map updated
	// at once, to time the update's way into the pods' files, in each of
	// ConfigMapWaves waves: ConfigMaps × ConfigMapWaves samples per round.
	ConfigMaps     int
	ConfigMapWaves int
	// ConfigMapTimeout bounds a wave's wait: the kubelet remounts at a
	// pod's periodic resync, every 60 to 90 s.
	ConfigMapTimeout time.Duration
}

// Phases of a round whose API requests a ClusterMode counts.
const (
	PhaseIdle  = "idle"  // the idle windows
	PhaseChurn = "churn" // the CSI pods added and deleted
)

// remountVerbosity is the kubelet's --v while the config maps are updated:
// the operation generator logs a remount's MountVolume.SetUp at V(4).
const remountVerbosity = 4

// PodKind is a kind of single pod the cluster benchmark adds and deletes.
type PodKind struct {
	// Key names the kind in results; CSI and AttachDelay are as in
	// node.APIPod.
	Key         string        `json:"key"`
	CSI         bool          `json:"csi"`
	AttachDelay time.Duration `json:"attachDelay"`
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

// ClusterMode is one gate value's measurements on a cluster node.
type ClusterMode struct {
	Gate           bool    `json:"gate"`
	Runtime        string  `json:"runtime"`
	Pods           int     `json:"pods"`
	Volumes        int     `json:"volumes"`
	StartupSeconds float64 `json:"startupSeconds"`
	WindowSeconds  float64 `json:"windowSeconds"`
	// KubeletCPU, RuntimeCPU, APIServerCPU and ControllerManagerCPU are
	// CPU-seconds per idle window.
	KubeletCPU           []float64 `json:"kubeletCPU"`
	RuntimeCPU           []float64 `json:"runtimeCPU"`
	APIServerCPU         []float64 `json:"apiserverCPU"`
	ControllerManagerCPU []float64 `json:"controllerManagerCPU"`
	// The kubelet's profile, as in Mode.
	ProfileSeconds          float64            `json:"profileSeconds"`
	ProfileCPUSeconds       float64            `json:"profileCPUSeconds"`
	VolumeManagerCPUSeconds float64            `json:"volumeManagerCPUSeconds"`
	VolumeManagerTop        []node.FunctionCPU `json:"volumeManagerTop"`
	// Passes counts the loops' passes over the idle windows, keyed
	// "loop/kind"; MissedSignals and Triggers as in Mode, over the run.
	Passes        map[string]float64 `json:"passes,omitempty"`
	MissedSignals map[string]float64 `json:"missedSignals,omitempty"`
	Triggers      map[string]float64 `json:"triggers,omitempty"`
	// Kinds are the single pods' times by PodKind key.
	Kinds      map[string]*KindTimes `json:"kinds"`
	GapSeconds float64               `json:"gapSeconds"`
	// ConfigMapUpdate is, per updated config map, the seconds from its
	// update through the API to the new content in the pod's file; missed
	// counts those not there within the timeout.
	ConfigMapUpdate       []float64 `json:"configMapUpdate"`
	ConfigMapUpdateMissed int       `json:"configMapUpdateMissed"`
	// Remount is, for each pod sync while the config maps were updated (at
	// --v=4), the seconds from the sync reaching the volume manager to the
	// pod's remounted volumes' last MountVolume.SetUp: the volume
	// manager's own share of a config map's way into the pod. RemountMissed
	// counts the syncs with no remount logged.
	Remount       []float64 `json:"remount,omitempty"`
	RemountMissed int       `json:"remountMissed,omitempty"`
	// APIRequests are the kubelet's requests to the API server by phase
	// (PhaseIdle, PhaseChurn), from its audit log.
	APIRequests map[string]node.APIRequests `json:"apiRequests,omitempty"`
}

// ClusterResult is a cluster benchmark run: one ClusterMode per round and
// gate value.
type ClusterResult struct {
	Off []ClusterMode `json:"off"`
	On  []ClusterMode `json:"on"`
	// Orders are the gate values in the order each round ran them.
	Orders [][]bool `json:"orders,omitempty"`
}

// ClusterRoundOrder is the order of the gate values in a round: off first
// in odd rounds, on first in even ones, so that a drift of the node over a
// round weighs on both alike.
func ClusterRoundOrder(round int) []bool {
	if round%2 == 0 {
		return []bool{true, false}
	}
	return []bool{false, true}
}

// cpu4 is the four processes' CPU at one time.
type cpu4 struct {
	kubelet, runtime, apiserver, kcm time.Duration
}

func sampleCPU4(n *node.Node) (cpu4, error) {
	var s cpu4
	var err error
	if s.kubelet, err = n.KubeletCPU(); err != nil {
		return s, err
	}
	if s.runtime, err = n.RuntimeCPU(); err != nil {
		return s, err
	}
	s.apiserver, s.kcm, err = n.ControlPlaneCPU()
	return s, err
}

// RunCluster measures one gate value on a cluster node.
func RunCluster(ctx context.Context, o ClusterOptions, gate bool) (ClusterMode, error) {
	logf := o.Logf
	m := ClusterMode{Gate: gate, Pods: o.Pods, Volumes: node.APIPodVolumes(false), WindowSeconds: o.Window.Seconds(),
		GapSeconds: o.Gap.Seconds(), Kinds: map[string]*KindTimes{}}
	singles := o.Singles
	no := node.Options{
		Out:          o.Out,
		Work:         filepath.Join(o.Dir, fmt.Sprintf("work-gate-%t", gate)),
		Gate:         gate,
		Runtime:      o.Runtime,
		PodEventsOff: o.PodEventsOff,
		MaxPods:      max(o.Pods+singles+10, node.DefaultMaxPods),
		Cluster:      true,
		Logf:         logf,
	}
	m.Runtime = no.RuntimeLabel()
	n, err := node.Start(ctx, no)
	if err != nil {
		return m, err
	}
	defer func() {
		if err := n.Stop(); err != nil {
			logf("stopping the node: %v", err)
		}
	}()

	logf("creating %d pods x %d volumes through the API server at once", o.Pods, m.Volumes)
	start := time.Now()
	idle := make([]string, o.Pods)
	for i := range idle {
		idle[i] = fmt.Sprintf("w-%03d", i)
		if _, err := n.CreateAPIPod(ctx, node.APIPod{Name: idle[i]}); err != nil {
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

	var passesBefore map[string]float64
	if metrics, err := n.Metrics(ctx); err == nil {
		passesBefore = passesByLoopAndKind(metrics)
	}
	phases := map[string][2]time.Time{}
	idleFrom := time.Now()
	for w := 1; w <= o.Windows; w++ {
		s0, err := sampleCPU4(n)
		if err != nil {
			return m, err
		}
		if err := sleep(ctx, o.Window); err != nil {
			return m, err
		}
		s1, err := sampleCPU4(n)
		if err != nil {
			return m, err
		}
		m.KubeletCPU = append(m.KubeletCPU, (s1.kubelet - s0.kubelet).Seconds())
		m.RuntimeCPU = append(m.RuntimeCPU, (s1.runtime - s0.runtime).Seconds())
		m.APIServerCPU = append(m.APIServerCPU, (s1.apiserver - s0.apiserver).Seconds())
		m.ControllerManagerCPU = append(m.ControllerManagerCPU, (s1.kcm - s0.kcm).Seconds())
		logf("idle window %d/%d: kubelet %.2f, %s %.2f, kube-apiserver %.2f, kube-controller-manager %.2f CPU-s in %v", w, o.Windows,
			m.KubeletCPU[w-1], n.RuntimeProcessName(), m.RuntimeCPU[w-1], m.APIServerCPU[w-1], m.ControllerManagerCPU[w-1], o.Window)
	}
	phases[PhaseIdle] = [2]time.Time{idleFrom, time.Now()}
	if metrics, err := n.Metrics(ctx); err == nil && metrics.Has(loopPassesMetric) {
		m.Passes = map[string]float64{}
		for key, v := range passesByLoopAndKind(metrics) {
			m.Passes[key] = v - passesBefore[key]
		}
	}
	if m.ProfileSeconds, m.ProfileCPUSeconds, m.VolumeManagerCPUSeconds, m.VolumeManagerTop, err = profileVolumeManager(ctx, n, o.Profile, logf); err != nil {
		return m, err
	}

	if err := configMapUpdates(ctx, n, o, idle, &m); err != nil {
		return m, err
	}
	var churnFrom time.Time // the CSI kinds come last
	for _, kind := range ClusterPodKinds {
		if kind.CSI && churnFrom.IsZero() {
			churnFrom = time.Now()
		}
		if err := churn(ctx, n, o, kind, &m); err != nil {
			return m, err
		}
	}
	phases[PhaseChurn] = [2]time.Time{churnFrom, time.Now()}
	reqs, err := n.KubeletAPIRequests()
	if err != nil {
		return m, fmt.Errorf("the API server's audit log: %w", err)
	}
	m.APIRequests = map[string]node.APIRequests{}
	for phase, w := range phases {
		m.APIRequests[phase] = node.CountAPIRequests(reqs, w[0], w[1])
		logf("the kubelet's API requests, %s: %s in %.0f s", phase, formatCounts(m.APIRequests[phase].Count), w[1].Sub(w[0]).Seconds())
	}
	if metrics, err := n.Metrics(ctx); err == nil && metrics.Has("volume_manager_loop_iterations_total") {
		m.Triggers = metrics.ByLabel("volume_manager_loop_iterations_total", "trigger")
		m.MissedSignals = metrics.ByLabel("volume_manager_loop_missed_signals_total", "loop")
	}
	return m, nil
}

// churn adds o.Singles pods of a kind one at a time, o.Gap apart, waits
// until they run, then deletes them one at a time and waits until they are
// gone and, for CSI pods, their volumes detached.
func churn(ctx context.Context, n *node.Node, o ClusterOptions, kind PodKind, m *ClusterMode) error {
	logf := o.Logf
	names := make([]string, o.Singles)
	created := make([]time.Time, o.Singles)
	logf("adding %d %s pods, %v apart", o.Singles, kind.Key, o.Gap)
	running := o.Pods
	for i := range names {
		names[i] = fmt.Sprintf("%s-%03d", kind.Key, i)
		p := node.APIPod{Name: names[i], CSI: kind.CSI}
		if kind.CSI {
			p.AttachDelay = &kind.AttachDelay
		}
		// From the pod's creation: its claim was bound before, as a
		// scheduler would wait for.
		var err error
		if created[i], err = n.CreateAPIPod(ctx, p); err != nil {
			return err
		}
		if err := sleep(ctx, o.Gap); err != nil {
			return err
		}
	}
	if err := waitRunning(ctx, n, running+o.Singles, 5*time.Minute); err != nil {
		return err
	}
	logf("deleting the %d %s pods, %v apart", o.Singles, kind.Key, o.Gap)
	deleted := make([]time.Time, o.Singles)
	for i, name := range names {
		deleted[i] = time.Now()
		if err := n.DeleteAPIPod(ctx, name); err != nil {
			return err
		}
		if err := sleep(ctx, o.Gap); err != nil {
			return err
		}
	}
	// Done: gone from the API server, the kubelet's unmount wait logged
	// (the pod may be gone before its worker's last sync logs it) and, for
	// CSI pods, the volume detached.
	var waits node.VolumeWaits
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var err error
		if waits, err = n.VolumeWaits(); err != nil {
			return err
		}
		left := 0
		for _, name := range names {
			gone, err := n.APIPodGone(ctx, name)
			if err != nil {
				return err
			}
			_, unmounted := waits.UnmountedAt[node.APIPodNamespace+"/"+name]
			if !gone || !unmounted || (kind.CSI && n.Attacher().Times(node.PVName(name)).Detached.IsZero()) {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d %s pods are not gone, unmounted or detached 3 minutes after their deletion; see %s",
				left, len(names), kind.Key, n.KubeletLog())
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return err
		}
	}
	t := &KindTimes{}
	for i, name := range names {
		key := node.APIPodNamespace + "/" + name
		if d, ok := waits.Mount[key]; ok {
			t.Mount = append(t.Mount, d.Seconds())
			t.MountEndToEnd = append(t.MountEndToEnd, waits.MountedAt[key].Sub(created[i]).Seconds())
			if d, ok := waits.LastSetUp[key]; ok {
				t.SetUpToMounted = append(t.SetUpToMounted, d.Seconds())
			}
			if kind.CSI {
				times := n.Attacher().Times(node.PVName(name))
				if !times.Attached.IsZero() {
					t.AttachedToMounted = append(t.AttachedToMounted, waits.MountedAt[key].Sub(times.Attached).Seconds())
				}
				if !times.Listed.IsZero() {
					t.ListedToMounted = append(t.ListedToMounted, waits.MountedAt[key].Sub(times.Listed).Seconds())
				}
			}
		}
		if at, ok := waits.UnmountedAt[key]; ok {
			t.UnmountEndToEnd = append(t.UnmountEndToEnd, at.Sub(deleted[i]).Seconds())
		}
		if kind.CSI {
			if at := n.Attacher().Times(node.PVName(name)).Detached; !at.IsZero() {
				t.DetachEndToEnd = append(t.DetachEndToEnd, at.Sub(deleted[i]).Seconds())
			}
		}
	}
	m.Kinds[kind.Key] = t
	logf("%s pods: mount wait p50 %.1f ms, created → mounted p50 %.1f ms, deleted → unmounted p50 %.0f ms (%d/%d/%d samples)",
		kind.Key, 1000*Median(t.Mount), 1000*Median(t.MountEndToEnd), 1000*Median(t.UnmountEndToEnd),
		len(t.Mount), len(t.MountEndToEnd), len(t.UnmountEndToEnd))
	if len(t.Mount) < len(names) || len(t.UnmountEndToEnd) < len(names) {
		return fmt.Errorf("the kubelet log has %d of %d mount waits and %d of %d unmount waits of the %s pods (it must run at --v=3)",
			len(t.Mount), len(names), len(t.UnmountEndToEnd), len(names), kind.Key)
	}
	return nil
}

// configMapUpdates runs o.ConfigMapWaves waves of configMapWave at
// --v=4, and times the volume manager's remounts at the pods' syncs
// meanwhile.
func configMapUpdates(ctx context.Context, n *node.Node, o ClusterOptions, idle []string, m *ClusterMode) error {
	if min(o.ConfigMaps, len(idle)) == 0 || o.ConfigMapWaves == 0 {
		return nil
	}
	if err := n.SetVerbosity(ctx, remountVerbosity); err != nil {
		return err
	}
	from := time.Now()
	for wave := 1; wave <= o.ConfigMapWaves; wave++ {
		if err := configMapWave(ctx, n, o, idle, m); err != nil {
			return err
		}
	}
	// Syncs of the last seconds may have their remounts logged after the
	// verbosity is back.
	to := time.Now().Add(-5 * time.Second)
	if err := n.SetVerbosity(ctx, node.DefaultVerbosity); err != nil {
		return err
	}
	remounts, missed, err := n.Remounts(from, to)
	if err != nil {
		return err
	}
	for _, d := range remounts {
		m.Remount = append(m.Remount, d.Seconds())
	}
	m.RemountMissed = missed
	o.Logf("pod sync → volumes remounted: p50 %.1f ms, p99 %.1f ms over %d syncs, %d with no remount logged",
		1000*bench.Quantile(m.Remount, 0.5), 1000*bench.Quantile(m.Remount, 0.99), len(m.Remount), missed)
	return nil
}

// configMapWave updates the config maps of the first o.ConfigMaps idle pods
// at once and times each new value's way into its pod's file.
func configMapWave(ctx context.Context, n *node.Node, o ClusterOptions, idle []string, m *ClusterMode) error {
	count := min(o.ConfigMaps, len(idle))
	files := make([]string, count)
	for i := range count {
		uid, err := n.APIPodUID(ctx, idle[i])
		if err != nil {
			return err
		}
		files[i] = n.ConfigMapFile(uid)
	}
	value := fmt.Sprintf("v-%d", time.Now().UnixNano())
	logf := o.Logf
	logf("updating %d config maps; waiting up to %v for the pods' files", count, o.ConfigMapTimeout)
	updated := make([]time.Time, count)
	for i := range count {
		updated[i] = time.Now()
		if err := n.UpdateConfigMap(ctx, idle[i], value); err != nil {
			return err
		}
	}
	seen := make([]time.Time, count)
	deadline := time.Now().Add(o.ConfigMapTimeout)
	for left := count; left > 0 && time.Now().Before(deadline); {
		for i, f := range files {
			if !seen[i].IsZero() {
				continue
			}
			if data, err := os.ReadFile(f); err == nil && strings.TrimSpace(string(data)) == value {
				seen[i] = time.Now()
				left--
			}
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	for i := range count {
		if seen[i].IsZero() {
			m.ConfigMapUpdateMissed++
			continue
		}
		m.ConfigMapUpdate = append(m.ConfigMapUpdate, seen[i].Sub(updated[i]).Seconds())
	}
	logf("config map → file: p50 %.1f s over %d updates so far, %d not within %v", Median(m.ConfigMapUpdate), len(m.ConfigMapUpdate),
		m.ConfigMapUpdateMissed, o.ConfigMapTimeout)
	return nil
}
