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
	"time"

	"evented-volume-manager/pkg/kubeletlog"
	"evented-volume-manager/pkg/node"
)

// ExitStep is a stretch of an exiting pod's way from its container's exit
// to its last volume torn down, between two of the kubelet's log lines From
// and To (or, From containerExit, the runtime's finishedAt). Key names it in
// JSON, Name in reports.
type ExitStep struct {
	Key, Name string
	From, To  kubeletlog.ExitPhase
}

const containerExit kubeletlog.ExitPhase = -1

// ExitSteps are the steps the report shows, in order. The runtime's event
// and the relist overlap: with EventedPLEG's watcher the relist follows
// the event, without it the periodic relist finds the exit.
var ExitSteps = []ExitStep{
	{"exitToEvent", "exit → runtime's event seen (the runtime's part)", containerExit, kubeletlog.ExitEventSeen},
	{"exitToRelist", "exit → a relist sees it", containerExit, kubeletlog.ExitRelisted},
	{"relistToTerminal", "relist → pod found terminal (SyncPod)", kubeletlog.ExitRelisted, kubeletlog.ExitPodTerminal},
	{"terminalToTerminating", "pod terminal → SyncTerminatingPod (waits for a newer status)", kubeletlog.ExitPodTerminal, kubeletlog.ExitTerminatingEnter},
	{"terminatingToTerminated", "SyncTerminatingPod → termination complete (stops the sandbox)", kubeletlog.ExitTerminatingEnter, kubeletlog.ExitTerminated},
	{"terminatedToTearDown", "termination complete → last TearDown", kubeletlog.ExitTerminated, kubeletlog.ExitTearDownDone},
}

// exitSteps times ExitSteps for each exited container from the kubelet's
// log.
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

// CrashLoopCost is what crash-looping pods cost the node over a window.
type CrashLoopCost struct {
	// Pods crash-looped for WindowSeconds, in which the kubelet started
	// Restarts containers, relisted single pods PodRelists times (the
	// PLEG's on-demand relists), and used KubeletCPU CPU-seconds.
	Pods          int     `json:"pods"`
	WindowSeconds float64 `json:"windowSeconds"`
	Restarts      float64 `json:"restarts"`
	PodRelists    float64 `json:"podRelists"`
	KubeletCPU    float64 `json:"kubeletCPU"`
}

// crashLoopAfter is how long a crash-looping pod's container runs before it
// exits 1.
const crashLoopAfter = 2 * time.Second

// measureCrashLoop adds pods whose container exits 1 every crashLoopAfter
// (restartPolicy Always) and measures over window what they cost: the
// watcher requests a relist on every container stop, not only on those that
// end a pod.
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
	cost := &CrashLoopCost{
		Pods:          pods,
		WindowSeconds: s.Seconds,
		Restarts:      after.Sum(started) - before.Sum(started),
		PodRelists:    after.Sum(relists) - before.Sum(relists),
		KubeletCPU:    s.Kubelet,
	}
	logf("crash loop: %v containers started, %v single-pod relists, kubelet %.2f CPU-s in %.0f s",
		cost.Restarts, cost.PodRelists, cost.KubeletCPU, cost.WindowSeconds)
	return cost, nil
}
