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

// Package node_test runs the patched kubelet on a real node through
// pkg/node. The tests need root and the binaries from make and make
// node-deps, and run only when EVM_NODE asks for them (require): smoke (make
// test, as root), full (make node-test) or cluster (make node-test-cluster).
// NODE_RUNTIME=containerd|crio picks the runtime, and
// NODE_CRIO_POD_EVENTS=false turns CRI-O's container events off. Each test
// starts its own node and checks, when it stops, that the host is as it was.
package node_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"evented-volume-manager/pkg/cluster"
	"evented-volume-manager/pkg/kep"
	"evented-volume-manager/pkg/kubeletlog"
	"evented-volume-manager/pkg/node"
)

func TestMain(m *testing.M) {
	stop := node.HandleInterrupts(func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
	})
	code := m.Run()
	stop()
	os.Exit(code)
}

// outDir is the project's build output, _output.
func outDir(t *testing.T) string {
	out, err := filepath.Abs(filepath.Join("..", "..", "_output"))
	must(t, err)
	return out
}

// must fails the test at once on an error.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// require skips the test unless EVM_NODE selects its mode (full also runs
// smoke), and fails it if the node cannot run here although it was asked for.
func require(t *testing.T, mode string) {
	t.Helper()
	switch env := os.Getenv("EVM_NODE"); {
	case mode == "cluster" && env != "cluster":
		t.Skip("cluster-node test: make node-test-cluster runs it (EVM_NODE=cluster)")
	case mode == "cluster", env == "full", env == "smoke" && mode == "smoke":
	case env == "smoke":
		t.Skip("EVM_NODE=smoke runs TestNodeSmoke only; make node-test runs this (EVM_NODE=full)")
	default:
		t.Skip("real-node test: make node-test runs it (EVM_NODE=full), and make test runs the smoke test as root (EVM_NODE=smoke)")
	}
	rt, err := node.RuntimeFromEnv()
	must(t, err)
	err = node.Preflight(outDir(t), rt)
	if mode == "cluster" {
		err = cmp.Or(err, cluster.Preflight(outDir(t)))
	}
	if err != nil {
		t.Fatalf("EVM_NODE=%s, but %v", os.Getenv("EVM_NODE"), err)
	}
}

// startNode starts a node, the gate on unless options say otherwise, until the test ends.
func startNode(t *testing.T, options ...func(*node.Options)) *node.Node {
	t.Helper()
	n := startRuntime(t, options...)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := n.StartKubelet(ctx); err != nil {
		t.Fatalf("starting the kubelet: %v", err)
	}
	return n
}

// seriesKubelet is the series' kubelet with the EventedVolumeManager gate.
func seriesKubelet(gate bool) node.Kubelet {
	return node.SeriesKubelet("", map[string]bool{node.EventedVolumeManager: gate})
}

// startCluster starts a cluster node (pkg/cluster) as startNode does.
func startCluster(t *testing.T, options ...func(*node.Options)) *cluster.Cluster {
	t.Helper()
	n := startRuntime(t, options...)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	c, err := cluster.Start(ctx, n)
	if err != nil {
		t.Fatalf("starting the cluster: %v", err)
	}
	return c
}

// startRuntime starts a node's runtime, without a kubelet.
func startRuntime(t *testing.T, options ...func(*node.Options)) *node.Node {
	t.Helper()
	out := outDir(t)
	before := node.TakeSnapshot()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	rt, err := node.RuntimeFromEnv()
	must(t, err)
	o := node.Options{
		Out:     out,
		Work:    filepath.Join(out, "node", strings.ReplaceAll(t.Name(), "/", "_")),
		Kubelet: seriesKubelet(true),
		Runtime: rt,
		Logf:    t.Logf,
	}
	for _, option := range options {
		option(&o)
	}
	n, err := node.Start(ctx, o)
	if err != nil {
		t.Fatalf("starting the node: %v", err)
	}
	t.Cleanup(func() {
		if err := n.Stop(); err != nil {
			t.Errorf("stopping the node: %v", err)
		}
		if err := before.Restored(out, n.Work()); err != nil {
			t.Errorf("the host is not as it was: %v", err)
		}
	})
	must(t, os.WriteFile(filepath.Join(n.HostPathDir(), "greeting"), []byte("from-the-host\n"), 0o644))
	return n
}

// eventually polls cond every 100ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v (last error: %v)", what, timeout, err)
		}
		select {
		case <-t.Context().Done():
			t.Fatalf("%s: %v", what, t.Context().Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// addPod adds a PodManifest pod, waits until it runs, and returns its name and container's ID.
func addPod(t *testing.T, n *node.Node, name string, annotations map[string]string) (string, string) {
	t.Helper()
	must(t, n.AddPod(name, node.PodManifest(name, n.HostPathDir(), annotations)))
	return n.PodName(name), containerRunning(t, n, n.PodName(name))
}

// containerRunning waits until podName's container runs, and returns its ID.
func containerRunning(t *testing.T, n *node.Node, podName string) string {
	t.Helper()
	var cid string
	eventually(t, 2*time.Minute, podName+"'s container runs", func() (bool, error) {
		var err error
		cid, err = n.RunningContainer(t.Context(), podName, "bb")
		return cid != "", err
	})
	return cid
}

// checkVolumes checks what the container sees in each of its volumes, and
// that the kubelet has a directory for each.
func checkVolumes(t *testing.T, n *node.Node, podName, cid string) string {
	t.Helper()
	for _, c := range []struct{ path, want string }{
		{"/host/greeting", "from-the-host"},
		{"/data/hello", "written-by-container"},
		{"/etc/podinfo/labels", `app="evm"`},
	} {
		var got string
		eventually(t, 30*time.Second, podName+" sees "+c.path, func() (bool, error) {
			var err error
			got, err = n.Exec(t.Context(), cid, "cat", c.path)
			return err == nil && got == c.want, err
		})
	}
	uid, err := n.PodUID(t.Context(), podName)
	if err != nil || uid == "" {
		t.Fatalf("%s's UID: %q, %v", podName, uid, err)
	}
	for _, v := range []string{
		"kubernetes.io~empty-dir/scratch",
		"kubernetes.io~downward-api/labels",
		"kubernetes.io~downward-api/annotations",
	} {
		if _, err := os.Stat(filepath.Join(n.PodDir(uid), "volumes", v)); err != nil {
			t.Errorf("%s: volume directory: %v", podName, err)
		}
	}
	return uid
}

// removePod deletes a pod and waits until the kubelet has removed its directory.
func removePod(t *testing.T, n *node.Node, name, uid string) {
	t.Helper()
	must(t, n.RemovePod(name))
	waitRemoved(t, n, time.Minute, n.PodName(name)+"'s directory is removed", uid)
}

// waitRemoved waits until the kubelet has removed the pods' directories.
func waitRemoved(t *testing.T, n *node.Node, timeout time.Duration, what string, uids ...string) {
	t.Helper()
	eventually(t, timeout, what, func() (bool, error) {
		for _, uid := range uids {
			if _, err := os.Stat(n.PodDir(uid)); !os.IsNotExist(err) {
				return false, fmt.Errorf("%s remains", n.PodDir(uid))
			}
		}
		return true, nil
	})
}

// waitVolumeWaits waits until the kubelet has logged the end of each pod's
// mount wait if mount is set, and of its unmount wait if unmount is.
func waitVolumeWaits(t *testing.T, n *node.Node, timeout time.Duration, what string, mount, unmount bool, podNames ...string) kubeletlog.VolumeWaits {
	t.Helper()
	var waits kubeletlog.VolumeWaits
	eventually(t, timeout, what, func() (bool, error) {
		var err error
		if waits, err = kubeletlog.ParseFile(n.KubeletLog(), kubeletlog.ParseVolumeWaits); err != nil {
			return false, err
		}
		for _, p := range podNames {
			if _, ok := waits.Mount["default/"+p]; mount && !ok {
				return false, fmt.Errorf("%s has no volume-ready line", p)
			}
			if _, ok := waits.Unmount["default/"+p]; unmount && !ok {
				return false, fmt.Errorf("%s has no \"All volumes are unmounted\" line", p)
			}
		}
		return true, nil
	})
	return waits
}

// waitVolumesMatch waits until the volume manager's actual and desired
// states of world both hold want volumes.
func waitVolumesMatch(t *testing.T, n *node.Node, timeout time.Duration, what string, want float64) {
	t.Helper()
	eventually(t, timeout, what, func() (bool, error) {
		m, err := n.Metrics(t.Context())
		if err != nil {
			return false, err
		}
		asw := m.Sum("volume_manager_total_volumes", "state", "actual_state_of_world")
		dsw := m.Sum("volume_manager_total_volumes", "state", "desired_state_of_world")
		return asw == want && dsw == want, fmt.Errorf("actual %v, desired %v, want %v", asw, dsw, want)
	})
}

func metrics(t *testing.T, n *node.Node) node.Metrics {
	t.Helper()
	m, err := n.Metrics(t.Context())
	if err != nil {
		t.Fatalf("scraping the kubelet's metrics: %v", err)
	}
	return m
}

// checkKEPMetrics checks that the series' metrics in m, a scrape with the
// gate on, are kep.yaml's and KEP.md's table's, with its types and labels.
func checkKEPMetrics(t *testing.T, m node.Metrics) {
	t.Helper()
	sets, table, err := kep.Documented(filepath.Join("..", ".."))
	must(t, err)
	exposed, unseen, err := kep.Exposed(m, table)
	if err != nil {
		t.Error(err)
	}
	if len(unseen) > 0 {
		t.Logf("not checked: /metrics shows a metric with labels once it has a value, and %v have none yet", unseen)
	}
	sets["the kubelet's /metrics"] = exposed
	if err := kep.Compare(sets); err != nil {
		t.Error(err)
	}
}

// TestNodeSmoke runs one pod with emptyDir, hostPath and downwardAPI volumes
// and deletes it.
func TestNodeSmoke(t *testing.T) {
	require(t, "smoke")
	n := startNode(t)
	podName, cid := addPod(t, n, "smoke", nil)
	uid := checkVolumes(t, n, podName, cid)
	waitForStream(t, n)
	m := metrics(t, n)
	checkKEPMetrics(t, m)
	woken := m.Sum("volume_manager_loop_iterations_total") - m.Sum("volume_manager_loop_iterations_total", "trigger", "timer")
	if woken == 0 {
		t.Errorf("no loop iteration was woken by an event: %v", m.ByLabel("volume_manager_loop_iterations_total", "trigger"))
	}
	t.Logf("loop iterations by trigger: %v", m.ByLabel("volume_manager_loop_iterations_total", "trigger"))
	removePod(t, n, "smoke", uid)
	// The pod worker's WaitForUnmount and the housekeeping that removes the
	// pod's directory run independently: wait for the log line too.
	waits := waitVolumeWaits(t, n, 30*time.Second, "the kubelet logs the pod's mount and unmount waits", true, true, podName)
	t.Logf("volume-ready wait %v, unmount wait %v", waits.Mount["default/"+podName], waits.Unmount["default/"+podName])
}

// The metrics of EventedPLEG's watcher, the kubelet's CRI event stream.
const (
	streamConnections = "kubelet_evented_pleg_connection_success_count"
	streamFailures    = "kubelet_evented_pleg_connection_error_count"
)

// waitForStream waits until EventedPLEG's watcher has connected its event
// stream or, on a runtime without events, tried.
func waitForStream(t *testing.T, n *node.Node) {
	t.Helper()
	metric, what := streamConnections, "the runtime event stream is connected"
	if !n.StreamsEvents() {
		metric, what = streamFailures, "the watcher's first stream attempt fails"
	}
	eventually(t, 30*time.Second, what, func() (bool, error) {
		return metrics(t, n).Sum(metric) >= 1, nil
	})
}

// TestRuntimeRestarts SIGKILLs the container runtime ten times, 6 to 9 s
// apart, gate on, adding a pod during each outage: when the runtime answers
// again EventedPLEG's watcher has its CRI event stream back within its
// reconnect backoff, and the pod gets its volumes within the fallback cap.
// Then a container that exits on its own gets its pod relisted at once
// through the stream. Without events the stream is retried slowly only.
func TestRuntimeRestarts(t *testing.T) {
	require(t, "full")
	started := time.Now()
	n := startNode(t)
	survivor, survivorCID := addPod(t, n, "survivor", nil)
	waitForStream(t, n)
	streams := n.StreamsEvents()

	const (
		restarts    = 10
		fallbackCap = time.Second
		// The watcher's attempts come about 0.1, 0.3, 0.7, 1.5, 3.1 and 6.3 s
		// (up to 7.6 s with jitter) after the kill, and the runtime answers 2
		// to 4 s after it: the next attempt comes up to about 4.5 s later
		// (after a slower start, up to 15 s after the kill). 8 s with slack.
		backWithin = 8 * time.Second
	)
	rng := rand.New(rand.NewPCG(1, 2))
	var backs []time.Duration
	for i := 1; i <= restarts; i++ {
		cycle := time.Now()
		spacing := 6*time.Second + time.Duration(rng.Int64N(int64(3*time.Second)))
		// A reconnect shows as the stream's failures rising, then its connections.
		before := metrics(t, n)
		failures, connections := before.Sum(streamFailures), before.Sum(streamConnections)
		must(t, n.KillRuntime())
		if streams {
			eventually(t, 30*time.Second, "the kubelet sees the event stream drop", func() (bool, error) {
				return metrics(t, n).Sum(streamFailures) > failures, nil
			})
		}
		name := fmt.Sprintf("outage-%d", i)
		must(t, n.AddPod(name, node.PodManifest(name, n.HostPathDir(), nil)))
		time.Sleep(2 * time.Second) // the outage: the pod is added while the runtime is down
		// StartRuntime returns once the runtime answers on its socket.
		must(t, n.StartRuntime(t.Context()))
		answered := time.Now()
		var back time.Duration
		if streams {
			for metrics(t, n).Sum(streamConnections) <= connections {
				if time.Since(answered) > time.Minute {
					t.Fatalf("restart %d: the event stream is not back a minute after the runtime answered", i)
				}
				time.Sleep(20 * time.Millisecond)
			}
			back = time.Since(answered)
			backs = append(backs, back)
		}
		podName := n.PodName(name)
		checkVolumes(t, n, podName, containerRunning(t, n, podName))
		waits, err := kubeletlog.ParseFile(n.KubeletLog(), kubeletlog.ParseVolumeWaits)
		must(t, err)
		wait, ok := waits.Mount["default/"+podName]
		if !ok {
			t.Fatalf("the kubelet log has no mount wait for %s", podName)
		}
		if streams {
			t.Logf("restart %d: the stream was back %v after the runtime answered; %s's volumes were ready %v after its wait began",
				i, back.Round(time.Millisecond), podName, wait)
		} else {
			t.Logf("restart %d: %s's volumes were ready %v after its wait began", i, podName, wait)
		}
		if back > backWithin {
			t.Errorf("restart %d: the stream was back %v after the runtime answered, more than %v", i, back.Round(time.Millisecond), backWithin)
		}
		if wait > fallbackCap {
			t.Errorf("restart %d: %s waited %v for its volumes, more than the %v cap", i, podName, wait, fallbackCap)
		}
		time.Sleep(time.Until(cycle.Add(spacing)))
	}
	// The first pod's container ran through every restart.
	if cid, err := n.RunningContainer(t.Context(), survivor, "bb"); err != nil || cid != survivorCID {
		t.Fatalf("%s's container is %q (%v), want %q still running", survivor, cid, err, survivorCID)
	}
	if !streams {
		checkTimerOnly(t, n, started)
		return
	}
	slices.Sort(backs)
	t.Logf("stream back after the runtime answered: min %v, median %v, max %v", backs[0], backs[len(backs)/2], backs[len(backs)-1])

	m := metrics(t, n)
	t.Logf("stream connections %v, failures %v", m.Sum(streamConnections), m.Sum(streamFailures))
	if got := m.Sum(streamConnections); got < float64(restarts+1) {
		t.Errorf("%s is %v after %d restarts, want at least %d", streamConnections, got, restarts, restarts+1)
	}
	// Every kill broke an open stream: each counts at least one failure.
	if got := m.Sum(streamFailures); got < float64(restarts) {
		t.Errorf("%v stream failures, want at least %d: one per runtime restart", got, restarts)
	}
	checkExitRelisted(t, n, m.Sum("kubelet_pleg_pod_relist_duration_seconds"))
}

// checkTimerOnly checks that, on a runtime without events, the watcher
// retried the stream since since on its backoff (100 ms doubling to 30 s: 9
// attempts in the first 51 s, then one every 30 s), not in a busy loop.
func checkTimerOnly(t *testing.T, n *node.Node, since time.Time) {
	t.Helper()
	attempts := metrics(t, n).Sum(streamFailures)
	if limit := time.Since(since).Seconds()/30 + 10; attempts > limit {
		t.Errorf("%v stream attempts in %v, more than %v: a busy loop", attempts, time.Since(since).Round(time.Second), limit)
	}
	t.Logf("stream attempts %v in %v", attempts, time.Since(since).Round(time.Second))
}

// checkExitRelisted checks that a container that exits on its own gets its
// pod relisted at once through the stream (logged at --v=4), beyond podRelists.
func checkExitRelisted(t *testing.T, n *node.Node, podRelists float64) {
	t.Helper()
	must(t, n.SetVerbosity(t.Context(), 4))
	const exits = "exits"
	must(t, n.AddPod(exits, node.ExitingPodManifest(exits, n.HostPathDir(), 3*time.Second)))
	exitsName := n.PodName(exits)
	var uid string
	eventually(t, 2*time.Minute, exitsName+" is known to the kubelet", func() (bool, error) {
		var err error
		uid, err = n.PodUID(t.Context(), exitsName)
		return uid != "", err
	})
	eventually(t, 2*time.Minute, exitsName+"'s exit requests its relist through the stream", func() (bool, error) {
		lines, err := kubeletlog.Lines(n.KubeletLog(), "Evented PLEG: requested pod relist after container termination")
		named := slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, `podUID="`+uid+`"`) })
		return err == nil && named && metrics(t, n).Sum("kubelet_pleg_pod_relist_duration_seconds") > podRelists, err
	})
}

// TestKubeletRestartReconstructs restarts the kubelet with pods running and
// one deleted while it was down: the kubelet rebuilds what is mounted from
// disk, the running pods keep their volumes and data, the deleted one's go.
func TestKubeletRestartReconstructs(t *testing.T) {
	require(t, "full")
	n := startNode(t)
	type pod struct{ name, podName, cid, uid string }
	var pods []pod
	for _, name := range []string{"keep-1", "keep-2", "gone"} {
		podName, cid := addPod(t, n, name, nil)
		pods = append(pods, pod{name, podName, cid, checkVolumes(t, n, podName, cid)})
	}
	_, err := n.Exec(t.Context(), pods[0].cid, "sh", "-c", "echo before-restart > /data/marker")
	must(t, err)
	n.StopKubelet()
	must(t, n.RemovePod("gone"))
	must(t, n.StartKubelet(t.Context()))
	waitRemoved(t, n, 2*time.Minute, "the pod deleted while the kubelet was down has its directory removed", pods[2].uid)
	for _, p := range pods[:2] {
		if cid, err := n.RunningContainer(t.Context(), p.podName, "bb"); err != nil || cid != p.cid {
			t.Errorf("%s's container is %q (%v), want %q still running", p.podName, cid, err, p.cid)
		}
		checkVolumes(t, n, p.podName, p.cid)
	}
	if got, err := n.Exec(t.Context(), pods[0].cid, "cat", "/data/marker"); err != nil || got != "before-restart" {
		t.Errorf("the emptyDir lost its data across the restart: %q, %v", got, err)
	}
	// The actual state of the world, rebuilt from disk, matches the desired.
	waitVolumesMatch(t, n, time.Minute, "the volume manager's actual state matches its desired state", 2*node.VolumesPerPod)
	// After the restart, deleting a pod still tears its volumes down.
	removePod(t, n, pods[1].name, pods[1].uid)
}

// TestChurnFlood adds 100 pods at once and then deletes them all at once, a
// flood of events on the runtime's stream, as churnFlood says.
func TestChurnFlood(t *testing.T) {
	require(t, "full")
	churnFlood(t, startNode(t), 100, 0)
}

// TestChurnWithExits runs 125 pods deleted at once beside 125 whose
// containers exit on their own 30 to 90 s after they start (churnFlood).
func TestChurnWithExits(t *testing.T) {
	require(t, "full")
	churnFlood(t, startNode(t, func(o *node.Options) { o.MaxPods = 260 }), 125, 125)
}

// churnFlood adds pods pods and exiting exiting pods at once, waits until
// they run, deletes the first all at once, then the exiting ones. No mount
// or unmount may be lost: every pod's volume waits end, its directory is
// removed, and nothing stays mounted under the kubelet's pods.
func churnFlood(t *testing.T, n *node.Node, pods, exiting int) {
	t.Helper()
	waitForStream(t, n)
	names, exits := make([]string, pods), make([]string, exiting)
	for i := range names {
		names[i] = fmt.Sprintf("flood-%03d", i)
		must(t, n.AddPod(names[i], node.PodManifest(names[i], n.HostPathDir(), nil)))
	}
	for i := range exits {
		exits[i] = fmt.Sprintf("exit-%03d", i)
		after := 30*time.Second + time.Duration(i)*time.Minute/time.Duration(exiting)
		must(t, n.AddPod(exits[i], node.ExitingPodManifest(exits[i], n.HostPathDir(), after)))
	}
	added := time.Now()
	uids := map[string]string{}
	eventually(t, 10*time.Minute, "every flood pod's container runs", func() (bool, error) {
		for _, name := range slices.Concat(names, exits) {
			if uids[name] != "" {
				continue
			}
			if slices.Contains(names, name) {
				if cid, err := n.RunningContainer(t.Context(), n.PodName(name), "bb"); err != nil || cid == "" {
					return false, err
				}
			}
			uid, err := n.PodUID(t.Context(), n.PodName(name))
			if err != nil || uid == "" {
				return false, err
			}
			uids[name] = uid
		}
		return true, nil
	})
	t.Logf("%d pods running %v after their manifests were written", pods, time.Since(added).Round(time.Second))
	podNames := func(names []string) (podNames, uidsOf []string) {
		for _, name := range names {
			podNames, uidsOf = append(podNames, n.PodName(name)), append(uidsOf, uids[name])
		}
		return podNames, uidsOf
	}
	floodPods, floodUIDs := podNames(names)
	waitVolumeWaits(t, n, time.Minute, "every flood pod's volume wait ends", true, false, floodPods...)

	for _, name := range names {
		must(t, n.RemovePod(name))
	}
	removed := time.Now()
	waitRemoved(t, n, 10*time.Minute, "every flood pod's directory is removed", floodUIDs...)
	t.Logf("%d pods' directories removed %v after their manifests were", pods, time.Since(removed).Round(time.Second))
	if exiting > 0 {
		exitPods, exitUIDs := podNames(exits)
		waitVolumeWaits(t, n, 5*time.Minute, "every exiting pod's volumes are unmounted after its exit", false, true, exitPods...)
		eventually(t, 5*time.Minute, "every exiting pod's volumes are unmounted after its exit", func() (bool, error) {
			for i, uid := range exitUIDs {
				if ms := node.MountsUnder(filepath.Join(n.PodDir(uid), "volumes")); len(ms) > 0 {
					return false, fmt.Errorf("%s's volumes are still mounted: %v", exitPods[i], ms)
				}
			}
			return true, nil
		})
		t.Logf("%d exiting pods' volumes unmounted, %v after the first manifest was written", exiting, time.Since(added).Round(time.Second))
		for _, name := range exits {
			must(t, n.RemovePod(name))
		}
		waitRemoved(t, n, 5*time.Minute, "every exited pod's directory is removed", exitUIDs...)
		floodPods = append(floodPods, exitPods...)
	}
	// The pod workers' WaitForUnmount and the housekeeping that removes the
	// pods' directories run independently: wait for the log lines too.
	waitVolumeWaits(t, n, 2*time.Minute, "every flood pod's unmount wait ends", false, true, floodPods...)
	if ms := node.MountsUnder(filepath.Join(n.KubeletRoot(), "pods")); len(ms) > 0 {
		t.Errorf("still mounted under the kubelet's pods: %v", ms)
	}
	m := metrics(t, n)
	t.Logf("event stream connections %v, failures %v", m.Sum(streamConnections), m.Sum(streamFailures))
	dropped, counted, err := n.RuntimeDroppedEvents(t.Context())
	must(t, err)
	if counted && n.StreamsEvents() {
		t.Logf("%s dropped %v container events", n.RuntimeLabel(), dropped)
	}
}
