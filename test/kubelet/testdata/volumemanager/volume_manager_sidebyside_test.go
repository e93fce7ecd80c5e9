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
	"slices"
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

// The workload, which make bench sets; without -side-by-side-out it is skipped.
var (
	sideBySideOut     = flag.String("side-by-side-out", "", "where TestVolumeManagerSideBySide writes its JSON results; empty skips it")
	sideBySidePods    = flag.Int("side-by-side-pods", 110, "pods running through the idle window")
	sideBySideVolumes = flag.Int("side-by-side-volumes", 4, "volumes per pod: emptyDir, hostPath, downwardAPI, projected, in turn")
	sideBySideIdle    = flag.Duration("side-by-side-idle", 30*time.Second, "the idle window")
)

// The rest of the workload: single pods added (and later removed) singleGap
// apart, then slowGap apart, a burst of pods, and the resyncs' period.
const (
	singlePods     = 30
	singleGap      = 500 * time.Millisecond
	slowPods       = 10
	slowGap        = 2 * time.Second
	burstPods      = 50
	resyncInterval = time.Minute
)

// SideBySideMode is the result for one gate value, read by cmd/bench-report.
type SideBySideMode struct {
	Gate                 bool      `json:"gate"`
	Pods                 int       `json:"pods"`
	Volumes              int       `json:"volumes"`
	IdleSeconds          float64   `json:"idleSeconds"`
	PopulatorIterations  int64     `json:"populatorIterations"`
	ReconcilerIterations int64     `json:"reconcilerIterations"`
	IdleCPUSeconds       float64   `json:"idleCPUSeconds"`
	MountSingle          []float64 `json:"mountSingle"`
	MountSlow            []float64 `json:"mountSlow"`
	GapSeconds           float64   `json:"gapSeconds"`
	SlowSeconds          float64   `json:"slowGapSeconds"`
	MountBurst           []float64 `json:"mountBurst"`
	Unmount              []float64 `json:"unmount"`
	ResyncSeconds        float64   `json:"resyncSeconds"`
	Resyncs              int64     `json:"resyncs"` // in the idle window
	// IdlePasses counts the idle window's passes by "loop/kind"; gate on only.
	IdlePasses map[string]float64 `json:"idlePasses,omitempty"`
}

// TestVolumeManagerSideBySide measures a volume manager, gate off and on.
func TestVolumeManagerSideBySide(t *testing.T) {
	if *sideBySideOut == "" {
		t.Skip("set -side-by-side-out to run it; make bench does")
	}
	var results []SideBySideMode
	for _, gate := range []bool{false, true} {
		t.Run(fmt.Sprintf("gate=%v", gate), func(t *testing.T) {
			featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.EventedVolumeManager, gate)
			r := runSideBySide(t, gate)
			results = append(results, r)
			t.Logf("gate=%v: idle %d+%d walks (%d resyncs) in %.0fs, %.3f CPU-s; mount p50 single %.1fms (%v apart) %.1fms (%v apart) burst %.1fms; unmount p50 %.1fms",
				gate, r.PopulatorIterations, r.ReconcilerIterations, r.Resyncs, r.IdleSeconds, r.IdleCPUSeconds,
				1000*median(r.MountSingle), singleGap, 1000*median(r.MountSlow), slowGap, 1000*median(r.MountBurst), 1000*median(r.Unmount))
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
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

// countingPodManager counts GetPods calls: one per populator iteration.
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

func runSideBySide(t *testing.T, gate bool) SideBySideMode {
	r := SideBySideMode{Gate: gate, Pods: *sideBySidePods, Volumes: *sideBySideVolumes, GapSeconds: singleGap.Seconds(),
		SlowSeconds: slowGap.Seconds(), ResyncSeconds: resyncInterval.Seconds()}
	root := t.TempDir()
	hostDir := filepath.Join(root, "host")
	if err := os.MkdirAll(hostDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Projected volumes need a client, even for downwardAPI sources.
	plugMgr := volumetest.NewFakeKubeletVolumeHost(t, root, fake.NewSimpleClientset(), slices.Concat(emptydir.ProbeVolumePlugins(),
		hostpath.ProbeVolumePlugins(volume.VolumeConfig{}), downwardapi.ProbeVolumePlugins(), projected.ProbeVolumePlugins())).GetPluginMgr()
	podManager := &countingPodManager{Manager: kubepod.NewBasicPodManager()}
	states := &podStateProvider{removed: sets.New[kubetypes.UID]()}
	mounter := mount.NewFakeMounter(nil)
	hu := hostutil.NewFakeHostUtil(nil)
	podsDir := filepath.Join(root, "pods")
	vm := NewVolumeManager(true, testHostname, podManager, states, nil, plugMgr, mounter, hu, podsDir,
		&record.FakeRecorder{}, volumetest.NewBlockVolumePathHandler(), nil, 0).(*volumeManager)
	wakeups := WakeupsOf(vm) // nil, which does nothing, with the gate off

	// NewVolumeManager's reconciler, counting its once-per-iteration check.
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

	newPods := func(prefix string, n int) []*v1.Pod {
		var pods []*v1.Pod
		for i := range n {
			pods = append(pods, sideBySidePod(fmt.Sprintf("%s-%d", prefix, i), *sideBySideVolumes, hostDir))
		}
		return pods
	}
	// mountPods adds pods and returns, for each, its WaitForAttachAndMount time.
	mountPods := func(pods ...*v1.Pod) []float64 {
		start := time.Now()
		for _, pod := range pods {
			podManager.AddPod(pod)
		}
		wakeups.NotifyPods()
		lat := make([]float64, len(pods))
		var wg sync.WaitGroup
		for i, pod := range pods {
			wg.Go(func() {
				if err := vm.WaitForAttachAndMount(ctx, pod); err != nil {
					t.Errorf("pod %s: %v", pod.Name, err)
				}
				lat[i] = time.Since(start).Seconds()
			})
		}
		wg.Wait()
		return lat
	}

	// The steady population, and the idle window.
	running := newPods("steady", *sideBySidePods)
	mountPods(running...)
	var resyncs atomic.Int64
	resyncDone := make(chan struct{})
	go func() {
		defer close(resyncDone)
		resyncPods(ctx, running, func(pod *v1.Pod) {
			if err := vm.WaitForAttachAndMount(ctx, pod); err != nil && ctx.Err() == nil {
				t.Errorf("resync of pod %s: %v", pod.Name, err)
			}
			resyncs.Add(1)
		})
	}()
	defer func() { cancel(); <-resyncDone }() // before the deferred waits for the volume manager
	time.Sleep(3 * time.Second)               // let both modes settle
	popBefore, rcBefore, cpuBefore := podManager.calls.Load(), reconcilerIterations.Load(), cpuSeconds(t)
	resyncsBefore, passesBefore := resyncs.Load(), loopPasses(t, gate)
	start := time.Now()
	time.Sleep(*sideBySideIdle)
	r.IdleSeconds = time.Since(start).Seconds()
	r.IdleCPUSeconds = cpuSeconds(t) - cpuBefore
	r.PopulatorIterations = podManager.calls.Load() - popBefore
	r.ReconcilerIterations = reconcilerIterations.Load() - rcBefore
	r.Resyncs = resyncs.Load() - resyncsBefore
	if gate {
		r.IdlePasses = map[string]float64{}
	}
	for key, v := range loopPasses(t, gate) {
		r.IdlePasses[key] = v - passesBefore[key]
	}

	// Single pods, then on a quieter node, then a burst.
	singles := slices.Concat(newPods("single", singlePods), newPods("slow", slowPods))
	for i, pod := range singles {
		gap, latencies := singleGap, &r.MountSingle
		if i >= singlePods {
			gap, latencies = slowGap, &r.MountSlow
		}
		time.Sleep(gap)
		*latencies = append(*latencies, mountPods(pod)...)
	}
	burst := newPods("burst", burstPods)
	time.Sleep(singleGap)
	r.MountBurst = mountPods(burst...)

	// Unmount one at a time, as SyncTerminatedPod waits for it.
	for _, pod := range singles {
		time.Sleep(singleGap)
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

// resyncPods resyncs each pod every resyncInterval to 1.5 resyncInterval,
// first at a random point, until ctx is done, as the pod workers do.
func resyncPods(ctx context.Context, pods []*v1.Pod, resync func(*v1.Pod)) {
	var wg sync.WaitGroup
	defer wg.Wait()
	next := make([]time.Time, len(pods))
	now := time.Now()
	for i := range pods {
		next[i] = now.Add(time.Duration(rand.Int64N(int64(resyncInterval))))
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
			next[i] = now.Add(wait.Jitter(resyncInterval, 0.5))
			wg.Go(func() { resync(pod) })
		}
	}
}

// loopPasses reads the loops' passes by "loop/kind" from the gate's metrics.
func loopPasses(t *testing.T, gate bool) map[string]float64 {
	if !gate {
		return nil
	}
	out := map[string]float64{}
	for _, loop := range []string{populatorLoop, reconcilerLoop} {
		for _, kind := range []wakeup.PassKind{wakeup.PassFull, wakeup.PassPartial, wakeup.PassSkipped} {
			out[loop+"/"+string(kind)] = passes(t, loop, kind)
		}
	}
	return out
}
