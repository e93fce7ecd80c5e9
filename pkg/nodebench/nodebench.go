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
// node-bench): the same workload of static pods on containerd and the
// patched kubelet, with the EventedVolumeManager gate off and then on. It
// measures idle kubelet CPU from /proc, the volume manager's share of it
// from a pprof profile, the loops' iterations, and the volume manager's
// mount and unmount waits from the kubelet's own log lines.
package nodebench

import (
	"context"
	"fmt"
	"path/filepath"
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
	// Singles is how many pods are deleted, one at a time, and then added,
	// one at a time, Gap apart, to time unmount and mount waits.
	Singles int
	Gap     time.Duration
	// Logf reports progress.
	Logf func(format string, args ...any)
}

// Mode is one gate value's measurements.
type Mode struct {
	Gate    bool `json:"gate"`
	Pods    int  `json:"pods"`
	Volumes int  `json:"volumes"`
	// StartupSeconds is how long the pods took to run, all added at once.
	StartupSeconds float64 `json:"startupSeconds"`
	// WindowSeconds is the length of each idle window.
	WindowSeconds float64 `json:"windowSeconds"`
	// KubeletCPU and ContainerdCPU are CPU-seconds per idle window.
	KubeletCPU    []float64 `json:"kubeletCPU"`
	ContainerdCPU []float64 `json:"containerdCPU"`
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
}

// Run measures one gate value.
func Run(ctx context.Context, o Options, gate bool) (Mode, error) {
	logf := o.Logf
	m := Mode{Gate: gate, Pods: o.Pods, Volumes: node.VolumesPerPod, WindowSeconds: o.Window.Seconds(), GapSeconds: o.Gap.Seconds()}
	n, err := node.Start(ctx, node.Options{
		Out:  o.Out,
		Work: filepath.Join(o.Dir, fmt.Sprintf("work-gate-%t", gate)),
		Gate: gate,
		Logf: logf,
	})
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

	var itersBefore map[string]float64
	if metrics, err := n.Metrics(ctx); err == nil {
		itersBefore = metrics.ByLabel("volume_manager_loop_iterations_total", "loop")
	}
	for w := 1; w <= o.Windows; w++ {
		k0, err := n.KubeletCPU()
		if err != nil {
			return m, err
		}
		c0, err := n.ContainerdCPU()
		if err != nil {
			return m, err
		}
		if err := sleep(ctx, o.Window); err != nil {
			return m, err
		}
		k1, err := n.KubeletCPU()
		if err != nil {
			return m, err
		}
		c1, err := n.ContainerdCPU()
		if err != nil {
			return m, err
		}
		m.KubeletCPU = append(m.KubeletCPU, (k1 - k0).Seconds())
		m.ContainerdCPU = append(m.ContainerdCPU, (c1 - c0).Seconds())
		logf("idle window %d/%d: kubelet %.2f CPU-s, containerd %.2f CPU-s in %v", w, o.Windows, (k1 - k0).Seconds(), (c1 - c0).Seconds(), o.Window)
	}
	if metrics, err := n.Metrics(ctx); err == nil && metrics.Has("volume_manager_loop_iterations_total") {
		m.Iterations = map[string]float64{}
		for loop, v := range metrics.ByLabel("volume_manager_loop_iterations_total", "loop") {
			m.Iterations[loop] = v - itersBefore[loop]
		}
	}

	logf("profiling the kubelet for %v", o.Profile)
	prof, err := n.Profile(ctx, o.Profile)
	if err != nil {
		return m, fmt.Errorf("profiling the kubelet: %w", err)
	}
	share, err := node.ShareOf(prof, node.VolumeManagerPackage)
	if err != nil {
		return m, err
	}
	m.ProfileSeconds = o.Profile.Seconds()
	m.ProfileCPUSeconds = share.Total.Seconds()
	m.VolumeManagerCPUSeconds = share.Matched.Seconds()
	m.VolumeManagerTop = share.Top
	logf("volume manager: %.1f%% of %.2f CPU-s sampled", 100*share.Fraction(), share.Total.Seconds())

	singles := min(o.Singles, o.Pods)
	logf("deleting %d pods, %v apart", singles, o.Gap)
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
	if err := waitRunning(ctx, n, o.Pods, 5*time.Minute); err != nil {
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
	if len(m.Mount) < singles || len(m.Unmount) < singles {
		return m, fmt.Errorf("the kubelet log has %d of %d mount waits and %d of %d unmount waits (it must run at --v=3)",
			len(m.Mount), singles, len(m.Unmount), singles)
	}
	if metrics, err := n.Metrics(ctx); err == nil && metrics.Has("volume_manager_loop_iterations_total") {
		m.Triggers = metrics.ByLabel("volume_manager_loop_iterations_total", "trigger")
	}
	return m, nil
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

// Median is the median of xs by the nearest-rank method, or NaN.
func Median(xs []float64) float64 { return bench.Quantile(xs, 0.5) }
