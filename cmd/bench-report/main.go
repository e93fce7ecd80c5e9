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

// Command bench-report prints the tables of make bench's in-tree benchmark,
// and writes its charts and report.md into -out:
//
//	bench-report -out DIR RESULT.json...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"

	"evented-volume-manager/pkg/bench"
)

func main() {
	out := flag.String("out", ".", "directory for the charts and report.md")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: bench-report -out DIR RESULT.json...")
		os.Exit(2)
	}
	if err := report(*out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "bench-report:", err)
		os.Exit(1)
	}
}

func report(out string, results []string) error {
	var md strings.Builder
	for _, path := range results {
		off, on, err := load(path)
		if err != nil {
			return err
		}
		file := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)) + "-mount-latency-cdf.png"
		if err := chart(off, on, filepath.Join(out, file)); err != nil {
			return err
		}
		fmt.Fprintf(&md, "%s\nCharts: %s\n\n", markdown(off, on), file)
	}
	fmt.Print(md.String())
	return os.WriteFile(filepath.Join(out, "report.md"), []byte(md.String()), 0o644)
}

// mode is the in-tree test's SideBySideMode, which cannot import this
// module (change the two together).
type mode struct {
	Gate                 bool               `json:"gate"`
	Pods                 int                `json:"pods"`
	Volumes              int                `json:"volumes"`
	IdleSeconds          float64            `json:"idleSeconds"`
	PopulatorIterations  int64              `json:"populatorIterations"`
	ReconcilerIterations int64              `json:"reconcilerIterations"`
	IdleCPUSeconds       float64            `json:"idleCPUSeconds"`
	MountSingle          []float64          `json:"mountSingle"`
	MountSlow            []float64          `json:"mountSlow"`
	GapSeconds           float64            `json:"gapSeconds"`
	SlowSeconds          float64            `json:"slowGapSeconds"`
	MountBurst           []float64          `json:"mountBurst"`
	Unmount              []float64          `json:"unmount"`
	ResyncSeconds        float64            `json:"resyncSeconds"`
	Resyncs              int64              `json:"resyncs"`
	IdlePasses           map[string]float64 `json:"idlePasses,omitempty"`
}

// idle is n, counted in the idle window, per minute.
func (m mode) idle(n float64) float64 {
	if m.IdleSeconds <= 0 {
		return math.NaN()
	}
	return n * 60 / m.IdleSeconds
}

// walks are the idle passes of both loops that walk everything.
func (m mode) walks() float64 {
	return float64(m.PopulatorIterations + m.ReconcilerIterations)
}

// load reads a results file: the gate off, then on.
func load(path string) (off, on mode, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return off, on, err
	}
	var modes []mode
	if err := json.Unmarshal(data, &modes); err != nil {
		return off, on, fmt.Errorf("%s: %w", path, err)
	}
	i, j := slices.IndexFunc(modes, func(m mode) bool { return !m.Gate }), slices.IndexFunc(modes, func(m mode) bool { return m.Gate })
	if i < 0 || j < 0 || modes[i].Pods == 0 || modes[j].Pods == 0 {
		return off, on, fmt.Errorf("%s: want results for the gate off and on", path)
	}
	return modes[i], modes[j], nil
}

func markdown(off, on mode) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %d pods × %d volumes\n\n", off.Pods, off.Volumes)
	fmt.Fprintf(&b, "Idle window %.0f s per mode. Every pod is resynced (ReprocessPod, then WaitForAttachAndMount) every %g to %g s, "+
		"as the pod workers do: %d and %d resyncs in the idle windows (off, on).\n\n",
		on.IdleSeconds, on.ResyncSeconds, 1.5*on.ResyncSeconds, off.Resyncs, on.Resyncs)
	b.WriteString("| figure | gate off | gate on | off/on |\n|---|---|---|---|\n")
	row := func(figure string, off, on float64, unit string, lowerWins bool) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", figure, bench.Cell(off, unit), bench.Cell(on, unit), bench.Ratio(off, on, lowerWins))
	}
	row("idle populator passes that walk all pods", off.idle(float64(off.PopulatorIterations)), on.idle(float64(on.PopulatorIterations)), "/min", true)
	row("idle reconciler passes that walk the states", off.idle(float64(off.ReconcilerIterations)), on.idle(float64(on.ReconcilerIterations)), "/min", true)
	row("idle walks, both loops", off.idle(off.walks()), on.idle(on.walks()), "/min", true)
	row("idle process CPU", off.idle(off.IdleCPUSeconds), on.idle(on.IdleCPUSeconds), "CPU-s/min", true)
	row("CPU per idle walk", 1e6*off.IdleCPUSeconds/off.walks(), 1e6*on.IdleCPUSeconds/on.walks(), "µs", true)
	if on.IdlePasses != nil { // with the gate off, every pass is a walk
		for _, l := range []struct {
			name, label string
			off         int64
		}{{"populator", "desired_state_of_world_populator", off.PopulatorIterations}, {"reconciler", "reconciler", off.ReconcilerIterations}} {
			passes := func(kind string) float64 { return on.idle(on.IdlePasses[l.label+"/"+kind]) }
			row(fmt.Sprintf("idle %s passes, all kinds", l.name), off.idle(float64(l.off)), passes("full")+passes("partial")+passes("skipped"), "/min", true)
			row(fmt.Sprintf("idle %s passes skipped (O(1))", l.name), math.NaN(), passes("skipped"), "/min", false)
			row(fmt.Sprintf("idle %s passes on changed pods only", l.name), math.NaN(), passes("partial"), "/min", false)
		}
	}
	for _, s := range []struct {
		name     string
		off, on  []float64
		describe string
	}{
		{"mount-ready, single pods", off.MountSingle, on.MountSingle, fmt.Sprintf("%gs apart", off.GapSeconds)},
		{"mount-ready, single pods", off.MountSlow, on.MountSlow, fmt.Sprintf("%gs apart", off.SlowSeconds)},
		{"mount-ready, burst", off.MountBurst, on.MountBurst, fmt.Sprintf("%d pods at once", len(off.MountBurst))},
		{"unmounted after termination", off.Unmount, on.Unmount, fmt.Sprintf("%gs apart", off.GapSeconds)},
	} {
		if len(s.off) == 0 {
			continue
		}
		for _, q := range []float64{0.5, 0.9, 0.99} {
			row(fmt.Sprintf("%s (%s) p%.0f", s.name, s.describe, 100*q), 1000*bench.Quantile(s.off, q), 1000*bench.Quantile(s.on, q), "ms", true)
		}
	}
	return b.String()
}

func chart(off, on mode, file string) error {
	dashes := []vg.Length{vg.Points(4), vg.Points(3)}
	return bench.CDFChart(file, fmt.Sprintf("Mount-ready latency CDF (%d pods × %d volumes)", off.Pods, off.Volumes),
		"milliseconds from pod added to WaitForAttachAndMount returning (log scale)",
		bench.Series{Name: fmt.Sprintf("singles %gs apart, gate off", off.GapSeconds), Seconds: off.MountSingle, Color: bench.OffColor},
		bench.Series{Name: fmt.Sprintf("singles %gs apart, gate off", off.SlowSeconds), Seconds: off.MountSlow, Color: bench.OffColor, Dashes: dashes},
		bench.Series{Name: fmt.Sprintf("singles %gs apart, gate on", on.GapSeconds), Seconds: on.MountSingle, Color: bench.OnColor},
		bench.Series{Name: fmt.Sprintf("singles %gs apart, gate on", on.SlowSeconds), Seconds: on.MountSlow, Color: bench.OnColor, Dashes: dashes})
}
