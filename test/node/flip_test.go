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

package node_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"evented-volume-manager/pkg/cluster"
	"evented-volume-manager/pkg/kubeletlog"
	"evented-volume-manager/pkg/node"
)

const (
	// flipPods is how many pods run through the gate flips.
	flipPods = 32
	// flipMetric is the kubelet's feature-gate metric: 1 when the gate is on.
	flipMetric = "kubernetes_feature_enabled"
)

// flipPod is what a running pod must keep across a kubelet restart: its
// container, its volumes' mount IDs, and its directories' inodes.
type flipPod struct {
	name, podName, uid string
	container          node.Container
	mounts             map[string]string // mount point -> mount ID
	inodes             map[string]uint64 // directory -> inode
}

// A flip restarts the kubelet with the gate set to gate, or upstream's
// kubelet (make kubelet-stock) if stock is set, restarting the container
// runtime while the kubelet is down if restartRuntime is.
type flip struct {
	gate, stock, restartRuntime bool
}

func (f flip) String() string {
	s := "gate " + onOff(f.gate)
	if f.stock {
		s = "upstream's kubelet"
	}
	if f.restartRuntime {
		s += ", the runtime restarted while the kubelet was down"
	}
	return s
}

// TestGateFlip turns the gate on and off on a node with running pods, as an
// operator rolls it out and back: off to on, on to off, and both again with
// the runtime restarted while the kubelet is down (runFlips).
func TestGateFlip(t *testing.T) {
	require(t, "full")
	n := startNode(t, func(o *node.Options) { o.Kubelet = seriesKubelet(false) })
	runFlips(t, n, []flip{{gate: true}, {gate: false}, {gate: true, restartRuntime: true}, {gate: false, restartRuntime: true}})
}

// TestBinarySwap swaps the kubelet's binary on a node with running pods, as
// an operator upgrades and rolls back: from upstream's kubelet to the
// series' with the gate on, and back (runFlips).
func TestBinarySwap(t *testing.T) {
	require(t, "full")
	stock := filepath.Join(outDir(t), "bin", "kubelet-stock")
	if _, err := os.Stat(stock); err != nil {
		t.Fatalf("upstream's kubelet is missing (%v): make kubelet-stock builds it", err)
	}
	n := startNode(t, func(o *node.Options) { o.Kubelet = node.StockKubelet(stock, false) })
	runFlips(t, n, []flip{{gate: true}, {stock: true}})
}

// runFlips starts flipPods pods on n and restarts the kubelet as each flip
// says. After each no volume was mounted again (same mount IDs), no container
// restarted, no directory was made again, emptyDir data is kept, the metrics
// say which mode the kubelet is in, and a pod added and one deleted after it
// mount and clean up. It logs the reconstruction's times, gate off and on.
func runFlips(t *testing.T, n *node.Node, flips []flip) {
	t.Helper()
	pods := map[string]*flipPod{}
	for i := range flipPods {
		name := fmt.Sprintf("flip-%02d", i)
		must(t, n.AddPod(name, node.PodManifest(name, n.HostPathDir(), nil)))
		pods[name] = &flipPod{name: name, podName: n.PodName(name)}
	}
	waitFlipPods(t, n, pods)
	for _, p := range pods {
		_, err := n.Exec(t.Context(), p.container.ID, "sh", "-c", "echo before-flips > /data/marker")
		must(t, err)
	}
	checkMode(t, n, false)
	reconstructed := map[bool][]time.Duration{}
	for i, f := range flips {
		what := fmt.Sprintf("flip %d (%s)", i+1, f)
		before := snapshotFlipPods(t, n, pods)
		took := flipGate(t, n, what, f, len(pods)*node.VolumesPerPod)
		reconstructed[f.gate] = append(reconstructed[f.gate], took)
		compareFlipPods(t, what, before, snapshotFlipPods(t, n, pods))
		for _, p := range pods {
			if got, err := n.Exec(t.Context(), p.container.ID, "cat", "/data/marker"); err != nil || got != "before-flips" {
				t.Errorf("%s: %s's emptyDir lost its data: %q, %v", what, p.podName, got, err)
			}
		}
		// A pod added after the flip gets its volumes; a pod deleted after
		// it has its volumes unmounted and its directory removed (removePod
		// waits for it, which the kubelet removes only once they are).
		name := fmt.Sprintf("after-flip-%d", i+1)
		podName, cid := addPod(t, n, name, nil)
		uid := checkVolumes(t, n, podName, cid)
		removePod(t, n, name, uid)
		gone := slices.Sorted(maps.Keys(pods))[0]
		removePod(t, n, gone, pods[gone].uid)
		delete(pods, gone)
		if _, err := n.Exec(t.Context(), pods[slices.Sorted(maps.Keys(pods))[0]].container.ID, "true"); err != nil {
			t.Errorf("%s: a remaining pod's container does not answer: %v", what, err)
		}
	}
	for _, gate := range []bool{false, true} {
		ds := reconstructed[gate]
		slices.Sort(ds)
		t.Logf("kubelet start -> all running pods' volumes mounted, gate %s: %v (%d restarts)", onOff(gate), ds, len(ds))
	}
}

// flipGate restarts the kubelet as f says and waits until its actual state
// of world, rebuilt from disk, holds all volumes, as its desired state does.
// It returns the time from the kubelet's start until then.
func flipGate(t *testing.T, n *node.Node, what string, f flip, volumes int) time.Duration {
	t.Helper()
	n.StopKubelet()
	k := seriesKubelet(f.gate)
	if f.stock {
		k = node.StockKubelet("", false) // make kubelet-stock's
	}
	must(t, n.SetKubelet(k))
	if f.restartRuntime {
		must(t, n.KillRuntime())
		must(t, n.StartRuntime(t.Context()))
	}
	// Upstream's reconstruction rebuilds every volume with a directory under
	// a pod's volumes directory (a hostPath volume has none), counted from the
	// log: reconstruct_volume_operations_total, registered only once the
	// reconciler starts, can miss it.
	onDisk, err := filepath.Glob(filepath.Join(n.KubeletRoot(), "pods", "*", "volumes", "*", "*"))
	must(t, err)
	reconstructed, failed := kubeletLogCount(t, n, reconstructedLine), kubeletLogCount(t, n, reconstructionFailedLine)
	started := time.Now()
	must(t, n.StartKubelet(t.Context()))
	want := float64(volumes)
	waitVolumesMatch(t, n, 2*time.Minute, what+": every running pod's volumes are in the actual state of world", want)
	took := time.Since(started)
	reconstructed = kubeletLogCount(t, n, reconstructedLine) - reconstructed
	failed = kubeletLogCount(t, n, reconstructionFailedLine) - failed
	t.Logf("%s: every running pod's %v volumes mounted %v after the kubelet started; %d volumes reconstructed from disk, %d failed",
		what, want, took.Round(time.Millisecond), reconstructed, failed)
	if reconstructed != len(onDisk) || failed != 0 {
		t.Errorf("%s: the restarted kubelet reconstructed %d volumes from disk and failed %d, want the %d there and none",
			what, reconstructed, failed, len(onDisk))
	}
	checkMode(t, n, f.gate)
	// The series' kubelet says so in its version (make's -evm suffix).
	versions := metrics(t, n).ByLabel("kubernetes_build_info", "git_version")
	if len(versions) != 1 {
		t.Fatalf("%s: kubernetes_build_info has versions %v, want one", what, versions)
	}
	for v := range versions {
		if strings.Contains(v, "-evm") == f.stock {
			t.Errorf("%s: the kubelet runs version %s", what, v)
		}
	}
	return took
}

// The kubelet's log lines, at V(2) and V(0), for each volume upstream's
// reconstruction added to the actual state of world, or could not.
const (
	reconstructedLine        = "Volume is marked as uncertain and added into the actual state"
	reconstructionFailedLine = "Could not construct volume information"
)

// kubeletLogCount counts the kubelet log's lines that contain substr.
func kubeletLogCount(t *testing.T, n *node.Node, substr string) int {
	t.Helper()
	lines, err := kubeletlog.Lines(n.KubeletLog(), substr)
	must(t, err)
	return len(lines)
}

func onOff(gate bool) string {
	if gate {
		return "on"
	}
	return "off"
}

// waitFlipPods waits until every pod's container runs and its volumes are
// in place, and records its container and UID.
func waitFlipPods(t *testing.T, n *node.Node, pods map[string]*flipPod) {
	t.Helper()
	var cs map[string]node.Container
	eventually(t, 5*time.Minute, "every flip pod's container runs", func() (bool, error) {
		var err error
		if cs, err = n.RunningContainers(t.Context(), "bb"); err != nil {
			return false, err
		}
		for _, p := range pods {
			if _, ok := cs[p.podName]; !ok {
				return false, fmt.Errorf("%s has no running container", p.podName)
			}
		}
		return true, nil
	})
	for _, p := range pods {
		p.container = cs[p.podName]
		p.uid = checkVolumes(t, n, p.podName, p.container.ID)
	}
}

// snapshotFlipPods records every pod's running container, the mount IDs
// under its directory and the inodes of its directory and volumes'.
func snapshotFlipPods(t *testing.T, n *node.Node, pods map[string]*flipPod) map[string]flipPod {
	t.Helper()
	cs, err := n.RunningContainers(t.Context(), "bb")
	must(t, err)
	snap := map[string]flipPod{}
	for name, p := range pods {
		s := flipPod{name: name, podName: p.podName, uid: p.uid, container: cs[p.podName], inodes: map[string]uint64{}}
		dir := n.PodDir(p.uid)
		if s.mounts, err = node.MountIDs(dir); err != nil {
			t.Fatal(err)
		}
		vs, _ := filepath.Glob(filepath.Join(dir, "volumes", "*", "*"))
		for _, d := range append([]string{dir}, vs...) {
			var st syscall.Stat_t
			if err := syscall.Stat(d, &st); err != nil {
				t.Errorf("%s: %v", p.podName, err)
				continue
			}
			s.inodes[d] = st.Ino
		}
		snap[name] = s
	}
	return snap
}

// compareFlipPods fails the test for every pod whose container, mounts or directories changed.
func compareFlipPods(t *testing.T, what string, before, after map[string]flipPod) {
	t.Helper()
	mounts := 0
	for name, b := range before {
		a := after[name]
		if a.container.ID != b.container.ID || a.container.Attempt != b.container.Attempt {
			t.Errorf("%s: %s's container is %+v, was %+v: it restarted", what, b.podName, a.container, b.container)
		}
		// A PodManifest pod has two downwardAPI volumes, each a tmpfs; an APIPod more.
		if len(b.mounts) < 2 {
			t.Errorf("%s: %s had %d volume mounts before the flip, want at least 2: %v", what, b.podName, len(b.mounts), b.mounts)
		}
		if !maps.Equal(a.mounts, b.mounts) {
			t.Errorf("%s: %s's mounts changed: a volume was unmounted or mounted again:\nbefore %v\nafter  %v",
				what, b.podName, b.mounts, a.mounts)
		}
		mounts += len(a.mounts)
		for d, ino := range b.inodes {
			if a.inodes[d] != ino {
				t.Errorf("%s: %s was removed and made again (inode %d, was %d)", what, strings.TrimPrefix(d, "/"), a.inodes[d], ino)
			}
		}
	}
	t.Logf("%s: %d pods kept their containers, %d volume mounts (same mount IDs) and their directories", what, len(before), mounts)
}

// checkMode checks that the kubelet's metrics say which mode it runs in:
// the gate's metric, and with the gate on the loops' iterations and a
// connected event stream if the runtime streams; with it off, neither.
func checkMode(t *testing.T, n *node.Node, gate bool) {
	t.Helper()
	m := metrics(t, n)
	want := 0.0
	if gate {
		want = 1
	}
	if got := m.Sum(flipMetric, "name", "EventedVolumeManager"); !m.Has(flipMetric) || got != want {
		t.Errorf("%s{name=\"EventedVolumeManager\"} is %v, want %v", flipMetric, got, want)
	}
	if !gate {
		if m.Has("volume_manager_loop_iterations_total") {
			t.Errorf("gate off: the evented loops' metrics are registered (%v iterations)", m.Sum("volume_manager_loop_iterations_total"))
		}
		// Nor does EventedPLEG's watcher run (EventedPLEG is off).
		if got := m.Sum(streamConnections) + m.Sum(streamFailures); got != 0 {
			t.Errorf("gate off: EventedPLEG's watcher tried %v CRI event streams, want none", got)
		}
		return
	}
	eventually(t, 30*time.Second, "gate on: the evented loops iterate", func() (bool, error) {
		return metrics(t, n).Sum("volume_manager_loop_iterations_total") > 0, nil
	})
	if n.StreamsEvents() {
		eventually(t, 30*time.Second, "gate on: the runtime event stream is connected", func() (bool, error) {
			return metrics(t, n).Sum(streamConnections) >= 1, nil
		})
	}
	t.Logf("gate on: loop iterations by trigger %v", metrics(t, n).ByLabel("volume_manager_loop_iterations_total", "trigger"))
}

// TestClusterGateFlip flips the gate on a cluster node, off to on and back,
// with 4 API pods running whose CSI volumes were attached. Besides what
// TestGateFlip checks, no volume is detached: the node's status lists every
// running pod's volume as attached and the attacher saw no detach. A pod
// created after the flip gets its volume attached and mounted, and a pod
// deleted after it has its volume unmounted and detached.
func TestClusterGateFlip(t *testing.T) {
	require(t, "cluster")
	c := startCluster(t, func(o *node.Options) { o.Kubelet = seriesKubelet(false) })
	n := c.Node()
	pods := map[string]*flipPod{}
	for i := range 4 {
		name := fmt.Sprintf("flip-%d", i)
		cid, uid := apiPodRunning(t, c, cluster.APIPod{Name: name, CSI: true})
		pods[name] = &flipPod{name: name, podName: name, uid: uid, container: node.Container{ID: cid}}
	}
	checkMode(t, n, false)
	for i, gate := range []bool{true, false} {
		what := fmt.Sprintf("cluster flip %d (gate %s)", i+1, onOff(gate))
		before := snapshotFlipPods(t, n, pods)
		took := flipGate(t, n, what, flip{gate: gate}, len(pods)*cluster.APIPodVolumes(true))
		t.Logf("%s: kubelet start -> all running pods' volumes mounted %v", what, took.Round(time.Millisecond))
		compareFlipPods(t, what, before, snapshotFlipPods(t, n, pods))
		attached := volumesAttached(t, c)
		for name := range pods {
			if !slices.ContainsFunc(attached, func(v string) bool { return strings.Contains(v, "vol-"+name) }) {
				t.Errorf("%s: the node's status lists %v as attached, want %s's CSI volume", what, attached, name)
			}
			if d := c.Attacher().Times(cluster.PVName(name)).Detached; !d.IsZero() {
				t.Errorf("%s: %s's volume was detached at %v", what, name, d)
			}
			if got, err := n.Exec(t.Context(), pods[name].container.ID, "sh", "-c", "echo "+name+" > /csi/file && cat /csi/file"); err != nil || got != name {
				t.Errorf("%s: %s's CSI volume: %q, %v", what, name, got, err)
			}
		}
		added := fmt.Sprintf("after-%d", i+1)
		cid, _ := apiPodRunning(t, c, cluster.APIPod{Name: added, CSI: true})
		if got, err := n.Exec(t.Context(), cid, "sh", "-c", "echo new > /csi/file && cat /csi/file"); err != nil || got != "new" {
			t.Errorf("%s: the new pod's CSI volume: %q, %v", what, got, err)
		}
		for _, name := range []string{added, slices.Sorted(maps.Keys(pods))[0]} {
			uid, err := c.APIPodUID(t.Context(), name)
			must(t, err)
			must(t, c.DeleteAPIPod(t.Context(), name))
			waitDetached(t, c, what+": ", name, uid)
			delete(pods, name)
		}
	}
}
