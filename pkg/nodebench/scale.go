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
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"evented-volume-manager/pkg/bench"
	"evented-volume-manager/pkg/kubeletlog"
)

// Size is one node size of a scale run: its pods and its result.
type Size struct {
	Pods   int
	Result Result
}

// scaleFigures are the rows of the scale table: a figure's value at a size
// in one configuration, NaN where nothing measured it.
func scaleFigures(runtime string) []figure {
	fs := []figure{
		{name: "idle volume manager CPU (pprof)", unit: "CPU-s/min", value: median(vmCPU, 1)},
		{name: "idle kubelet CPU (median of windows)", unit: "CPU-s/min", value: median(kubeletCPU, 1)},
		{name: "idle " + runtime + " CPU (median of windows)", unit: "CPU-s/min", value: median(runtimeCPU, 1)},
	}
	// Stock and gate off, upstream's loops count no passes: NaN.
	for _, loop := range []string{loops[1], loops[0]} {
		for _, kind := range []string{"full", "partial"} {
			fs = append(fs, figure{name: fmt.Sprintf("idle %s %s passes", shortLoop(loop), kind), unit: "/min",
				value: func(modes []Mode) float64 { return idleRate(modes, passes, loop+"/"+kind) }})
		}
	}
	return slices.Concat(fs,
		quantiles("single-pod mount wait", false, func(m Mode) []float64 { return m.Mount }),
		quantiles("manifest removed → all volumes unmounted", false, phase(kubeletlog.VolumesUnmounted)))
}

// ScaleMarkdown renders the scale table: every figure at every size,
// stock (when any size ran it; "—" at a size that did not), gate off, gate
// on, stock/on and off/on, then how the idle volume manager CPU grew
// against the pods.
func ScaleMarkdown(sizes []Size) string {
	sizes = slices.SortedFunc(slices.Values(sizes), func(a, b Size) int { return cmp.Compare(a.Pods, b.Pods) })
	stock := slices.ContainsFunc(sizes, func(s Size) bool { return len(s.Result.Stock) > 0 })
	pods := make([]string, len(sizes))
	for i, s := range sizes {
		pods[i] = fmt.Sprint(s.Pods)
	}
	var b strings.Builder
	if stock {
		fmt.Fprintf(&b, "### Real node at %s pods × 4 volumes, upstream's kubelet (stock) and the series with the gate off and on\n\n", strings.Join(pods, ", "))
	} else {
		fmt.Fprintf(&b, "### Real node at %s pods × 4 volumes, gate off against gate on\n\n", strings.Join(pods, ", "))
	}
	for _, s := range sizes {
		m := s.Result.On[0]
		per := "per gate value"
		if len(s.Result.Stock) > 0 {
			per = "per configuration (stock, gate off, gate on)"
		}
		fmt.Fprintf(&b, "- %d pods: %d round(s) %s on %s, %d idle window(s) of %.0f s and a %.0f s profile per round, %d single pods per round.\n",
			s.Pods, len(s.Result.On), per, m.Runtime, len(m.KubeletCPU), m.WindowSeconds, m.ProfileSeconds, len(m.Mount))
	}
	columns := []string{"off", "on", "off/on"}
	if stock {
		columns = []string{"stock", "off", "on", "stock/on", "off/on"}
	}
	b.WriteString("\n| figure |")
	for _, s := range sizes {
		for _, c := range columns {
			if !strings.Contains(c, "/") {
				c = fmt.Sprintf("%d %s", s.Pods, c)
			}
			fmt.Fprintf(&b, " %s |", c)
		}
	}
	fmt.Fprintf(&b, "\n|---|%s\n", strings.Repeat("---|", len(sizes)*len(columns)))
	ratio := func(a, on float64) string {
		if math.IsNaN(a) || math.IsNaN(on) || on == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.1fx", a/on)
	}
	for _, f := range scaleFigures(sizes[0].Result.On[0].RuntimeName()) {
		fmt.Fprintf(&b, "| %s (%s) |", f.name, f.unit)
		for _, s := range sizes {
			off, on := f.value(s.Result.Off), f.value(s.Result.On)
			if stock {
				stockCell, stockRatio := "—", "—"
				if len(s.Result.Stock) > 0 {
					st := f.value(s.Result.Stock)
					stockCell, stockRatio = bench.Number(st), ratio(st, on)
				}
				fmt.Fprintf(&b, " %s | %s | %s | %s | %s |", stockCell, bench.Number(off), bench.Number(on), stockRatio, ratio(off, on))
			} else {
				fmt.Fprintf(&b, " %s | %s | %s |", bench.Number(off), bench.Number(on), ratio(off, on))
			}
		}
		b.WriteString("\n")
	}
	configs := []Config{GateOff, GateOn}
	if stock {
		configs = Configs
		b.WriteString("\nStock and gate off, the loops count no passes: upstream's populator and reconciler each run every 100 ms, 600 passes a minute, all full.\n")
	} else {
		b.WriteString("\nGate off, the loops count no passes: upstream's populator and reconciler each run every 100 ms, 600 passes a minute, all full.\n")
	}
	if len(sizes) > 1 {
		first := sizes[0]
		b.WriteString("\nGrowth of the idle volume manager CPU from the smallest size (linear growth is the pod ratio):\n\n| pods | pod ratio |")
		for _, c := range configs {
			fmt.Fprintf(&b, " %s growth |", c)
		}
		fmt.Fprintf(&b, "\n|---|---|%s\n", strings.Repeat("---|", len(configs)))
		for _, s := range sizes[1:] {
			fmt.Fprintf(&b, "| %d | %.2fx |", s.Pods, float64(s.Pods)/float64(first.Pods))
			for _, c := range configs {
				if len(s.Result.Modes(c)) == 0 || len(first.Result.Modes(c)) == 0 {
					b.WriteString(" — |")
					continue
				}
				vm := func(r Result) float64 { return bench.Median(pooled(r.Modes(c), vmCPU)) }
				fmt.Fprintf(&b, " %.2fx |", vm(s.Result)/vm(first.Result))
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "\nThe runtime's idle CPU per window (%s), to judge its spread:\n\n", join(configs, " | "))
	for _, s := range sizes {
		var windows []string
		for _, c := range configs {
			if modes := s.Result.Modes(c); len(modes) > 0 {
				windows = append(windows, list(pooled(modes, runtimeCPU)))
			} else {
				windows = append(windows, "—")
			}
		}
		fmt.Fprintf(&b, "- %d pods: %s\n", s.Pods, strings.Join(windows, " | "))
	}
	return b.String()
}

// ScaleChart draws the idle volume manager CPU against the pods, of stock
// (at the sizes that ran it), gate off and gate on, with a dashed line of
// linear growth from each one's smallest size.
func ScaleChart(sizes []Size, file string) error {
	sizes = slices.SortedFunc(slices.Values(sizes), func(a, b Size) int { return cmp.Compare(a.Pods, b.Pods) })
	p := plot.New()
	p.Title.Text = "Real node: idle volume manager CPU against pods (4 volumes each)"
	p.X.Label.Text = "pods"
	p.Y.Label.Text = "volume manager CPU-seconds per minute (pprof)"
	p.Add(plotter.NewGrid())
	for _, c := range Configs {
		var pts plotter.XYs
		for _, size := range sizes {
			if modes := size.Result.Modes(c); len(modes) > 0 {
				pts = append(pts, plotter.XY{X: float64(size.Pods), Y: bench.Median(pooled(modes, vmCPU))})
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.Color, points.Color, line.Width = colors[c], colors[c], vg.Points(1.5)
		p.Add(line, points)
		p.Legend.Add(string(c), line, points)
		l, err := plotter.NewLine(plotter.XYs{pts[0], {X: pts[len(pts)-1].X, Y: pts[0].Y * pts[len(pts)-1].X / pts[0].X}})
		if err != nil {
			return err
		}
		l.Color, l.Dashes = colors[c], []vg.Length{vg.Points(4), vg.Points(4)}
		p.Add(l)
		p.Legend.Add(string(c)+": linear growth", l)
	}
	p.X.Min, p.Y.Min = 0, 0
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.ThumbnailWidth = vg.Points(20)
	return p.Save(8*vg.Inch, 4.5*vg.Inch, file)
}
