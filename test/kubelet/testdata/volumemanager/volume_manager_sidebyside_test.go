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

package volumemanager

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubetypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/kubelet/config"
	kubepod "k8s.io/kubernetes/pkg/kubelet/pod"
	"k8s.io/kubernetes/pkg/kubelet/volumemanager/reconciler"
	"k8s.io/kubernetes/pkg/kubelet/volumemanager/wakeup"
	"k8s.io/kubernetes/pkg/volume"
	"k8s.io/kubernetes/pkg/volume/downwardapi"
	"k8s.io/kubernetes/pkg/volume/emptydir"
	"k8s.io/kubernetes/pkg/volume/hostpath"
	"k8s.io/kubernetes/pkg/volume/projected"
	volumetest "k8s.io/kubernetes/pkg/volume/testing"
	"k8s.io/kubernetes/pkg/volume/util/hostutil"
	"k8s.io/mount-utils"
)

// The side-by-side benchmark's workload, which make bench sets:
//
//	go test -run '^TestVolumeManagerSideBySide$' . -args -side-by-side-out=/tmp/result.json -side-by-side-pods=110
//
// Without -side-by-side-out TestVolumeManagerSideBySide is skipped: it takes
// minutes, and it measures rather than asserts.
var (
	sideBySideOut     = flag.String("side-by-side-out", "", "where TestVolumeManagerSideBySide writes its JSON results; empty skips it")
	sideBySidePods    = flag.Int("side-by-side-pods", 110, "pods running through the idle window")
	sideBySideVolumes = flag.Int("side-by-side-volumes", 4, "volumes per pod: emptyDir, hostPath, downwardAPI, projected, in turn")
	sideBySideIdle    = flag.Duration("side-by-side-idle", 30*time.Second, "the idle window")
)

// sideBySideConfig is the workload: the flags' and the rest.
type sideBySideConfig struct {
	Pods, Volumes int
	Idle          time.Duration
	Singles       int           // pods added (and later removed) one at a time
	Gap           time.Duration // time between single pods
	Slow          int           // pods added one at a time, SlowGap apart
	SlowGap       time.Duration // time between slow single pods
	Burst         int           // pods added at once
	// Resync is the kubelet's pod resync interval: every running pod is
	// ReprocessPod'd and waited on (WaitForAttachAndMount) every Resync to
	// 1.5 Resync, jittered as the pod workers do. Zero turns it off.
	Resync time.Duration
}

// SideBySideMode is the result for one gate value. The report in the
// project's root module reads it.
type SideBySideMode struct {
	Gate    bool `json:"gate"`
	Pods    int  `json:"pods"`
	Volumes int  `json:"volumes"`
	// Idle window.
	IdleSeconds          float64 `json:"idleSeconds"`
	PopulatorIterations  int64   `json:"populatorIterations"`
	ReconcilerIterations int64   `json:"reconcilerIterations"`
	IdleCPUSeconds       float64 `json:"idleCPUSeconds"`
	// Latencies in seconds.
	MountSingle []float64 `json:"mountSingle"`
	// MountSlow are single pods SlowGap apart: a quieter node.
	MountSlow   []float64 `json:"mountSlow"`
	GapSeconds  float64   `json:"gapSeconds"`
	SlowSeconds float64   `json:"slowGapSeconds"`
	MountBurst  []float64 `json:"mountBurst"`
	Unmount     []float64 `json:"unmount"`
	// ResyncSeconds is the resync interval (0: no resyncs); Resyncs counts
	// the resyncs in the idle window.
	ResyncSeconds float64 `json:"resyncSeconds"`
	Resyncs       int64   `json:"resyncs"`
	// IdlePasses counts the loops' passes in the idle window by loop and
	// kind ("loop/kind": full, partial, skipped), from the gate's metrics;
	// the polling loops have none, and every one of their passes is full.
	IdlePasses map[string]float64 `json:"idlePasses,omitempty"`
}

// TestVolumeManagerSideBySide measures a real volume manager, with real
// emptyDir, hostPath, downwardAPI and projected plugins on disk and a fake
// mounter, with the EventedVolumeManager gate off and then on, in one run:
// idle iterations and CPU, WaitForAttachAndMount latency for single pods and
// a burst, and WaitForUnmount latency.
// make bench runs it and turns the results into tables and charts.
func TestVolumeManagerSideBySide(t *testing.T) {
	if *sideBySideOut == "" {
		t.Skip("set -side-by-side-out to run it; make bench does")
	}
	cfg := sideBySideConfig{Pods: *sideBySidePods, Volumes: *sideBySideVolumes, Idle: *sideBySideIdle,
		Singles: 30, Gap: 500 * time.Millisecond, Slow: 10, SlowGap: 2 * time.Second, Burst: 50, Resync: time.Minute}
	var results []SideBySideMode
	for _, gate := range []bool{false, true} {
		t.Run(fmt.Sprintf("gate=%v", gate), func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.EventedVolumeManager, gate)
			r := runSideBySide(t, cfg, gate)
			results = append(results, r)
			t.Logf("gate=%v: idle %d+%d walks (%d resyncs) in %.0fs, %.3f CPU-s; mount p50 single %.1fms (%v apart) %.1fms (%v apart) burst %.1fms; unmount p50 %.1fms",
				gate, r.PopulatorIterations, r.ReconcilerIterations, r.Resyncs, r.IdleSeconds, r.IdleCPUSeconds,
				1000*median(r.MountSingle), cfg.Gap, 1000*median(r.MountSlow), cfg.SlowGap, 1000*median(r.MountBurst), 1000*median(r.Unmount))
		})
	}
	data, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(*sideBySideOut, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// countingPodManager counts GetPods calls: the populator makes one per
// iteration, gate off or on.
type countingPodManager struct {
	kubepod.Manager
	calls atomic.Int64
}

func (c *countingPodManager) GetPods() []*v1.Pod {
	c.calls.Add(1)
	return c.Manager.GetPods()
}

func cpuSeconds(t *testing.T) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func sideBySidePod(name string, volumes int, hostDir string) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench", UID: kubetypes.UID(name), Labels: map[string]string{"app": name}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c"}}},
	}
	mode := int32(0o644) // what API defaulting sets
	labels := &v1.DownwardAPIVolumeFile{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}}
	for i := range volumes {
		vol := v1.Volume{Name: fmt.Sprintf("v%d", i)}
		switch i % 4 {
		case 0:
			vol.EmptyDir = &v1.EmptyDirVolumeSource{}
		case 1:
			vol.HostPath = &v1.HostPathVolumeSource{Path: hostDir}
		case 2:
			vol.DownwardAPI = &v1.DownwardAPIVolumeSource{Items: []v1.DownwardAPIVolumeFile{*labels}, DefaultMode: &mode}
		case 3:
			vol.Projected = &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{*labels}}}}, DefaultMode: &mode}
		}
		pod.Spec.Volumes = append(pod.Spec.Volumes, vol)
		pod.Spec.Containers[0].VolumeMounts = append(pod.Spec.Containers[0].VolumeMounts, v1.VolumeMount{Name: vol.Name, MountPath: "/" + vol.Name})
	}
	return pod
}

func runSideBySide(t *testing.T, cfg sideBySideConfig, gate bool) SideBySideMode {
	r := SideBySideMode{Gate: gate, Pods: cfg.Pods, Volumes: cfg.Volumes, GapSeconds: cfg.Gap.Seconds(), SlowSeconds: cfg.SlowGap.Seconds(), ResyncSeconds: cfg.Resync.Seconds()}
	root := t.TempDir()
	hostDir := filepath.Join(root, "host")
	if err := os.MkdirAll(hostDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var plugins []volume.VolumePlugin
	plugins = append(plugins, emptydir.ProbeVolumePlugins()...)
	plugins = append(plugins, hostpath.ProbeVolumePlugins(volume.VolumeConfig{})...)
	plugins = append(plugins, downwardapi.ProbeVolumePlugins()...)
	plugins = append(plugins, projected.ProbeVolumePlugins()...)
	// Projected volumes need a client, even for downwardAPI sources.
	host := volumetest.NewFakeKubeletVolumeHost(t, root, fake.NewSimpleClientset(), plugins)
	plugMgr := host.GetPluginMgr()

	podManager := &countingPodManager{Manager: kubepod.NewBasicPodManager()}
	states := &podStateProvider{removed: sets.New[kubetypes.UID]()}
	mounter := mount.NewFakeMounter(nil)
	hu := hostutil.NewFakeHostUtil(nil)
	podsDir := filepath.Join(root, "pods")
	vm := NewVolumeManager(true, testHostname, podManager, states, nil, plugMgr, mounter, hu, podsDir,
		&record.FakeRecorder{}, volumetest.NewBlockVolumePathHandler(), nil, 0).(*volumeManager)
	wakeups := WakeupsOf(vm) // nil, which does nothing, with the gate off

	// The same reconciler NewVolumeManager builds, with its readiness check
	// counted: the reconciler calls it once per iteration, gate off or on.
	var reconcilerIterations atomic.Int64
	populatorReady := vm.desiredStateOfWorldPopulator.HasAddedPods
	vm.reconciler = reconciler.NewReconciler(nil, true, reconcilerLoopSleepPeriod, waitForAttachTimeout, testHostname,
		vm.desiredStateOfWorld, vm.actualStateOfWorld,
		func() bool { reconcilerIterations.Add(1); return populatorReady() },
		vm.operationExecutor, mounter, hu, plugMgr, podsDir, vm.evented.reconcilerOptions()...)
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), klog.Background().V(0)))
	done := make(chan struct{})
	go func() {
		defer close(done)
		vm.Run(ctx, config.NewSourcesReady(func(sets.Set[string]) bool { return true }))
	}()
	defer func() {
		cancel()
		<-done
	}()

	waitMounted := func(pods []*v1.Pod, start time.Time) []float64 {
		lat := make([]float64, len(pods))
		var wg sync.WaitGroup
		for i, pod := range pods {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := vm.WaitForAttachAndMount(ctx, pod); err != nil {
					t.Errorf("pod %s: %v", pod.Name, err)
				}
				lat[i] = time.Since(start).Seconds()
			}()
		}
		wg.Wait()
		return lat
	}
	add := func(pods ...*v1.Pod) {
		for _, pod := range pods {
			podManager.AddPod(pod)
		}
		wakeups.NotifyPods() // what the kubelet's sync loop does
	}

	// The steady population.
	var running []*v1.Pod
	for i := range cfg.Pods {
		running = append(running, sideBySidePod(fmt.Sprintf("steady-%d", i), cfg.Volumes, hostDir))
	}
	add(running...)
	waitMounted(running, time.Now())
	var resyncs atomic.Int64
	resyncDone := make(chan struct{})
	go func() {
		defer close(resyncDone)
		resyncPods(ctx, cfg.Resync, running, func(pod *v1.Pod) {
			if err := vm.WaitForAttachAndMount(ctx, pod); err != nil && ctx.Err() == nil {
				t.Errorf("resync of pod %s: %v", pod.Name, err)
			}
			resyncs.Add(1)
		})
	}()
	defer func() { cancel(); <-resyncDone }() // before the deferred waits for the volume manager

	// The idle window.
	time.Sleep(3 * time.Second) // let both modes settle
	popBefore, rcBefore, cpuBefore := podManager.calls.Load(), reconcilerIterations.Load(), cpuSeconds(t)
	resyncsBefore, passesBefore := resyncs.Load(), loopPasses(t, gate)
	start := time.Now()
	time.Sleep(cfg.Idle)
	r.IdleSeconds = time.Since(start).Seconds()
	r.IdleCPUSeconds = cpuSeconds(t) - cpuBefore
	r.PopulatorIterations = podManager.calls.Load() - popBefore
	r.ReconcilerIterations = reconcilerIterations.Load() - rcBefore
	r.Resyncs = resyncs.Load() - resyncsBefore
	if gate {
		r.IdlePasses = map[string]float64{}
		for key, v := range loopPasses(t, gate) {
			r.IdlePasses[key] = v - passesBefore[key]
		}
	}

	// Single pods, one at a time, as a pod worker sees them: added, then
	// WaitForAttachAndMount at once.
	var singles []*v1.Pod
	for i := range cfg.Singles {
		pod := sideBySidePod(fmt.Sprintf("single-%d", i), cfg.Volumes, hostDir)
		singles = append(singles, pod)
		time.Sleep(cfg.Gap)
		start := time.Now()
		add(pod)
		r.MountSingle = append(r.MountSingle, waitMounted([]*v1.Pod{pod}, start)...)
	}

	// Single pods on a quieter node.
	for i := range cfg.Slow {
		pod := sideBySidePod(fmt.Sprintf("slow-%d", i), cfg.Volumes, hostDir)
		singles = append(singles, pod)
		time.Sleep(cfg.SlowGap)
		start := time.Now()
		add(pod)
		r.MountSlow = append(r.MountSlow, waitMounted([]*v1.Pod{pod}, start)...)
	}

	// A burst.
	var burst []*v1.Pod
	for i := range cfg.Burst {
		burst = append(burst, sideBySidePod(fmt.Sprintf("burst-%d", i), cfg.Volumes, hostDir))
	}
	time.Sleep(cfg.Gap)
	start = time.Now()
	add(burst...)
	r.MountBurst = waitMounted(burst, start)

	// Unmount, one at a time: the pod is removed and its pod worker finishes
	// terminating it, then SyncTerminatedPod waits for the unmount.
	for _, pod := range singles {
		time.Sleep(cfg.Gap)
		start := time.Now()
		podManager.RemovePod(pod)
		states.remove(pod.UID)
		wakeups.NotifyPods() // the pod worker's termination hook
		if err := vm.WaitForUnmount(ctx, pod); err != nil {
			t.Errorf("pod %s: %v", pod.Name, err)
		}
		r.Unmount = append(r.Unmount, time.Since(start).Seconds())
	}
	return r
}

// resyncPods does what the pod workers do for running pods until ctx is
// done: each pod is synced (resync) every interval to 1.5 interval, the
// first time at a random point of its first interval, as if the pods had
// been running for a while. A zero interval does nothing. It returns once
// every resync it started has returned.
func resyncPods(ctx context.Context, interval time.Duration, pods []*v1.Pod, resync func(*v1.Pod)) {
	if interval <= 0 {
		return
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	next := make([]time.Time, len(pods))
	now := time.Now()
	for i := range pods {
		next[i] = now.Add(time.Duration(rand.Int64N(int64(interval))))
	}
	ticker := time.NewTicker(10 * time.Millisecond)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now = <-ticker.C:
		}
		for i, pod := range pods {
			if now.Before(next[i]) {
				continue
			}
			next[i] = now.Add(wait.Jitter(interval, 0.5))
			wg.Add(1)
			go func() {
				defer wg.Done()
				resync(pod)
			}()
		}
	}
}

// loopPasses reads the loops' passes by loop and kind ("loop/kind") from
// the gate's metrics; nil with the gate off.
func loopPasses(t *testing.T, gate bool) map[string]float64 {
	if !gate {
		return nil
	}
	out := map[string]float64{}
	for _, loop := range []string{populatorLoop, reconcilerLoop} {
		for _, kind := range []wakeup.PassKind{wakeup.PassFull, wakeup.PassPartial, wakeup.PassSkipped} {
			v, err := loopCounter("volume_manager_loop_passes_total", "kind", loop, string(kind))
			if err != nil {
				t.Fatal(err)
			}
			out[loop+"/"+string(kind)] = v
		}
	}
	return out
}
