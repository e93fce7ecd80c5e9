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

// Package bench reads the results of the in-tree side-by-side benchmark
// (TestVolumeManagerSideBySide in pkg/kubelet/volumemanager, run by make
// bench) and turns them into markdown tables and charts.
package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
)

// Mode is one gate value's results, as the in-tree test writes them.
type Mode struct {
	Gate                       bool      `json:"gate"`
	Pods                       int       `json:"pods"`
	Volumes                    int       `json:"volumes"`
	IdleSeconds                float64   `json:"idleSeconds"`
	PopulatorIterations        int64     `json:"populatorIterations"`
	ReconcilerIterations       int64     `json:"reconcilerIterations"`
	IdleCPUSeconds             float64   `json:"idleCPUSeconds"`
	PopulatorPerSecond         []float64 `json:"populatorPerSecond"`
	ReconcilerPerSecond        []float64 `json:"reconcilerPerSecond"`
	MountSingle                []float64 `json:"mountSingle"`
	MountSlow                  []float64 `json:"mountSlow"`
	GapSeconds                 float64   `json:"gapSeconds"`
	SlowSeconds                float64   `json:"slowGapSeconds"`
	MountBurst                 []float64 `json:"mountBurst"`
	Unmount                    []float64 `json:"unmount"`
	StormEventsSent            int64     `json:"stormEventsSent"`
	StormSeconds               float64   `json:"stormSeconds"`
	StormPopulatorIterations   int64     `json:"stormPopulatorIterations"`
	StormReconcilerIterations  int64     `json:"stormReconcilerIterations"`
	StormPopulatorMaxPerSecond float64   `json:"stormPopulatorMaxPerSecond"`
	// ResyncSeconds is the pods' resync interval, 0 in results from before
	// the benchmark resynced pods; Resyncs counts the idle window's.
	ResyncSeconds float64 `json:"resyncSeconds"`
	Resyncs       int64   `json:"resyncs"`
	// IdlePasses counts the gate's passes in the idle window by "loop/kind"
	// (full, partial, skipped); nil with the gate off.
	IdlePasses map[string]float64 `json:"idlePasses,omitempty"`
}

// Run is one benchmark run: the same workload with the gate off and on.
type Run struct {
	Off, On Mode
}

// Load reads a results file.
func Load(path string) (Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Run{}, err
	}
	var modes []Mode
	if err := json.Unmarshal(data, &modes); err != nil {
		return Run{}, fmt.Errorf("%s: %w", path, err)
	}
	var r Run
	var off, on bool
	for _, m := range modes {
		if m.Gate {
			r.On, on = m, true
		} else {
			r.Off, off = m, true
		}
	}
	if !off || !on {
		return Run{}, fmt.Errorf("%s: want results for the gate off and on", path)
	}
	return r, nil
}

// Quantile returns the q-quantile (0..1) of xs by the nearest-rank method, or
// NaN for no data.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	rank := int(math.Ceil(q*float64(len(s)))) - 1
	rank = max(0, min(rank, len(s)-1))
	return s[rank]
}

// PerMinute converts a count over seconds into a rate per minute.
func PerMinute(n int64, seconds float64) float64 {
	if seconds <= 0 {
		return math.NaN()
	}
	return float64(n) * 60 / seconds
}

// Row is one line of the comparison table.
type Row struct {
	Figure    string
	Off, On   float64
	Unit      string
	LowerWins bool
}

// Ratio is off/on for figures where lower is better, so that "9x" reads as
// nine times better with the gate on.
func (r Row) Ratio() string {
	if r.On == 0 || math.IsNaN(r.On) || math.IsNaN(r.Off) {
		return "n/a"
	}
	ratio := r.Off / r.On
	if !r.LowerWins {
		ratio = r.On / r.Off
	}
	return fmt.Sprintf("%.1fx", ratio)
}

// Rows are the table's lines for one run.
func Rows(r Run) []Row {
	ms := func(xs []float64, q float64) float64 { return 1000 * Quantile(xs, q) }
	rows := []Row{
		{"idle populator passes that walk all pods", PerMinute(r.Off.PopulatorIterations, r.Off.IdleSeconds), PerMinute(r.On.PopulatorIterations, r.On.IdleSeconds), "/min", true},
		{"idle reconciler passes that walk the states", PerMinute(r.Off.ReconcilerIterations, r.Off.IdleSeconds), PerMinute(r.On.ReconcilerIterations, r.On.IdleSeconds), "/min", true},
		{"idle walks, both loops", PerMinute(r.Off.PopulatorIterations+r.Off.ReconcilerIterations, r.Off.IdleSeconds), PerMinute(r.On.PopulatorIterations+r.On.ReconcilerIterations, r.On.IdleSeconds), "/min", true},
		{"idle process CPU", 60 * r.Off.IdleCPUSeconds / r.Off.IdleSeconds, 60 * r.On.IdleCPUSeconds / r.On.IdleSeconds, "CPU-s/min", true},
		{"CPU per idle walk", 1e6 * r.Off.IdleCPUSeconds / float64(r.Off.PopulatorIterations+r.Off.ReconcilerIterations), 1e6 * r.On.IdleCPUSeconds / float64(r.On.PopulatorIterations+r.On.ReconcilerIterations), "µs", true},
	}
	if r.On.IdlePasses != nil {
		// With the gate off every pass walks everything: its passes are its
		// walks.
		for _, l := range []struct{ name, label string }{{"populator", "desired_state_of_world_populator"}, {"reconciler", "reconciler"}} {
			var all float64
			for _, kind := range []string{"full", "partial", "skipped"} {
				all += r.On.IdlePasses[l.label+"/"+kind]
			}
			off := PerMinute(r.Off.PopulatorIterations, r.Off.IdleSeconds)
			if l.name == "reconciler" {
				off = PerMinute(r.Off.ReconcilerIterations, r.Off.IdleSeconds)
			}
			rows = append(rows,
				Row{fmt.Sprintf("idle %s passes, all kinds", l.name), off, 60 * all / r.On.IdleSeconds, "/min", true},
				Row{fmt.Sprintf("idle %s passes skipped (O(1))", l.name), math.NaN(), 60 * r.On.IdlePasses[l.label+"/skipped"] / r.On.IdleSeconds, "/min", false},
				Row{fmt.Sprintf("idle %s passes on changed pods only", l.name), math.NaN(), 60 * r.On.IdlePasses[l.label+"/partial"] / r.On.IdleSeconds, "/min", false},
			)
		}
	}
	for _, s := range []struct {
		name     string
		off, on  []float64
		describe string
	}{
		{"mount-ready, single pods", r.Off.MountSingle, r.On.MountSingle, fmt.Sprintf("%gs apart", r.Off.GapSeconds)},
		{"mount-ready, single pods", r.Off.MountSlow, r.On.MountSlow, fmt.Sprintf("%gs apart", r.Off.SlowSeconds)},
		{"mount-ready, burst", r.Off.MountBurst, r.On.MountBurst, fmt.Sprintf("%d pods at once", len(r.Off.MountBurst))},
		{"unmounted after termination", r.Off.Unmount, r.On.Unmount, fmt.Sprintf("%gs apart", r.Off.GapSeconds)},
	} {
		if len(s.off) == 0 {
			continue
		}
		for _, q := range []struct {
			name string
			q    float64
		}{{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}} {
			rows = append(rows, Row{fmt.Sprintf("%s (%s) %s", s.name, s.describe, q.name), ms(s.off, q.q), ms(s.on, q.q), "ms", true})
		}
	}
	rows = append(rows,
		Row{"storm: populator iterations", float64(r.Off.StormPopulatorIterations) / r.Off.StormSeconds, float64(r.On.StormPopulatorIterations) / r.On.StormSeconds, "/s", true},
		Row{"storm: reconciler iterations", float64(r.Off.StormReconcilerIterations) / r.Off.StormSeconds, float64(r.On.StormReconcilerIterations) / r.On.StormSeconds, "/s", true},
		Row{"storm: busiest populator second", r.Off.StormPopulatorMaxPerSecond, r.On.StormPopulatorMaxPerSecond, "/s", true},
	)
	return rows
}

// Markdown renders one run as a table: gate off, gate on, ratio.
func Markdown(r Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %d pods × %d volumes\n\n", r.Off.Pods, r.Off.Volumes)
	fmt.Fprintf(&b, "Idle window %.0f s per mode; storm %d runtime events in %.0f s (gate on; nobody subscribes with the gate off).\n\n",
		r.On.IdleSeconds, r.On.StormEventsSent, r.On.StormSeconds)
	if r.On.ResyncSeconds > 0 {
		fmt.Fprintf(&b, "Every pod is resynced (ReprocessPod, then WaitForAttachAndMount) every %g to %g s, as the pod workers do: %d and %d resyncs in the idle windows (off, on).\n\n",
			r.On.ResyncSeconds, 1.5*r.On.ResyncSeconds, r.Off.Resyncs, r.On.Resyncs)
	} else {
		fmt.Fprintf(&b, "No periodic pod resyncs (results from before the benchmark added them).\n\n")
	}
	b.WriteString("| figure | gate off | gate on | off/on |\n|---|---|---|---|\n")
	for _, row := range Rows(r) {
		fmt.Fprintf(&b, "| %s | %s %s | %s %s | %s |\n", row.Figure, format(row.Off), row.Unit, format(row.On), row.Unit, row.Ratio())
	}
	return b.String()
}

func format(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
