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
// pkg/node: containerd and runc, or CRI-O, conmon and runc. The tests need
// root and the binaries from make and make node-deps, and run only when
// EVM_NODE asks for them:
//
//	EVM_NODE=smoke  TestNodeSmoke only (make test, as root)
//	EVM_NODE=full   every test here (make node-test)
//
// NODE_RUNTIME=containerd|crio picks the runtime (containerd by default), and
// NODE_CRIO_POD_EVENTS=false turns CRI-O's container events off.
//
// Each test starts its own node, with the EventedVolumeManager gate on
// unless it flips the gate (flip_test.go), and checks, when it stops, that
// the host is as it was.
package node_test

import (
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
	t.Helper()
	out, err := filepath.Abs(filepath.Join("..", "..", "_output"))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// require skips the test unless EVM_NODE selects it, and fails it if the
// node cannot run here although it was asked for.
func require(t *testing.T, smoke bool) {
	t.Helper()
	switch mode := os.Getenv("EVM_NODE"); {
	case mode == "full":
	case mode == "smoke" && smoke:
	case mode == "smoke":
		t.Skip("EVM_NODE=smoke runs TestNodeSmoke only; make node-test runs this (EVM_NODE=full)")
	default:
		t.Skip("real-node test: make node-test runs it (EVM_NODE=full), and make test runs the smoke test as root (EVM_NODE=smoke)")
	}
	preflight(t)
}

// requireCluster skips the test unless EVM_NODE=cluster (make
// node-test-cluster) asks for it, and fails it if a cluster node cannot run
// here although it was asked for.
func requireCluster(t *testing.T) {
	t.Helper()
	if os.Getenv("EVM_NODE") != "cluster" {
		t.Skip("cluster-node test: make node-test-cluster runs it (EVM_NODE=cluster)")
	}
	preflight(t)
	if err := cluster.Preflight(outDir(t)); err != nil {
		t.Fatalf("EVM_NODE=cluster, but %v", err)
	}
}

// preflight fails the test if the node EVM_NODE asks for cannot run here.
func preflight(t *testing.T) {
	t.Helper()
	rt, err := node.RuntimeFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Preflight(outDir(t), rt); err != nil {
		t.Fatalf("EVM_NODE=%s, but %v", os.Getenv("EVM_NODE"), err)
	}
}

// startNode starts a node with the gate on and stops it when the test ends,
// checking then that the host is as it was.
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

// startCluster starts a cluster node (pkg/cluster) with the gate on and
// stops it when the test ends, as startNode does.
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

// startRuntime starts a node's runtime, without a kubelet, for startNode
// and startCluster.
func startRuntime(t *testing.T, options ...func(*node.Options)) *node.Node {
	t.Helper()
	out := outDir(t)
	before := node.TakeSnapshot()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	rt, err := node.RuntimeFromEnv()
	if err != nil {
		t.Fatal(err)
	}
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
	if err := os.WriteFile(filepath.Join(n.HostPathDir(), "greeting"), []byte("from-the-host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
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

// addPod adds a PodManifest pod and waits until its container runs. It
// returns the pod's kubelet name and its container's ID.
func addPod(t *testing.T, n *node.Node, name string, annotations map[string]string) (string, string) {
	t.Helper()
	if err := n.AddPod(name, node.PodManifest(name, n.HostPathDir(), annotations)); err != nil {
		t.Fatal(err)
	}
	return n.PodName(name), containerRunning(t, n, n.PodName(name))
}

// containerRunning waits until the container of the pod the kubelet calls
// podName runs, and returns its ID.
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

// removePod deletes a pod and waits until the kubelet has removed its
// directory, volumes included.
func removePod(t *testing.T, n *node.Node, name, uid string) {
	t.Helper()
	if err := n.RemovePod(name); err != nil {
		t.Fatal(err)
	}
	waitRemoved(t, n, time.Minute, n.PodName(name)+"'s directory is removed", uid)
}

// waitRemoved waits until the kubelet has removed the directories of the
// pods with uids.
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
// mount wait, if mount is set, and of its unmount wait, if unmount is.
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

// waitVolumesMatch waits until the volume manager's actual state of world,
// rebuilt from disk after a kubelet restart, holds want volumes, as its
// desired state does.
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

// checkKEPMetrics checks that the series' metrics in m, a scrape of the
// kubelet's /metrics with the gate on, are kep.yaml's metrics and KEP.md's
// metrics table, with the table's types and labels.
func checkKEPMetrics(t *testing.T, m node.Metrics) {
	t.Helper()
	sets, table, err := kep.Documented(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
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
	require(t, true)
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

// The metrics of EventedPLEG's watcher, which the gate runs: the kubelet's
// only CRI container event stream.
const (
	streamConnections = "kubelet_evented_pleg_connection_success_count"
	streamFailures    = "kubelet_evented_pleg_connection_error_count"
)

// waitForStream waits until EventedPLEG's watcher has connected its CRI
// container event stream. On a runtime without events it checks instead
// that the watcher tried and does not retry in a busy loop.
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
// apart, with EventedVolumeManager on. Each time a pod is added during the
// outage; when the runtime answers again EventedPLEG's watcher, which the
// gate runs, has its CRI event stream back within its reconnect backoff,
// and the pod gets its volumes within the fallback period's cap. Afterwards
// a container that exits on its own gets its pod relisted at once, through
// the stream. On a runtime without events the pods still get their volumes
// within the cap, and the stream is retried at its slow period only.
func TestRuntimeRestarts(t *testing.T) {
	require(t, false)
	started := time.Now()
	n := startNode(t)
	survivor, survivorCID := addPod(t, n, "survivor", nil)
	waitForStream(t, n)
	streams := n.StreamsEvents()

	const restarts = 10
	const (
		fallbackCap = time.Second
		// The watcher retries on its backoff, 100 ms doubling with up to 20%
		// jitter: its attempts come about 0.1, 0.3, 0.7, 1.5, 3.1 and 6.3 s
		// (up to 7.6 s) after the kill. The runtime answers 2 to 4 s after
		// it, so the attempt after that comes up to about 4.5 s later; a
		// runtime slower to start, after the 6.3 s attempt, waits for the
		// next one, up to 15 s after the kill. 8 s with slack for the first
		// case; the distribution is logged.
		backWithin = 8 * time.Second
	)
	rng := rand.New(rand.NewPCG(1, 2))
	var backs []time.Duration
	for i := 1; i <= restarts; i++ {
		cycle := time.Now()
		spacing := 6*time.Second + time.Duration(rng.Int64N(int64(3*time.Second)))
		// A reconnect shows as the stream's failures rising, then its
		// connections. Without events the stream is retried only every 30 s.
		before := metrics(t, n)
		failures, connections := before.Sum(streamFailures), before.Sum(streamConnections)
		if err := n.KillRuntime(); err != nil {
			t.Fatal(err)
		}
		if streams {
			eventually(t, 30*time.Second, "the kubelet sees the event stream drop", func() (bool, error) {
				return metrics(t, n).Sum(streamFailures) > failures, nil
			})
		}
		name := fmt.Sprintf("outage-%d", i)
		if err := n.AddPod(name, node.PodManifest(name, n.HostPathDir(), nil)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // the outage: the pod is added while the runtime is down
		// StartRuntime returns once the runtime answers on its socket.
		if err := n.StartRuntime(t.Context()); err != nil {
			t.Fatal(err)
		}
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
		if err != nil {
			t.Fatal(err)
		}
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

// checkTimerOnly checks a node whose runtime streams no events: since since,
// the watcher retried the stream on its backoff (100 ms doubling to a 30 s
// cap: 9 attempts in the first 51 s, then one every 30 s), not in a busy
// loop. (A runtime that accepts the stream and closes it at once, as CRI-O
// with pod events off does, counts a connection each time.)
func checkTimerOnly(t *testing.T, n *node.Node, since time.Time) {
	t.Helper()
	attempts := metrics(t, n).Sum(streamFailures)
	if limit := time.Since(since).Seconds()/30 + 10; attempts > limit {
		t.Errorf("%v stream attempts in %v, more than %v: a busy loop", attempts, time.Since(since).Round(time.Second), limit)
	}
	t.Logf("stream attempts %v in %v", attempts, time.Since(since).Round(time.Second))
}

// checkExitRelisted checks that a container that exits on its own gets its
// pod relisted at once through the stream, beyond podRelists relists: the
// watcher logs the request at --v=4 with the pod's UID.
func checkExitRelisted(t *testing.T, n *node.Node, podRelists float64) {
	t.Helper()
	if err := n.SetVerbosity(t.Context(), 4); err != nil {
		t.Fatal(err)
	}
	const exits = "exits"
	if err := n.AddPod(exits, node.ExitingPodManifest(exits, n.HostPathDir(), 3*time.Second)); err != nil {
		t.Fatal(err)
	}
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

// TestKubeletRestartReconstructs restarts the kubelet with pods running, and
// one pod deleted while it was down. The kubelet must rebuild its view of
// what is mounted from disk: the running pods keep their volumes and data,
// and the deleted pod's volumes are unmounted and removed.
func TestKubeletRestartReconstructs(t *testing.T) {
	require(t, false)
	n := startNode(t)
	type pod struct{ name, podName, cid, uid string }
	var pods []pod
	for _, name := range []string{"keep-1", "keep-2", "gone"} {
		podName, cid := addPod(t, n, name, nil)
		pods = append(pods, pod{name, podName, cid, checkVolumes(t, n, podName, cid)})
	}
	if _, err := n.Exec(t.Context(), pods[0].cid, "sh", "-c", "echo before-restart > /data/marker"); err != nil {
		t.Fatal(err)
	}

	n.StopKubelet()
	if err := n.RemovePod("gone"); err != nil {
		t.Fatal(err)
	}
	if err := n.StartKubelet(t.Context()); err != nil {
		t.Fatal(err)
	}

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

// TestChurnFlood adds 100 pods at once and then deletes them all at once: a
// flood of container starts and stops on the runtime's event stream.
// churnFlood says what must hold.
func TestChurnFlood(t *testing.T) {
	require(t, false)
	churnFlood(t, startNode(t), 100, 0)
}

// TestChurnWithExits runs 250 pods, maxPods raised: 125 that run until their
// manifests are removed, all at once, and 125 with restartPolicy Never whose
// containers exit on their own 30 to 90 s after they start, beside those
// deletions. churnFlood says what must hold.
func TestChurnWithExits(t *testing.T) {
	require(t, false)
	churnFlood(t, startNode(t, func(o *node.Options) { o.MaxPods = 260 }), 125, 125)
}

// churnFlood adds pods pods and exiting exiting pods at once, waits until
// the pods run, and deletes them all at once; then it deletes the exiting
// pods too. No mount or unmount may be lost: every pod's volume wait ends,
// every pod's volumes are unmounted and its directory removed, and nothing
// stays mounted under the kubelet's pods. On CRI-O the events it dropped, if
// any, are read from its own metric.
func churnFlood(t *testing.T, n *node.Node, pods, exiting int) {
	t.Helper()
	waitForStream(t, n)
	names, exits := make([]string, pods), make([]string, exiting)
	for i := range names {
		names[i] = fmt.Sprintf("flood-%03d", i)
		if err := n.AddPod(names[i], node.PodManifest(names[i], n.HostPathDir(), nil)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range exits {
		exits[i] = fmt.Sprintf("exit-%03d", i)
		after := 30*time.Second + time.Duration(i)*time.Minute/time.Duration(exiting)
		if err := n.AddPod(exits[i], node.ExitingPodManifest(exits[i], n.HostPathDir(), after)); err != nil {
			t.Fatal(err)
		}
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
		if err := n.RemovePod(name); err != nil {
			t.Fatal(err)
		}
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
			if err := n.RemovePod(name); err != nil {
				t.Fatal(err)
			}
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
	if err != nil {
		t.Fatal(err)
	}
	if counted && n.StreamsEvents() {
		t.Logf("%s dropped %v container events", n.RuntimeLabel(), dropped)
	}
}
