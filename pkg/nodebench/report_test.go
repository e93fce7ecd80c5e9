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
				return row.Off.Value, row.On.Value, row.Ratio()
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
	if strings.Contains(md, "stock") {
		t.Errorf("markdown without stock results names stock:\n%s", md)
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
					if !same(row.Off.P50.Value, w.offP50) || !same(row.On.P99.Value, w.onP99) || row.On.Pods != w.onPods {
						t.Errorf("%s: off p50 %v, on p99 %v, on pods %d; want %v, %v, %d", row.Figure, row.Off.P50.Value, row.On.P99.Value, row.On.Pods, w.offP50, w.onP99, w.onPods)
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

// configMode is a round of configuration c: its kubelet's idle CPU is cpu
// per minute in the middle window (cpu+1 and cpu-1 in the others), and its
// single pods' mount waits are mount.
func configMode(c Config, cpu float64, mount []float64) Mode {
	m := withChurn(Mode{
		Gate: c.Gate(), Stock: c == Stock, Pods: 110, Volumes: 4, WindowSeconds: 60,
		KubeletCPU: []float64{cpu, cpu + 1, cpu - 1}, RuntimeCPU: []float64{8, 8, 8},
		ProfileSeconds: 60, ProfileCPUSeconds: 4, VolumeManagerCPUSeconds: 1,
		Mount: mount, Unmount: mount, MountEndToEnd: mount, UnmountEndToEnd: mount, BurstMount: mount,
		StartupSeconds: 18, GapSeconds: 1,
	}, 1)
	if c == GateOn {
		m.Iterations = map[string]float64{"reconciler": 360, "desired_state_of_world_populator": 180}
		m.VolumeManagerCPUSeconds = 0.5
	}
	return m
}

func TestStockReport(t *testing.T) {
	mount := []float64{0.3, 0.3, 0.301}
	tests := []struct {
		name           string
		r              Result
		want, unwanted []string
	}{{
		name: "one round",
		r: Result{
			Stock:  []Mode{configMode(Stock, 6, mount)},
			Off:    []Mode{configMode(GateOff, 5, mount)},
			On:     []Mode{configMode(GateOn, 4, []float64{0.01, 0.02, 0.1})},
			Orders: [][]Config{{Stock, GateOff, GateOn}},
		},
		want: []string{
			"1 round(s) per configuration: round 1 ran stock, gate off, gate on;",
			"| figure | stock | gate off | gate on | stock/on | off/on |\n|---|---|---|---|---|---|\n",
			"| idle kubelet CPU (median of windows) | 6.00 CPU-s/min | 5.00 CPU-s/min | 4.00 CPU-s/min | 1.5x | 1.2x |",
			"| volume manager CPU (pprof) | 1.00 CPU-s/min | 1.00 CPU-s/min | 0.50 CPU-s/min | 2.0x | 2.0x |",
			"| idle reconciler iterations | n/a | n/a | 120 /min | n/a | n/a |",
			"| volume-ready wait, single pods 1s apart p50 | 300 ms | 300 ms | 20.0 ms | 15.0x | 15.0x |",
			"One round: no spread across rounds.",
			"Stock against gate off: one round of either gives no spread across rounds to judge their difference by",
			"kubelet CPU-s/min (stock | gate off | gate on): 6.00, 7.00, 5.00 | 5.00, 6.00, 4.00 | 4.00, 5.00, 3.00",
			"Stock is upstream's kubelet, built from the release's tag without the series",
			"| from manifest removed to | stock p50 | stock p99 | gate off p50 | gate off p99 | gate on p50 | gate on p99 | pods stock / off / on |",
			"| removal seen (`SyncLoop REMOVE`) | 2.00 ms | 3.00 ms | 2.00 ms | 3.00 ms | 2.00 ms | 3.00 ms | 3 / 3 / 3 |",
		},
		unwanted: []string{"differ beyond", "agree within"},
	}, {
		name: "two rounds, stock's kubelet CPU beyond the spread",
		r: Result{
			Stock:  []Mode{configMode(Stock, 8, mount), configMode(Stock, 8.2, mount)},
			Off:    []Mode{configMode(GateOff, 5, mount), configMode(GateOff, 5.2, mount)},
			On:     []Mode{configMode(GateOn, 4, mount), configMode(GateOn, 4.2, mount)},
			Orders: [][]Config{{Stock, GateOff, GateOn}, {GateOn, GateOff, Stock}},
		},
		want: []string{
			"2 round(s) per configuration: round 1 ran stock, gate off, gate on; round 2 ran gate on, gate off, stock;",
			// Windows 7, 8, 9 and 7.2, 8.2, 9.2 pool to a median of 8.1;
			// the rounds' medians are 8 and 8.2.
			"| idle kubelet CPU (median of windows) | 8.10 CPU-s/min (8.00–8.20) | 5.10 CPU-s/min (5.00–5.20) | 4.10 CPU-s/min (4.00–4.20) | 2.0x | 1.2x |",
			"| idle containerd CPU (median of windows) | 8.00 CPU-s/min (8.00–8.00) |",
			"Each value pools all rounds; in parentheses, the lowest and highest single round.",
			"- **stock and gate off differ beyond the rounds' spread: idle kubelet CPU (median of windows)**: stock 8.10 CPU-s/min, gate off 5.10 CPU-s/min; " +
				"spread across rounds 0.20 CPU-s/min (stock), 0.20 CPU-s/min (gate off)\n",
			"| removal seen (`SyncLoop REMOVE`) | 2.00 ms (2.00–2.00) |",
		},
		unwanted: []string{"differ beyond the rounds' spread: idle containerd", "agree within", "One round"},
	}, {
		name: "two rounds, stock like gate off",
		r: Result{
			Stock: []Mode{configMode(Stock, 5.1, mount), configMode(Stock, 5, mount)},
			Off:   []Mode{configMode(GateOff, 5, mount), configMode(GateOff, 5.2, mount)},
			On:    []Mode{configMode(GateOn, 4, mount), configMode(GateOn, 4.2, mount)},
		},
		want: []string{
			"2 round(s) per gate value (the order within each round is not recorded in these results)",
			"Stock and gate off agree within the rounds' spread on every row both have.",
		},
		unwanted: []string{"differ beyond"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			md := Markdown(tc.r)
			for _, want := range tc.want {
				if !strings.Contains(md, want) {
					t.Errorf("markdown lacks %q:\n%s", want, md)
				}
			}
			for _, unwanted := range tc.unwanted {
				if strings.Contains(md, unwanted) {
					t.Errorf("markdown has %q:\n%s", unwanted, md)
				}
			}
			files, err := Charts(tc.r, t.TempDir())
			if err != nil || len(files) != 4 {
				t.Errorf("charts = %v, %v", files, err)
			}
		})
	}
}

func TestStatOf(t *testing.T) {
	cpu := func(m merged) float64 { return Median(m.kubeletPerMin) }
	nan := math.NaN()
	// The three rounds' windows pool to 3.5, 4, 4.5, 5, 5.5, 6, 6, 7 and 8.
	tests := []struct {
		name                  string
		modes                 []Mode
		value, lo, hi, spread float64
		rounds                int
	}{
		{"no rounds", nil, nan, nan, nan, nan, 0},
		{"one round", []Mode{configMode(GateOff, 5, nil)}, 5, 5, 5, nan, 1},
		{"three rounds", []Mode{configMode(GateOff, 5, nil), configMode(GateOff, 7, nil), configMode(GateOff, 4.5, nil)}, 5.5, 4.5, 7, 2.5, 3},
	}
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := statOf(tc.modes, cpu)
			if !same(s.Value, tc.value) || !same(s.Min, tc.lo) || !same(s.Max, tc.hi) || !same(s.Spread(), tc.spread) || s.Rounds != tc.rounds {
				t.Errorf("statOf = %+v, spread %v; want value %v, %v–%v, spread %v, %d rounds", s, s.Spread(), tc.value, tc.lo, tc.hi, tc.spread, tc.rounds)
			}
		})
	}
}

func TestStockDiffers(t *testing.T) {
	stat := func(v, lo, hi float64, rounds int) Stat { return Stat{Value: v, Min: lo, Max: hi, Rounds: rounds} }
	tests := []struct {
		name       string
		stock, off Stat
		want       bool
	}{
		{"one round each", stat(9, 9, 9, 1), stat(5, 5, 5, 1), false},
		{"apart by less than the spread", stat(5.1, 4.9, 5.3, 2), stat(5, 4.8, 5.1, 2), false},
		{"apart by more than either spread", stat(6, 5.9, 6.1, 2), stat(5, 4.8, 5.1, 2), true},
		{"within the wider spread", stat(6, 5, 7, 3), stat(5, 4.9, 5.1, 3), false},
		{"no stock value", stat(math.NaN(), math.NaN(), math.NaN(), 0), stat(5, 4.8, 5.1, 2), false},
		{"equal without spread", stat(5, 5, 5, 2), stat(5, 5, 5, 2), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Row{Stock: tc.stock, Off: tc.off}).StockDiffers(); got != tc.want {
				t.Errorf("StockDiffers() = %t, want %t", got, tc.want)
			}
		})
	}
}

func TestResultAddAndLoad(t *testing.T) {
	var r Result
	for _, c := range []Config{GateOn, Stock, GateOff, GateOn} {
		r.Add(configMode(c, 5, []float64{0.1}))
	}
	r.Orders = [][]Config{{GateOn, Stock, GateOff}, {GateOn}}
	if len(r.Stock) != 1 || len(r.Off) != 1 || len(r.On) != 2 || !r.HasStock() {
		t.Fatalf("Add filed %d stock, %d off, %d on", len(r.Stock), len(r.Off), len(r.On))
	}
	for _, c := range Configs {
		for _, m := range r.Modes(c) {
			if m.Config() != c {
				t.Errorf("a mode of %s says %s", c, m.Config())
			}
		}
	}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil || len(back.Stock) != 1 || !back.Stock[0].Stock || back.Stock[0].Gate || len(back.Orders) != 2 || back.Orders[0][1] != Stock {
		t.Errorf("Load = %+v, %v", back, err)
	}
	old := filepath.Join(t.TempDir(), "results.json")
	if err := os.WriteFile(old, []byte(oldResults), 0o644); err != nil {
		t.Fatal(err)
	}
	if back, err := Load(old); err != nil || back.HasStock() || back.Orders != nil || back.Off[0].Config() != GateOff {
		t.Errorf("Load of old results = %+v, %v", back, err)
	}
}

// TestCommittedResults renders every node-bench result the project keeps as
// -report renders them again: those from before the stock configuration in
// the two-column layout, those with it in the three-column one.
func TestCommittedResults(t *testing.T) {
	root := filepath.Join("..", "..", "results", "node-bench")
	var paths []string
	for _, pattern := range []string{"*/results.json", "*/*/results.json"} {
		m, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		t.Fatalf("no results under %s", root)
	}
	for _, path := range paths {
		t.Run(strings.TrimPrefix(path, root+string(filepath.Separator)), func(t *testing.T) {
			r, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			md := Markdown(r)
			if r.HasStock() {
				if !strings.Contains(md, "| figure | stock | gate off | gate on | stock/on | off/on |") {
					t.Errorf("the report of %s, which has stock rounds, lacks the stock column:\n%s", path, md)
				}
			} else if strings.Contains(md, "stock") || !strings.Contains(md, "| figure | gate off | gate on | off/on |") {
				t.Errorf("the report of %s:\n%s", path, md)
			}
			if _, err := Charts(r, t.TempDir()); err != nil {
				t.Error(err)
			}
		})
	}
}
