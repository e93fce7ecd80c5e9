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

// Command bench-report prints the tables of make bench, the in-tree
// side-by-side benchmark (TestVolumeManagerSideBySide, which
// test/kubelet/testdata/volumemanager holds), and writes its charts and
// report.md into -out:
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
		r, err := load(path)
		if err != nil {
			return err
		}
		file := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)) + "-mount-latency-cdf.png"
		if err := chart(r, filepath.Join(out, file)); err != nil {
			return err
		}
		fmt.Fprintf(&md, "%s\nCharts: %s\n\n", markdown(r), file)
	}
	fmt.Print(md.String())
	return os.WriteFile(filepath.Join(out, "report.md"), []byte(md.String()), 0o644)
}

// mode is one gate value's results, as the in-tree test writes them
// (SideBySideMode in test/kubelet/testdata/volumemanager). The test runs
// copied into the tree's package and cannot import this module, so the two
// share the JSON, not the type: change them together.
type mode struct {
	Gate                 bool      `json:"gate"`
	Pods                 int       `json:"pods"`
	Volumes              int       `json:"volumes"`
	IdleSeconds          float64   `json:"idleSeconds"`
	PopulatorIterations  int64     `json:"populatorIterations"`
	ReconcilerIterations int64     `json:"reconcilerIterations"`
	IdleCPUSeconds       float64   `json:"idleCPUSeconds"`
	MountSingle          []float64 `json:"mountSingle"`
	MountSlow            []float64 `json:"mountSlow"`
	GapSeconds           float64   `json:"gapSeconds"`
	SlowSeconds          float64   `json:"slowGapSeconds"`
	MountBurst           []float64 `json:"mountBurst"`
	Unmount              []float64 `json:"unmount"`
	// ResyncSeconds is the pods' resync interval; Resyncs counts the idle
	// window's.
	ResyncSeconds float64 `json:"resyncSeconds"`
	Resyncs       int64   `json:"resyncs"`
	// IdlePasses counts the gate's passes in the idle window by "loop/kind"
	// (full, partial, skipped); nil with the gate off.
	IdlePasses map[string]float64 `json:"idlePasses,omitempty"`
}

// run is one benchmark run: the same workload with the gate off and on.
type run struct {
	Off, On mode
}

// load reads a results file.
func load(path string) (run, error) {
	var r run
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	var modes []mode
	if err := json.Unmarshal(data, &modes); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	for _, m := range modes {
		if m.Gate {
			r.On = m
		} else {
			r.Off = m
		}
	}
	if r.Off.Pods == 0 || r.On.Pods == 0 {
		return r, fmt.Errorf("%s: want results for the gate off and on", path)
	}
	return r, nil
}

// perMinute converts a count over seconds into a rate per minute.
func perMinute(n float64, seconds float64) float64 {
	if seconds <= 0 {
		return math.NaN()
	}
	return n * 60 / seconds
}

// markdown renders one run as a table: gate off, gate on, ratio.
func markdown(r run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %d pods × %d volumes\n\n", r.Off.Pods, r.Off.Volumes)
	fmt.Fprintf(&b, "Idle window %.0f s per mode. ", r.On.IdleSeconds)
	if r.On.ResyncSeconds > 0 {
		fmt.Fprintf(&b, "Every pod is resynced (ReprocessPod, then WaitForAttachAndMount) every %g to %g s, as the pod workers do: "+
			"%d and %d resyncs in the idle windows (off, on).\n\n", r.On.ResyncSeconds, 1.5*r.On.ResyncSeconds, r.Off.Resyncs, r.On.Resyncs)
	} else {
		b.WriteString("No periodic pod resyncs.\n\n")
	}
	b.WriteString("| figure | gate off | gate on | off/on |\n|---|---|---|---|\n")
	row := func(figure string, off, on float64, unit string, lowerWins bool) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", figure, bench.Cell(off, unit), bench.Cell(on, unit), bench.Ratio(off, on, lowerWins))
	}
	walks := func(m mode) float64 { return float64(m.PopulatorIterations + m.ReconcilerIterations) }
	row("idle populator passes that walk all pods", perMinute(float64(r.Off.PopulatorIterations), r.Off.IdleSeconds),
		perMinute(float64(r.On.PopulatorIterations), r.On.IdleSeconds), "/min", true)
	row("idle reconciler passes that walk the states", perMinute(float64(r.Off.ReconcilerIterations), r.Off.IdleSeconds),
		perMinute(float64(r.On.ReconcilerIterations), r.On.IdleSeconds), "/min", true)
	row("idle walks, both loops", perMinute(walks(r.Off), r.Off.IdleSeconds), perMinute(walks(r.On), r.On.IdleSeconds), "/min", true)
	row("idle process CPU", perMinute(r.Off.IdleCPUSeconds, r.Off.IdleSeconds), perMinute(r.On.IdleCPUSeconds, r.On.IdleSeconds), "CPU-s/min", true)
	row("CPU per idle walk", 1e6*r.Off.IdleCPUSeconds/walks(r.Off), 1e6*r.On.IdleCPUSeconds/walks(r.On), "µs", true)
	if r.On.IdlePasses != nil {
		// With the gate off every pass walks everything: its passes are its
		// walks.
		for _, l := range []struct {
			name, label string
			off         int64
		}{{"populator", "desired_state_of_world_populator", r.Off.PopulatorIterations}, {"reconciler", "reconciler", r.Off.ReconcilerIterations}} {
			passes := func(kind string) float64 { return perMinute(r.On.IdlePasses[l.label+"/"+kind], r.On.IdleSeconds) }
			row(fmt.Sprintf("idle %s passes, all kinds", l.name), perMinute(float64(l.off), r.Off.IdleSeconds),
				passes("full")+passes("partial")+passes("skipped"), "/min", true)
			row(fmt.Sprintf("idle %s passes skipped (O(1))", l.name), math.NaN(), passes("skipped"), "/min", false)
			row(fmt.Sprintf("idle %s passes on changed pods only", l.name), math.NaN(), passes("partial"), "/min", false)
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
		for _, q := range []float64{0.5, 0.9, 0.99} {
			row(fmt.Sprintf("%s (%s) p%.0f", s.name, s.describe, 100*q), 1000*bench.Quantile(s.off, q), 1000*bench.Quantile(s.on, q), "ms", true)
		}
	}
	return b.String()
}

// chart writes the run's mount-ready latency CDF, gate off against gate on,
// into file (PNG).
func chart(r run, file string) error {
	dashes := []vg.Length{vg.Points(4), vg.Points(3)}
	return bench.CDFChart(file, fmt.Sprintf("Mount-ready latency CDF (%d pods × %d volumes)", r.Off.Pods, r.Off.Volumes),
		"milliseconds from pod added to WaitForAttachAndMount returning (log scale)",
		bench.Series{Name: fmt.Sprintf("singles %gs apart, gate off", r.Off.GapSeconds), Seconds: r.Off.MountSingle, Color: bench.OffColor},
		bench.Series{Name: fmt.Sprintf("singles %gs apart, gate off", r.Off.SlowSeconds), Seconds: r.Off.MountSlow, Color: bench.OffColor, Dashes: dashes},
		bench.Series{Name: fmt.Sprintf("singles %gs apart, gate on", r.On.GapSeconds), Seconds: r.On.MountSingle, Color: bench.OnColor},
		bench.Series{Name: fmt.Sprintf("singles %gs apart, gate on", r.On.SlowSeconds), Seconds: r.On.MountSlow, Color: bench.OnColor, Dashes: dashes})
}
