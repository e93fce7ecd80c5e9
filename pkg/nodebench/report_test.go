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
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"evented-volume-manager/pkg/node"
)

func TestReport(t *testing.T) {
	mode := func(gate bool, cpu, vm float64, mount []float64) Mode {
		m := Mode{
			Gate: gate, Pods: 110, Volumes: 4, WindowSeconds: 60,
			KubeletCPU: []float64{cpu, cpu + 1, cpu - 1}, RuntimeCPU: []float64{8, 8, 8},
			ProfileSeconds: 60, ProfileCPUSeconds: 4, VolumeManagerCPUSeconds: vm,
			Mount: mount, Unmount: mount, MountEndToEnd: mount, UnmountEndToEnd: mount, BurstMount: mount,
			StartupSeconds: 18, GapSeconds: 1,
		}
		if gate {
			m.Iterations = map[string]float64{"reconciler": 360, "desired_state_of_world_populator": 180}
		}
		return m
	}
	r := Result{
		Off: []Mode{withChurn(mode(false, 5, 1, []float64{0.3, 0.3, 0.301}), 1)},
		On:  []Mode{withChurn(mode(true, 4, 0.5, []float64{0.01, 0.02, 0.1}), 0.5)},
	}
	rows := Rows(r)
	find := func(prefix string) (off, on float64, ratio string) {
		for _, row := range rows {
			if strings.HasPrefix(row.Figure, prefix) {
				return row.Off, row.On, row.Ratio()
			}
		}
		t.Fatalf("no row %q", prefix)
		return
	}
	if off, on, ratio := find("idle kubelet CPU"); off != 5 || on != 4 || ratio != "1.2x" {
		t.Errorf("kubelet CPU row = %v, %v, %s", off, on, ratio)
	}
	if off, on, _ := find("volume manager share"); off != 25 || on != 12.5 {
		t.Errorf("share row = %v, %v", off, on)
	}
	if off, on, ratio := find("idle reconciler iterations"); !math.IsNaN(off) || on != 120 || ratio != "n/a" {
		t.Errorf("reconciler iterations row = %v, %v, %s (3 windows of 60s)", off, on, ratio)
	}
	if off, on, _ := find("volume-ready wait, single pods 1s apart p50"); off != 300 || on != 20 {
		t.Errorf("mount p50 row = %v, %v", off, on)
	}
	// 30 CPU-s over 60 s of deletions is 30 CPU-s/min with the gate off.
	if off, on, ratio := find("kubelet CPU while single pods are deleted, 1s apart"); off != 30 || on != 15 || ratio != "2.0x" {
		t.Errorf("kubelet deletion CPU row = %v, %v, %s", off, on, ratio)
	}
	if off, on, _ := find("containerd CPU while single pods are added"); off != 6 || on != 6 {
		t.Errorf("containerd addition CPU row = %v, %v", off, on)
	}
	md := Markdown(r)
	for _, want := range []string{
		"| figure | gate off | gate on | off/on |",
		"| idle kubelet CPU (median of windows) | 5.00 CPU-s/min | 4.00 CPU-s/min | 1.2x |",
		"n/a",
		"standalone kubelet at --v=3 (--v=4 while single pods are deleted and added)",
		"| kubelet CPU while single pods are deleted, 1s apart (median of rounds) | 30.0 CPU-s/min | 15.0 CPU-s/min | 2.0x |",
		"| from manifest removed to | gate off p50 | gate off p99 | gate on p50 | gate on p99 | pods off / on |",
		"| removal seen (`SyncLoop REMOVE`) | 2.00 ms | 3.00 ms | 1.00 ms | 1.50 ms | 3 / 3 |",
		"| first unmount started (`operationExecutor.UnmountVolume started for volume …`) | 10.0 ms | 15.0 ms | 5.00 ms | 7.50 ms | 3 / 3 |",
		"| pod directory removed (`Orphaned pod found, removing`) | 4000 ms | 8000 ms | 2000 ms | 4000 ms | 2 / 2 |",
		"| termination complete → last TearDown succeeded, per pod | 2000 ms | 3000 ms | 1000 ms | 1500 ms | 3 / 3 |",
		"| termination complete → SyncTerminatedPod enter, per pod | 1000 ms | 1000 ms | 500 ms | 500 ms | 3 / 3 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	dir := t.TempDir()
	files, err := Charts(r, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4 || filepath.Dir(files[0]) != dir || filepath.Base(files[3]) != "deletion-phases.png" {
		t.Errorf("charts = %v", files)
	}
	path := filepath.Join(dir, "results.json")
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	if back, err := Load(path); err != nil || len(back.On) != 1 || back.On[0].Iterations["reconciler"] != 360 {
		t.Errorf("Load = %+v, %v", back, err)
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("loading a missing file gave no error")
	}
}

// withChurn gives a mode the single-pod deletion's phases and its churn
// CPU, both times scale: three pods reach phase i (from 0) (i+1), 2(i+1)
// and 3(i+1) ms after their removal, except that only two pods' directories
// are removed, after 4 and 8 s; their last TearDown comes 2, 3 and 1 s
// after their termination, and SyncTerminatedPod 1 s after it.
func withChurn(m Mode, scale float64) Mode {
	m.ChurnVerbosity = 4
	m.DeletionPhases = map[string][]float64{}
	for _, p := range node.DeletionPhases() {
		for pod := 1; pod <= 3; pod++ {
			d := 0.001 * float64(pod) * float64(1+int(p)) * scale
			if p == node.PodDirRemoved {
				if pod == 3 {
					break
				}
				d = 4 * float64(pod) * scale
			}
			m.DeletionPhases[p.Key()] = append(m.DeletionPhases[p.Key()], d)
		}
	}
	m.TerminatedToTearDown = []float64{2 * scale, 3 * scale, 1 * scale}
	m.TerminatedToSyncTerminated = []float64{scale, scale, scale}
	m.DeleteCPU = &ChurnCPU{Seconds: 60, Kubelet: 30 * scale, Runtime: 6}
	m.AddCPU = &ChurnCPU{Seconds: 30, Kubelet: 20, Runtime: 3}
	return m
}

func TestPhaseRows(t *testing.T) {
	base := Mode{Pods: 110, Volumes: 4, GapSeconds: 1}
	tests := []struct {
		name string
		r    Result
		// want are the figures' prefixes and their gate-off p50 and gate-on
		// p99 in ms, and the pods with the gate on.
		want []struct {
			figure        string
			offP50, onP99 float64
			onPods        int
		}
	}{{
		name: "results from before the phases",
		r:    Result{Off: []Mode{base}, On: []Mode{base}},
	}, {
		name: "one round",
		r:    Result{Off: []Mode{withChurn(base, 1)}, On: []Mode{withChurn(base, 0.5)}},
		want: []struct {
			figure        string
			offP50, onP99 float64
			onPods        int
		}{
			{"removal seen", 2, 1.5, 3},
			{"containers killed", 4, 3, 3},
			{"SyncTerminatedPod exit", 16, 12, 3},
			{"pod directory removed", 4000, 4000, 2},
			{"termination complete → last TearDown succeeded", 2000, 1500, 3},
			{"termination complete → SyncTerminatedPod enter", 1000, 500, 3},
		},
	}, {
		name: "rounds pooled, the gate on lacking a phase",
		r: Result{
			Off: []Mode{withChurn(base, 1), withChurn(base, 3)},
			On: []Mode{func() Mode {
				m := withChurn(base, 0.5)
				delete(m.DeletionPhases, node.ContainersKilled.Key())
				return m
			}()},
		},
		want: []struct {
			figure        string
			offP50, onP99 float64
			onPods        int
		}{
			{"removal seen", 3, 1.5, 3},
			{"containers killed", 6, math.NaN(), 0},
			{"termination complete → SyncTerminatedPod enter", 1000, 500, 3},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows := PhaseRows(tc.r)
			if len(tc.want) == 0 {
				if len(rows) != 0 {
					t.Errorf("rows %v, want none", rows)
				}
				return
			}
			if len(rows) != node.NumDeletionPhases+2 {
				t.Errorf("%d rows, want one per phase and two differences", len(rows))
			}
			for _, w := range tc.want {
				found := false
				for _, row := range rows {
					if !strings.HasPrefix(row.Figure, w.figure) {
						continue
					}
					found = true
					same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
					if !same(row.OffP50, w.offP50) || !same(row.OnP99, w.onP99) || row.OnPods != w.onPods {
						t.Errorf("%s: off p50 %v, on p99 %v, on pods %d; want %v, %v, %d", row.Figure, row.OffP50, row.OnP99, row.OnPods, w.offP50, w.onP99, w.onPods)
					}
					break
				}
				if !found {
					t.Errorf("no row %q", w.figure)
				}
			}
		})
	}
}

// oldResults is a results.json from before the deletion phases and the
// churn CPU, trimmed.
const oldResults = `{
  "Off": [{"gate": false, "pods": 110, "volumes": 4, "startupSeconds": 20, "windowSeconds": 60,
    "kubeletCPU": [5, 5, 5], "containerdCPU": [1, 1, 1], "profileSeconds": 60, "profileCPUSeconds": 4,
    "volumeManagerCPUSeconds": 1, "volumeManagerTop": null, "burstMount": [1], "mount": [0.3], "unmount": [0.3],
    "mountEndToEnd": [0.5], "unmountEndToEnd": [2], "gapSeconds": 1}],
  "On": [{"gate": true, "pods": 110, "volumes": 4, "startupSeconds": 18, "windowSeconds": 60,
    "kubeletCPU": [4, 4, 4], "containerdCPU": [1, 1, 1], "profileSeconds": 60, "profileCPUSeconds": 4,
    "volumeManagerCPUSeconds": 0.5, "volumeManagerTop": [{"Function": "f", "CPU": 1000000}],
    "iterations": {"reconciler": 10}, "burstMount": [0.5], "mount": [0.02], "unmount": [0.02],
    "mountEndToEnd": [0.2], "unmountEndToEnd": [1], "gapSeconds": 1}]
}`

// TestRuntimeRows names the runtime in the title and the runtime rows.
func TestRuntimeRows(t *testing.T) {
	mode := func(gate bool, cpu float64) Mode {
		return withChurn(Mode{
			Gate: gate, Runtime: "CRI-O (enable_pod_events=true)", Pods: 110, Volumes: 4, WindowSeconds: 60,
			KubeletCPU: []float64{cpu}, RuntimeCPU: []float64{8}, ProfileSeconds: 60, ProfileCPUSeconds: 4,
			VolumeManagerCPUSeconds: 1, Mount: []float64{0.1}, Unmount: []float64{0.1}, GapSeconds: 1,
		}, 1)
	}
	md := Markdown(Result{Off: []Mode{mode(false, 5)}, On: []Mode{mode(true, 4)}})
	for _, want := range []string{"CRI-O (enable_pod_events=true) and runc", "| idle CRI-O CPU (median of windows) |",
		"CRI-O CPU while single pods are deleted"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "containerd") {
		t.Errorf("markdown of a CRI-O run names containerd:\n%s", md)
	}
}

func TestOldResults(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "results.json")
	if err := os.WriteFile(path, []byte(oldResults), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	md := Markdown(r)
	for _, want := range []string{"standalone kubelet at --v=3\n", "| idle kubelet CPU (median of windows) | 5.00 CPU-s/min | 4.00 CPU-s/min | 1.2x |",
		// containerdCPU, from before CRI-O, is read as the runtime's CPU.
		"| idle containerd CPU (median of windows) | 1.00 CPU-s/min | 1.00 CPU-s/min | 1.0x |",
		"containerd and runc, standalone kubelet"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	for _, unwanted := range []string{"phase by phase", "while single pods are"} {
		if strings.Contains(md, unwanted) {
			t.Errorf("markdown of old results has %q:\n%s", unwanted, md)
		}
	}
	files, err := Charts(r, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Errorf("charts of old results = %v, want no deletion chart", files)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{0.25, 0.125}, 0.1875}, {[]float64{7}, 7}} {
		if got := Median(tc.xs); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}
