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
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"sigs.k8s.io/yaml"

	"evented-volume-manager/pkg/cluster"
	"evented-volume-manager/pkg/kubeletlog"
	"evented-volume-manager/pkg/node"
)

// configMode is a standalone round of c: idle CPU cpu, cpu+1 and cpu-1 per
// minute, single pods' waits mount. Scaled by scale: three pods reach phase i
// (i+1), 2(i+1) and 3(i+1) ms after their removal, but two pods' directories
// are removed, after 4 and 8 s; their last TearDown comes 2, 3 and 1 s after
// their termination, and SyncTerminatedPod 1 s after it.
func configMode(c Config, cpu float64, mount []float64, scale float64) Mode {
	m := Mode{
		Config: c, Kubelet: c.Kubelet(""), Runtime: "containerd", Pods: 110, Volumes: 4, WindowSeconds: 60,
		KubeletCPU: []float64{cpu, cpu + 1, cpu - 1}, RuntimeCPU: []float64{8, 8, 8},
		ProfileSeconds: 60, ProfileCPUSeconds: 4, VolumeManagerCPUSeconds: 1,
		Mount: mount, Unmount: mount, MountEndToEnd: mount, UnmountEndToEnd: mount, BurstMount: mount,
		StartupSeconds: 18, GapSeconds: 1, ChurnVerbosity: 4, DeletionPhases: map[string][]float64{},
		TerminatedToTearDown: []float64{2 * scale, 3 * scale, 1 * scale}, TerminatedToSyncTerminated: []float64{scale, scale, scale},
		DeleteCPU: &ChurnCPU{Seconds: 60, Kubelet: 30 * scale, Runtime: 6}, AddCPU: &ChurnCPU{Seconds: 30, Kubelet: 20, Runtime: 3},
	}
	for _, p := range kubeletlog.DeletionPhases() {
		for pod := 1; pod <= 3; pod++ {
			d := 0.001 * float64(pod) * float64(1+int(p)) * scale
			if p == kubeletlog.PodDirRemoved {
				if pod == 3 {
					break
				}
				d = 4 * float64(pod) * scale
			}
			m.DeletionPhases[p.Key()] = append(m.DeletionPhases[p.Key()], d)
		}
	}
	if c.Kubelet("").Gate(node.EventedVolumeManager) {
		m.Iterations = map[string]float64{"reconciler": 360, "desired_state_of_world_populator": 180}
		m.VolumeManagerCPUSeconds = 0.5
	}
	return m
}

// rowWant is a figure's want of gate off and on, and of off/on unless empty.
type rowWant struct {
	figure  string
	off, on float64
	ratio   string
}

// checkRows fails t unless rows have every want, to within 1e-9.
func checkRows(t *testing.T, rows []Row, wants []rowWant) {
	t.Helper()
	near := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) <= 1e-9 }
	for _, w := range wants {
		i := slices.IndexFunc(rows, func(r Row) bool { return r.Figure == w.figure })
		if i < 0 {
			t.Errorf("no row %q", w.figure)
			continue
		}
		if r := rows[i]; !near(r.Stat(GateOff).Value, w.off) || !near(r.Stat(GateOn).Value, w.on) || w.ratio != "" && r.Ratio(GateOff) != w.ratio {
			t.Errorf("%s: %v, %v, %s; want %v, %v, %s", w.figure, r.Stat(GateOff).Value, r.Stat(GateOn).Value, r.Ratio(GateOff), w.off, w.on, w.ratio)
		}
	}
}

// TestRows checks standalone rows, and that optional rows no configuration
// measured are left out.
func TestRows(t *testing.T) {
	off, on := configMode(GateOff, 5, []float64{0.3, 0.3, 0.301}, 1), configMode(GateOn, 4, []float64{0.01, 0.02, 0.1}, 0.5)
	off.ExitUnmount, on.ExitUnmount = []float64{0.5, 0.75}, []float64{0.125, 0.25}
	off.SetUpToMounted, on.SetUpToMounted = []float64{0.1}, []float64{0.0002}
	off.KubeletRSSMiB, on.KubeletRSSMiB = []float64{100, 130, 101}, []float64{99, 100}
	off.KubeletLiveHeapMiB, on.KubeletLiveHeapMiB = []float64{30}, []float64{28}
	off.KubeletAnonMiB, on.KubeletAnonMiB = []float64{60}, []float64{54}
	off.ExitSteps = map[string][]float64{"exitToRelist": {0.5, 0.7, 0.9}}
	on.ExitSteps = map[string][]float64{"exitToEvent": {0.002, 0.004}, "exitToRelist": {0.01, 0.02, 0.03}}
	off.CrashLoop = &CrashLoopCost{Pods: 10, WindowSeconds: 30, Restarts: 10, PodRelists: 5, KubeletCPU: 1}
	on.CrashLoop = &CrashLoopCost{Pods: 10, WindowSeconds: 60, Restarts: 20, PodRelists: 40, KubeletCPU: 2}
	off2, on2 := off, on
	off2.ExitUnmount, on2.ExitUnmount = []float64{1.25, 1.5}, []float64{0.375}
	off2.KubeletRSSMiB, on2.KubeletRSSMiB = []float64{102}, []float64{101, 102}
	rows := Rows(Result{Off: []Mode{off, off2}, On: []Mode{on, on2}})
	checkRows(t, rows, []rowWant{
		{"idle kubelet CPU (median of windows)", 5, 4, "1.2x"},
		{"volume manager share of kubelet CPU (pprof)", 25, 12.5, "2.0x"},
		{"idle reconciler iterations", math.NaN(), 120, "n/a"}, // 360 in each round of 3 windows of 60 s
		{"volume-ready wait, single pods 1s apart p50", 300, 20, "15.0x"},
		{"last volume set up → wait ends, single pods 1s apart p50", 100, 0.2, "500.0x"},
		// 30 CPU-s over 60 s of deletions is 30 CPU-s/min with the gate off.
		{"kubelet CPU while single pods are deleted, 1s apart (median of rounds)", 30, 15, "2.0x"},
		{"containerd CPU while single pods are added, 1s apart (median of rounds)", 6, 6, "1.0x"},
		{"container exited on its own → volumes unmounted (mountinfo) p50", 750, 250, "3.0x"},
		// The median of every read of every round: 100 101 102 130, 99 100 101 102.
		{"kubelet RSS (median of reads in the idle windows)", 101.5, 100.5, "1.0x"},
		{"kubelet live Go heap after a forced GC (median of windows)", 30, 28, "1.1x"},
		{"kubelet anonymous RSS (median of reads in the idle windows)", 60, 54, "1.1x"},
		{"  exit step: exit → a relist sees it p50", 700, 20, ""},
		{"crash-looping pods: single-pod relists (median of rounds)", 10, 40, ""},
		{"crash-looping pods: kubelet CPU (median of rounds)", 2, 2, ""},
	})
	if r := rows[slices.IndexFunc(rows, func(r Row) bool { return strings.HasPrefix(r.Figure, "container exited") })]; r.Stat(GateOff) != (Stat{Value: 750, Min: 500, Max: 1250, Rounds: 2}) {
		t.Errorf("exit row = %+v", r)
	}
	off, on = configMode(GateOff, 5, []float64{0.3, 0.3, 0.301}, 1), configMode(GateOn, 4, []float64{0.01, 0.02, 0.1}, 0.5)
	for _, r := range Rows(Result{Off: []Mode{off}, On: []Mode{on}}) {
		for _, optional := range []string{"container exited", "passes", "kubelet RSS", "heap", "exit step", "crash-looping", "set up"} {
			if strings.Contains(r.Figure, optional) {
				t.Errorf("a row %q that no configuration measured", r.Figure)
			}
		}
	}
}

// TestMarkdown covers what the committed reports (TestCommittedReport) do not.
func TestMarkdown(t *testing.T) {
	mount := []float64{0.3, 0.3, 0.301}
	on := configMode(GateOn, 4, nil, 0.5)
	delete(on.DeletionPhases, kubeletlog.ContainersKilled.Key())
	tests := []struct {
		name           string
		r              Result
		want, unwanted []string
	}{{
		name: "one round with stock",
		r: Result{Stock: []Mode{configMode(Stock, 6, mount, 1)}, Off: []Mode{configMode(GateOff, 5, mount, 1)},
			On: []Mode{configMode(GateOn, 4, []float64{0.01, 0.02, 0.1}, 1)}, Orders: [][]Config{{Stock, GateOff, GateOn}}},
		want: []string{
			"| figure | stock | gate off | gate on | stock/on | off/on |\n|---|---|---|---|---|---|\n",
			"| idle reconciler iterations | n/a | n/a | 120 /min | n/a | n/a |",
			"Stock against gate off: one round of either gives no spread across rounds to judge their difference by",
			"kubelet CPU-s/min (stock | gate off | gate on): 6.00, 7.00, 5.00 | 5.00, 6.00, 4.00 | 4.00, 5.00, 3.00",
			"| removal seen (`SyncLoop REMOVE`) | 2.00 ms | 3.00 ms | 2.00 ms | 3.00 ms | 2.00 ms | 3.00 ms | 3 / 3 / 3 |",
		},
		unwanted: []string{"differ beyond", "agree within", "container-exit"},
	}, {
		name: "two rounds, stock like gate off, exiting pods",
		r: Result{
			Stock: []Mode{configMode(Stock, 5.1, mount, 1), configMode(Stock, 5, mount, 1)},
			Off:   []Mode{configMode(GateOff, 5, mount, 1), configMode(GateOff, 5.2, mount, 1)},
			On: []Mode{func() Mode {
				m := configMode(GateOn, 4, mount, 1)
				m.ExitUnmount, m.ExitPollSeconds = []float64{0.1, 0.2, 0.3}, 0.005
				return m
			}(), configMode(GateOn, 4.2, mount, 1)},
		},
		want: []string{"Stock and gate off agree within the rounds' spread on every row both have.",
			"read every 5ms, showing no mount under the pod's volumes directory; pods (stock / gate off / gate on): 0 / 0 / 3."},
		unwanted: []string{"differ beyond"},
	}, {
		// Three pods reach each phase; two remove their directory; the gate
		// on's log lacks a phase.
		name: "deletion phases",
		r:    Result{Off: []Mode{configMode(GateOff, 5, nil, 1), configMode(GateOff, 5, nil, 3)}, On: []Mode{on}},
		want: []string{`| from manifest removed to | gate off p50 | gate off p99 | gate on p50 | gate on p99 | pods off / on |
|---|---|---|---|---|---|
| removal seen (` + "`SyncLoop REMOVE`" + `) | 3.00 ms (2.00–6.00) | 9.00 ms (3.00–9.00) | 1.00 ms | 1.50 ms | 6 / 3 |
| containers killed (` + "`Pod termination stopped all running containers`" + `) | 6.00 ms (4.00–12.0) | 18.0 ms (6.00–18.0) | n/a | n/a | 6 / 0 |
| termination complete (` + "`Pod terminated all containers successfully`" + `) | 9.00 ms (6.00–18.0) | 27.0 ms (9.00–27.0) | 3.00 ms | 4.50 ms | 6 / 3 |
| SyncTerminatedPod enter (` + "`SyncTerminatedPod enter`" + `) | 12.0 ms (8.00–24.0) | 36.0 ms (12.0–36.0) | 4.00 ms | 6.00 ms | 6 / 3 |
| first unmount started (` + "`operationExecutor.UnmountVolume started for volume …`" + `) | 15.0 ms (10.0–30.0) | 45.0 ms (15.0–45.0) | 5.00 ms | 7.50 ms | 6 / 3 |
| last TearDown succeeded (` + "`UnmountVolume.TearDown succeeded for volume …`" + `) | 18.0 ms (12.0–36.0) | 54.0 ms (18.0–54.0) | 6.00 ms | 9.00 ms | 6 / 3 |
| all volumes unmounted (` + "`All volumes are unmounted for pod`" + `) | 21.0 ms (14.0–42.0) | 63.0 ms (21.0–63.0) | 7.00 ms | 10.5 ms | 6 / 3 |
| SyncTerminatedPod exit (` + "`SyncTerminatedPod exit`" + `) | 24.0 ms (16.0–48.0) | 72.0 ms (24.0–72.0) | 8.00 ms | 12.0 ms | 6 / 3 |
| pod directory removed (` + "`Orphaned pod found, removing`" + `) | 8000 ms (4000–12000) | 24000 ms (8000–24000) | 2000 ms | 4000 ms | 4 / 2 |
| termination complete → last TearDown succeeded, per pod | 3000 ms (2000–6000) | 9000 ms (3000–9000) | 1000 ms | 1500 ms | 6 / 3 |
| termination complete → SyncTerminatedPod enter, per pod | 1000 ms (1000–3000) | 3000 ms (1000–3000) | 500 ms | 500 ms | 6 / 3 |
`},
	}, {
		name: "four configurations",
		r: Result{Configs: DefaultConfigs(false), Stock: []Mode{configMode(Stock, 6, mount, 1)}, Off: []Mode{configMode(GateOff, 5, mount, 1)},
			On: []Mode{configMode(GateOn, 4, []float64{0.01, 0.02, 0.1}, 1)}, AllGates: []Mode{configMode(AllGates, 3, []float64{0.01, 0.02, 0.05}, 0.5)},
			Orders: [][]Config{RoundOrder(1, DefaultConfigs(false))}},
		want: []string{
			"round 1 ran stock, gate off, gate on, all gates;",
			"| figure | stock | gate off | gate on | all gates | stock/on | off/on |\n|---|---|---|---|---|---|---|\n",
			"| idle kubelet CPU (median of windows) | 6.00 CPU-s/min | 5.00 CPU-s/min | 4.00 CPU-s/min | 3.00 CPU-s/min | 1.5x | 1.2x |",
			"| idle reconciler iterations | n/a | n/a | 120 /min | 120 /min | n/a | n/a |",
			"kubelet CPU-s/min (stock | gate off | gate on | all gates): 6.00, 7.00, 5.00 | 5.00, 6.00, 4.00 | 4.00, 5.00, 3.00 | 3.00, 4.00, 2.00",
			"All gates has EventedVolumeManager, RelistOnPodTermination and VolumesInUseNodeStatusUpdate on (",
			"| all gates p50 | all gates p99 | pods stock / off / on / all gates |",
			"| removal seen (`SyncLoop REMOVE`) | 2.00 ms | 3.00 ms | 2.00 ms | 3.00 ms | 2.00 ms | 3.00 ms | 1.00 ms | 1.50 ms | 3 / 3 / 3 / 3 |",
		},
	}, {
		name: "the run's order, without stock and gate on",
		r: Result{Configs: []Config{AllGates, GateOff}, Off: []Mode{configMode(GateOff, 5, mount, 1)},
			AllGates: []Mode{configMode(AllGates, 3, mount, 1)}, Orders: [][]Config{{AllGates, GateOff}}},
		want: []string{"| figure | all gates | gate off |\n|---|---|---|\n", "| idle kubelet CPU (median of windows) | 3.00 CPU-s/min | 5.00 CPU-s/min |\n",
			"One round: no spread across rounds.\n", "kubelet CPU-s/min (all gates | gate off): 3.00, 4.00, 2.00 | 5.00, 6.00, 4.00"},
		unwanted: []string{"/on", "divide", "Stock"},
	}, {
		name: "four configurations on a cluster node",
		r: Result{Cluster: true, Configs: DefaultConfigs(true), Off: []Mode{clusterMode(false, 1)}, On: []Mode{clusterMode(true, 0.1)},
			NodeStatusGate: []Mode{clusterMode(true, 0.5)}, AllGates: []Mode{clusterMode(true, 0.1)}, Orders: [][]Config{RoundOrder(1, DefaultConfigs(true))}},
		want: []string{"1 round(s) per configuration, round 1 gate off first;",
			"| figure | gate off | gate on | node-status gate | all gates | off/on |\n",
			"| idle kubelet CPU | 4.00 CPU-s/min | 0.40 CPU-s/min | 2.00 CPU-s/min | 0.40 CPU-s/min | 10.0x |",
			"| idle reconciler passes, full | 600 (polls every 100 ms) | 6.00 /min | 6.00 /min | 6.00 /min | n/a |",
			"ConfigMap updates not in the pod's file within the timeout (gate off | gate on | node-status gate | all gates): 0 | 0 | 0 | 0.",
			"| request | idle, off | idle, on | idle, node-status gate | idle, all gates | churn, off | churn, on | churn, node-status gate | churn, all gates | " +
				"most in 1 s, off | most in 1 s, on | most in 1 s, node-status gate | most in 1 s, all gates |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
			"| patch nodes/status | 6.0 | 0.5 | 3.0 | 0.5 | 30.0 | 300.0 | 60.0 | 300.0 | 1 / 2 | 1 / 20 | 1 / 4 | 1 / 20 |",
			"Node-status gate has EventedVolumeManager and VolumesInUseNodeStatusUpdate on. All gates has EventedVolumeManager, RelistOnPodTermination and VolumesInUseNodeStatusUpdate on.\n"},
		unwanted: []string{"per gate value", "acts only with an API server"},
	}, {
		name:     "no phases",
		r:        Result{Off: []Mode{{Pods: 110, Volumes: 4}}, On: []Mode{{Pods: 110, Volumes: 4}}},
		unwanted: []string{"Single-pod deletion"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkMarkdown(t, Markdown(tc.r), tc.want, tc.unwanted) })
	}
}

func checkMarkdown(t *testing.T, md string, want, unwanted []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(md, w) {
			t.Errorf("markdown lacks %q:\n%s", w, md)
		}
	}
	for _, u := range unwanted {
		if strings.Contains(md, u) {
			t.Errorf("markdown has %q:\n%s", u, md)
		}
	}
}

// TestCommittedReport renders four real runs in testdata/ and compares the
// reports they wrote, but for the charts' names.
func TestCommittedReport(t *testing.T) {
	dir := "testdata"
	load := func(run string) Result {
		r, err := Load(filepath.Join(dir, run, "results.json"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var sizes []Size
	for _, pods := range []int{110, 250, 500} {
		sizes = append(sizes, Size{Pods: pods, Result: load(fmt.Sprintf("9-scale-index/pods-%d", pods))})
	}
	newest := load("14-smaller-stack")
	for file, got := range map[string]string{
		"14-smaller-stack/report.md":                Markdown(newest),
		"10-stock/report.md":                        Markdown(load("10-stock")),
		"12-crio-exit-ablation/events-on/report.md": Markdown(load("12-crio-exit-ablation/events-on")),
		"9-scale-index/scale.md":                    ScaleMarkdown(sizes),
	} {
		want, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if want, _, _ := strings.Cut(string(want), "\nChart"); got != want {
			t.Errorf("the results render otherwise than %s:\n%s\nwant:\n%s", file, got, want)
		}
	}
	if files, err := Charts(newest, t.TempDir()); err != nil || len(files) != 2 {
		t.Errorf("charts = %v, %v", files, err)
	}
}

func TestStockDiffers(t *testing.T) {
	stat := func(v, lo, hi float64, rounds int) Stat { return Stat{Value: v, Min: lo, Max: hi, Rounds: rounds} }
	for _, tc := range []struct {
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
	} {
		if got := (Row{Stats: map[Config]Stat{Stock: tc.stock, GateOff: tc.off}}).StockDiffers(); got != tc.want {
			t.Errorf("%s: StockDiffers() = %t, want %t", tc.name, got, tc.want)
		}
	}
}

func TestRoundOrder(t *testing.T) {
	stock, off, on, all := Stock, GateOff, GateOn, AllGates
	three := []Config{stock, off, on}
	withoutStock := func(order []Config) []Config {
		return slices.DeleteFunc(slices.Clone(order), func(c Config) bool { return c == Stock })
	}
	for _, tc := range []struct {
		name    string
		configs []Config
		want    [][]Config
	}{{
		name:    "stock, gate off, gate on",
		configs: three,
		want:    [][]Config{{stock, off, on}, {on, off, stock}, {off, on, stock}, {stock, on, off}, {on, stock, off}, {off, stock, on}, {stock, off, on}},
	}, {
		name:    "four, each first in one of the first four odd rounds",
		configs: DefaultConfigs(false),
		want: [][]Config{{stock, off, on, all}, {all, on, off, stock}, {off, on, all, stock}, {stock, all, on, off},
			{on, all, stock, off}, {off, stock, all, on}, {all, stock, off, on}, {on, off, stock, all}, {stock, off, on, all}},
	}} {
		for i, w := range tc.want {
			if got := RoundOrder(i+1, tc.configs); !slices.Equal(got, w) {
				t.Errorf("%s, round %d: %v, want %v", tc.name, i+1, got, w)
			}
		}
	}
	// Without stock (node-bench -stock=false), the orders of three without it.
	for i, w := range [][]Config{{off, on}, {on, off}, {off, on}, {on, off}, {on, off}, {off, on}, {off, on}} {
		if got := withoutStock(RoundOrder(i+1, three)); !slices.Equal(got, w) {
			t.Errorf("round %d without stock: %v, want %v", i+1, got, w)
		}
	}
	// Over each pair of rounds every configuration stands in the middle on
	// average: its places add up to the first and the last.
	for _, configs := range [][]Config{three, DefaultConfigs(false), DefaultConfigs(true), {off, on}} {
		for _, leaveOutStock := range []bool{false, true} {
			for round := 1; round <= 12; round += 2 {
				places := map[Config]int{}
				for _, r := range []int{round, round + 1} {
					order := RoundOrder(r, configs)
					if leaveOutStock {
						order = withoutStock(order)
					}
					for place, c := range order {
						places[c] += place
					}
				}
				for c, sum := range places {
					if sum != len(places)-1 {
						t.Errorf("%v (stock left out: %t), rounds %d and %d: %s's places add up to %d, want %d", configs, leaveOutStock, round, round+1, c, sum, len(places)-1)
					}
				}
			}
		}
	}
}

func TestConfigs(t *testing.T) {
	for _, tc := range []struct {
		c                Config
		kubelet, workDir string
	}{
		{Stock, "upstream's kubelet (EventedPLEG=false)", "work-stock"},
		{GateOff, "the series' kubelet (EventedVolumeManager=false,EventedPLEG=false)", "work-gate-false"},
		{GateOn, "the series' kubelet (EventedVolumeManager=true,EventedPLEG=false)", "work-gate-true"},
		{AllGates, "the series' kubelet (EventedVolumeManager=true,RelistOnPodTermination=true,VolumesInUseNodeStatusUpdate=true,EventedPLEG=false)", "work-all"},
		{NodeStatusGate, "the series' kubelet (EventedVolumeManager=true,VolumesInUseNodeStatusUpdate=true,EventedPLEG=false)", "work-nsg"},
	} {
		if k := tc.c.Kubelet(""); k.String() != tc.kubelet || k.Stock() != (tc.c == Stock) || tc.c.WorkDir() != tc.workDir {
			t.Errorf("%s: %s, WorkDir() %s; want %s, %s", tc.c, k, tc.c.WorkDir(), tc.kubelet, tc.workDir)
		}
	}
	if len(Configs) != 5 {
		t.Errorf("Configs = %v: a configuration without a case above", Configs)
	}
	for _, tc := range []struct {
		in   string
		want []Config
	}{
		{"stock,gate off,gate on", []Config{Stock, GateOff, GateOn}},
		{"all-gates, gate-on ,node-status-gate", []Config{AllGates, GateOn, NodeStatusGate}},
		{"node-status gate", []Config{NodeStatusGate}},
		{"gate on,gate-on", nil},
		{"gate on,", nil},
		{"on", nil},
	} {
		got, err := ParseConfigs(tc.in)
		if !slices.Equal(got, tc.want) || (err != nil) != (tc.want == nil) {
			t.Errorf("ParseConfigs(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestSaveLoad(t *testing.T) {
	var r Result
	for _, c := range []Config{GateOn, Stock, GateOff, GateOn, NodeStatusGate} {
		r.Add(configMode(c, 5, []float64{0.1}, 1))
	}
	r.Orders = [][]Config{{GateOn, Stock, GateOff}, {GateOn}}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil || len(back.Stock) != 1 || len(back.Off) != 1 || len(back.On) != 2 || back.Orders[0][1] != Stock || back.On[0].Iterations["reconciler"] != 360 {
		t.Errorf("Load = %+v, %v", back, err)
	}
	checkModes := func(r Result) {
		for _, c := range Configs {
			for _, m := range r.Modes(c) {
				if m.Config != c || m.Kubelet.String() != c.Kubelet("").String() {
					t.Errorf("a mode of %s says %q, kubelet %s", c, m.Config, m.Kubelet)
				}
			}
		}
	}
	checkModes(back)
	data, err := json.Marshal(configMode(NodeStatusGate, 5, nil, 1))
	if err != nil || !strings.Contains(string(data), `"config":"node-status gate","kubelet":{"gates":{"EventedPLEG":false,"EventedVolumeManager":true,"VolumesInUseNodeStatusUpdate":true}},`) {
		t.Errorf("Marshal = %.160s, %v", data, err)
	}
	// Older modes get Config from stock and gate; a config wins over a gate.
	old := `{"stock": [{"gate": false, "stock": true}], "Off": [{"gate": false}], "On": [{"gate": true}, {"gate": true}],
		"allGates": [{"config": "all gates", "gate": true}], "nodeStatusGate": [{"config": "node-status gate", "gate": false}], "orders": null}`
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if back, err = Load(path); err != nil || !slices.Equal(back.configs(), Configs) {
		t.Fatalf("Load of old results = %+v, %v", back, err)
	}
	checkModes(back)
	if err := os.WriteFile(path, []byte(`{"Off": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, filepath.Join(t.TempDir(), "missing.json")} {
		if _, err := Load(p); err == nil {
			t.Errorf("Load(%s) gave no error", p)
		}
	}
}

func clusterMode(gate bool, scale float64) Mode {
	m := Mode{
		Runtime: "containerd", Pods: 110, Volumes: 4, WindowSeconds: 30,
		KubeletCPU: []float64{2 * scale, 3 * scale}, RuntimeCPU: []float64{1, 1},
		APIServerCPU: []float64{4, 4}, ControllerManagerCPU: []float64{0.5, 0.5},
		ProfileSeconds: 60, ProfileCPUSeconds: 6, VolumeManagerCPUSeconds: 1.2 * scale,
		Kinds: map[string]*KindTimes{
			"api":    {Mount: []float64{0.3 * scale}, MountEndToEnd: []float64{1 * scale}, UnmountEndToEnd: []float64{0.5}},
			"csi-1s": {Mount: []float64{1.3}, MountEndToEnd: []float64{2}, AttachedToMounted: []float64{0.2 * scale}, UnmountEndToEnd: []float64{0.6}, DetachEndToEnd: []float64{9}},
		},
		ConfigMapUpdate: []float64{40, 50, 60},
		Remount:         []float64{0.1 * scale, 0.2 * scale, 0.3 * scale},
		APIRequests: map[string]cluster.APIRequests{
			PhaseIdle: {Seconds: 120, Count: map[string]int{"get nodes": 12, "patch nodes/status": int(12 * scale)},
				MaxInSecond: map[string]int{"get nodes": 1, "patch nodes/status": 1}},
			PhaseChurn: {Seconds: 60, Count: map[string]int{"patch nodes/status": int(30 / scale), "create serviceaccounts/token": 15},
				MaxInSecond: map[string]int{"patch nodes/status": int(2 / scale), "create serviceaccounts/token": 3}},
		},
	}
	if gate {
		m.Passes = map[string]float64{"reconciler/full": 6, "desired_state_of_world_populator/partial": 30}
	}
	return m
}

func TestSaveProfile(t *testing.T) {
	dir := t.TempDir()
	for range 2 {
		if err := saveProfile(dir, AllGates, &profile.Profile{PeriodType: &profile.ValueType{Type: "cpu"}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"cpu-all-gates-1.pb.gz", "cpu-all-gates-2.pb.gz"} {
		if f, err := os.Open(filepath.Join(dir, name)); err != nil {
			t.Error(err)
		} else if p, err := profile.Parse(f); err != nil || p.PeriodType.Type != "cpu" {
			t.Errorf("%s: %v, %v", name, p, err)
		}
	}
}

func TestClusterReport(t *testing.T) {
	on := clusterMode(true, 0.1)
	on.APIRequests[PhaseChurn].MaxInSecond["patch nodes/status"] = 1
	r := Result{Cluster: true, Off: []Mode{clusterMode(false, 1), clusterMode(false, 1)}, On: []Mode{on, clusterMode(true, 0.1)},
		Orders: [][]Config{RoundOrder(1, []Config{GateOff, GateOn}), RoundOrder(2, []Config{GateOff, GateOn})}}
	rows := Rows(r)
	checkRows(t, rows, []rowWant{
		{"idle kubelet CPU", 4, 0.4, "10.0x"},
		{"idle volume manager CPU (pprof)", 1.2, 0.12, ""},
		{"idle kube-apiserver CPU", 8, 8, ""},
		{"api: volume-ready wait p50", 300, 30, ""},
		{"csi-1s: attached → mounted p50", 200, 20, ""},
		{"csi-1s: deleted → detached p99", 9000, 9000, ""},
		{"configMap updated → pod file p50", 50000, 50000, ""},
		{"pod sync → volumes remounted p50", 200, 20, ""},
		{"idle reconciler passes, full", math.NaN(), 6, ""},
		{"idle populator passes, partial", math.NaN(), 30, ""},
	})
	if slices.ContainsFunc(rows, func(r Row) bool { return strings.HasPrefix(r.Figure, "csi-0s") }) {
		t.Errorf("a row for a kind no round measured")
	}
	wantAPI := []APIRequestRow{
		{Key: "get nodes", Idle: []float64{6, 6}, Churn: []float64{0, 0}, IdleMax: []int{1, 1}, ChurnMax: []int{0, 0}},
		{Key: "patch nodes/status", Idle: []float64{6, 0.5}, Churn: []float64{30, 300}, IdleMax: []int{1, 1}, ChurnMax: []int{2, 20}},
		{Key: "create serviceaccounts/token", Idle: []float64{0, 0}, Churn: []float64{15, 15}, IdleMax: []int{0, 0}, ChurnMax: []int{3, 3}},
	}
	if got := APIRequestRows(r); !reflect.DeepEqual(got, wantAPI) {
		t.Errorf("API request rows\n%+v\nwant\n%+v", got, wantAPI)
	}
	path := filepath.Join(t.TempDir(), "results.json")
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	checkMarkdown(t, Markdown(loaded), []string{"110 API pods", "2 round(s) per gate value, round 1 gate off first, round 2 gate on first;",
		"| figure | gate off | gate on | off/on |\n", "| idle kubelet CPU | 4.00 CPU-s/min | 0.40 CPU-s/min | 10.0x |",
		"| idle reconciler passes, full | 600 (polls every 100 ms) | 6.00 /min | n/a |",
		"| patch nodes/status | 6.0 | 0.5 | 30.0 | 300.0 | 1 / 2 | 1 / 20 |"}, nil)
	if files, err := Charts(loaded, t.TempDir()); err != nil || len(files) != 2 {
		t.Errorf("charts %v, %v; want 2", files, err)
	}
}

func TestScaleReport(t *testing.T) {
	mode := func(c Config, pods int, vm float64) Mode {
		m := Mode{
			Runtime: "containerd", Pods: pods, Volumes: 4, WindowSeconds: 60,
			KubeletCPU: []float64{5, 5}, RuntimeCPU: []float64{8, 9},
			ProfileSeconds: 60, ProfileCPUSeconds: 4, VolumeManagerCPUSeconds: vm, Mount: []float64{0.3, 0.301}, GapSeconds: 1,
			KubeletRSSMiB: []float64{100, float64(pods)},
		}
		if c == GateOn {
			m.Passes = map[string]float64{"reconciler/full": 12, "reconciler/partial": 40}
		}
		return m
	}
	size := func(pods int, stock bool, vmStock, vmOff, vmOn float64) Size {
		r := Result{Off: []Mode{mode(GateOff, pods, vmOff)}, On: []Mode{mode(GateOn, pods, vmOn)}}
		if stock {
			r.Stock = []Mode{mode(Stock, pods, vmStock)}
		}
		return Size{Pods: pods, Result: r}
	}
	tests := []struct {
		name  string
		sizes []Size
		want  []string
	}{{
		name:  "stock at every size, out of order",
		sizes: []Size{size(250, true, 2.5, 3, 0.25), size(110, true, 1, 1.2, 0.1)},
		want: []string{
			"upstream's kubelet (stock) and the series with the gate off and on",
			"- 110 pods: 1 round(s) per configuration (stock, gate off, gate on) on containerd,",
			"| figure | 110 stock | 110 off | 110 on | stock/on | off/on | 250 stock | 250 off | 250 on | stock/on | off/on |",
			"| idle volume manager CPU (pprof) (CPU-s/min) | 1.00 | 1.20 | 0.10 | 10.0x | 12.0x | 2.50 | 3.00 | 0.25 | 10.0x | 12.0x |",
			"| kubelet RSS (median of reads in the idle windows) (MiB) | 105 | 105 | 105 | 1.0x | 1.0x | 175 | 175 | 175 | 1.0x | 1.0x |",
			// 12 full passes over two 60 s windows.
			"| idle reconciler full passes (/min) | n/a | n/a | 6.00 | n/a | n/a |",
			"| pods | pod ratio | process | stock growth | gate off growth | gate on growth |\n|---|---|---|---|---|---|\n" +
				"| 250 | 2.27x | volume manager | 2.50x (1.10x) | 2.50x (1.10x) | 2.50x (1.10x) |\n| 250 | 2.27x | kubelet | 1.00x (0.44x) | 1.00x (0.44x) | 1.00x (0.44x) |",
			"(stock | gate off | gate on)", "- 110 pods: 8.00, 9.00 | 8.00, 9.00 | 8.00, 9.00",
			"Stock and gate off, the loops count no passes",
		},
	}, {
		name:  "stock at one size only",
		sizes: []Size{size(110, true, 1, 1.2, 0.1), size(250, false, 0, 3, 0.25)},
		want: []string{
			"| idle volume manager CPU (pprof) (CPU-s/min) | 1.00 | 1.20 | 0.10 | 10.0x | 12.0x | — | 3.00 | 0.25 | — | 12.0x |",
			"- 250 pods: 1 round(s) per gate value on containerd,", "| 250 | 2.27x | volume manager | — | 2.50x (1.10x) | 2.50x (1.10x) |", "- 250 pods: — | 8.00, 9.00 | 8.00, 9.00",
		},
	}, {
		name: "all gates at one size only",
		sizes: []Size{func() Size {
			s := size(110, true, 1, 1.2, 0.1)
			s.Result.AllGates = []Mode{mode(AllGates, 110, 0.05)}
			return s
		}(), size(250, false, 0, 3, 0.25)},
		want: []string{
			"### Real node at 110, 250 pods × 4 volumes, stock, gate off, gate on, all gates\n",
			"- 110 pods: 1 round(s) per configuration (stock, gate off, gate on, all gates) on containerd,",
			"| figure | 110 stock | 110 off | 110 on | 110 all gates | stock/on | off/on | 250 stock | 250 off | 250 on | 250 all gates | stock/on | off/on |",
			"| idle volume manager CPU (pprof) (CPU-s/min) | 1.00 | 1.20 | 0.10 | 0.050 | 10.0x | 12.0x | — | 3.00 | 0.25 | — | — | 12.0x |",
			"| pods | pod ratio | process | stock growth | gate off growth | gate on growth | all gates growth |",
			"Stock and gate off, the loops count no passes",
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkMarkdown(t, ScaleMarkdown(tc.sizes), tc.want, nil) })
	}
}

func TestExitAfter(t *testing.T) {
	for _, tc := range []struct {
		i, n int
		want time.Duration
	}{{0, 1, exitMin}, {0, 5, 3 * time.Second}, {1, 5, 4250 * time.Millisecond}, {2, 5, 5500 * time.Millisecond}, {3, 5, 6750 * time.Millisecond}, {4, 5, 8 * time.Second}} {
		if got := exitAfter(tc.i, tc.n); got != tc.want {
			t.Errorf("exitAfter(%d, %d) = %v, want %v", tc.i, tc.n, got, tc.want)
		}
	}
}

// TestExitingPodManifest belongs with pkg/node's TestPodManifest: the exiting
// pods' one container exits on its own, with restartPolicy Never.
func TestExitingPodManifest(t *testing.T) {
	var pod struct {
		Spec struct {
			RestartPolicy string
			Containers    []struct {
				Name    string
				Command []string
			}
			Volumes []any
		}
	}
	if err := yaml.Unmarshal([]byte(node.ExitingPodManifest("x-001", "/srv/host", 3250*time.Millisecond)), &pod); err != nil {
		t.Fatal(err)
	}
	s := pod.Spec
	if s.RestartPolicy != "Never" || len(s.Containers) != 1 || s.Containers[0].Name != node.ExitContainer || len(s.Volumes) != node.VolumesPerPod {
		t.Fatalf("spec = %+v", s)
	}
	if cmd := s.Containers[0].Command; len(cmd) != 3 || !strings.HasSuffix(cmd[2], "; sleep 3.250") || strings.Contains(cmd[2], "trap") {
		t.Errorf("command = %q, want one that sleeps 3.250 s and then exits", cmd)
	}
	if m := node.PodManifest("w-001", "/srv/host", nil); strings.Contains(m, "restartPolicy") {
		t.Errorf("PodManifest sets a restartPolicy:\n%s", m)
	}
}

func TestMountedPods(t *testing.T) {
	const pods = "/w/kubelet/root/pods"
	mounts := []string{pods + "/uid-1/volumes/kubernetes.io~downward-api/labels", pods + "/uid-1/volumes/kubernetes.io~downward-api/annotations",
		pods + "/uid-2/volumes", pods + "/uid-3/volume-subpaths/scratch/bb/0", // uid-3's is not a volume's
		pods + "/uid-4/volumesx/a", pods + "/uid-5", "/w/kubelet/root/plugins/x", "/other/pods/uid-6/volumes/a", pods}
	want := map[string]bool{"uid-1": true, "uid-2": true}
	for _, dir := range []string{pods, pods + "/"} {
		if got := mountedPods(slices.Values(mounts), dir); !maps.Equal(got, want) {
			t.Errorf("mountedPods(%q) = %v, want %v", dir, got, want)
		}
	}
}

func TestParseInspect(t *testing.T) {
	one := `{"info": {"pid": 0}, "status": {"id": "c1", "state": "CONTAINER_EXITED", "exitCode": 0, "createdAt": "2026-11-26T10:00:00.000000001Z",
    "finishedAt": "2026-11-26T10:00:05.123456789Z", "labels": {"io.kubernetes.pod.name": "x-000-node", "io.kubernetes.pod.uid": "uid-1"}}}`
	two := `[` + one + `, {"status": {"state": "CONTAINER_RUNNING", "exitCode": 0, "finishedAt": "0001-01-01T00:00:00Z",
    "labels": {"io.kubernetes.pod.uid": "uid-2"}}}]`
	got, err := parseInspect([]byte(one + "\n"))
	if err != nil || len(got) != 1 {
		t.Fatalf("one container: %+v, %v", got, err)
	}
	wantAt := time.Date(2026, 11, 26, 10, 0, 5, 123456789, time.UTC)
	if c := got[0]; c.podUID() != "uid-1" || c.Status.State != "CONTAINER_EXITED" || c.Status.ExitCode != 0 || !c.Status.FinishedAt.Equal(wantAt) {
		t.Errorf("one container = %+v, want uid-1 exited 0 at %v", c, wantAt)
	}
	got, err = parseInspect([]byte(two))
	if err != nil || len(got) != 2 || got[1].podUID() != "uid-2" || got[1].Status.State != "CONTAINER_RUNNING" || !got[0].Status.FinishedAt.Equal(wantAt) {
		t.Errorf("two containers: %+v, %v", got, err)
	}
	if _, err := parseInspect([]byte("FATA[0000] no such container")); err == nil {
		t.Error("parsing crictl's error gave no error")
	}
}
