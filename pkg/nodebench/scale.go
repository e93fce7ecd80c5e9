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
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"evented-volume-manager/pkg/bench"
	"evented-volume-manager/pkg/node"
)

// Size is one node size of a scale run: its pods and its result, stock (when
// it ran) and gate off against gate on.
type Size struct {
	Pods   int
	Result Result
}

// scaleFigure is one row of the scale table: a figure's value at a size
// in one configuration, NaN where nothing measured it.
type scaleFigure struct {
	name      string
	unit      string
	lowerWins bool
	value     func(m merged) float64
}

// scaleFigures are the rows of the scale table.
func scaleFigures() []scaleFigure {
	ms := func(q float64, of func(m merged) []float64) func(m merged) float64 {
		return func(m merged) float64 { return 1000 * bench.Quantile(of(m), q) }
	}
	passes := func(loop, kind string) func(m merged) float64 {
		return func(m merged) float64 {
			if m.passSeconds == 0 {
				return math.NaN() // stock and gate off: upstream's loops count nothing
			}
			return 60 * m.passes[loop+"/"+kind] / m.passSeconds
		}
	}
	unmounted := func(m merged) []float64 { return m.phases[node.VolumesUnmounted.Key()] }
	return []scaleFigure{
		{"idle volume manager CPU (pprof)", "CPU-s/min", true, func(m merged) float64 { return Median(m.vmPerMin) }},
		{"idle kubelet CPU (median of windows)", "CPU-s/min", true, func(m merged) float64 { return Median(m.kubeletPerMin) }},
		{"idle runtime CPU (median of windows)", "CPU-s/min", true, func(m merged) float64 { return Median(m.runtimePerMin) }},
		{"idle reconciler full passes", "/min", true, passes("reconciler", "full")},
		{"idle reconciler partial passes", "/min", false, passes("reconciler", "partial")},
		{"idle populator full passes", "/min", true, passes("desired_state_of_world_populator", "full")},
		{"idle populator partial passes", "/min", false, passes("desired_state_of_world_populator", "partial")},
		{"single-pod mount wait p50", "ms", true, ms(0.5, func(m merged) []float64 { return m.mount })},
		{"single-pod mount wait p99", "ms", true, ms(0.99, func(m merged) []float64 { return m.mount })},
		{"manifest removed → all volumes unmounted p50", "ms", true, ms(0.5, unmounted)},
		{"manifest removed → all volumes unmounted p99", "ms", true, ms(0.99, unmounted)},
	}
}

// sortSizes orders sizes by pods.
func sortSizes(sizes []Size) []Size {
	sorted := append([]Size(nil), sizes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Pods < sorted[j].Pods })
	return sorted
}

// ScaleMarkdown renders the scale table: every figure at every size,
// stock (when any size ran it; "—" at a size that did not), gate off, gate
// on, stock/on and off/on, then how the idle volume manager CPU grew
// against the pods.
func ScaleMarkdown(sizes []Size) string {
	sizes = sortSizes(sizes)
	stock := false
	for _, s := range sizes {
		stock = stock || s.Result.HasStock()
	}
	var b strings.Builder
	if stock {
		fmt.Fprintf(&b, "### Real node at %s pods × 4 volumes, upstream's kubelet (stock) and the series with the gate off and on\n\n", joinPods(sizes))
	} else {
		fmt.Fprintf(&b, "### Real node at %s pods × 4 volumes, gate off against gate on\n\n", joinPods(sizes))
	}
	for _, s := range sizes {
		m := s.Result.On[0]
		per := "per gate value"
		if s.Result.HasStock() {
			per = "per configuration (stock, gate off, gate on)"
		}
		fmt.Fprintf(&b, "- %d pods: %d round(s) %s on %s, %d idle window(s) of %.0f s and a %.0f s profile per round, %d single pods per round.\n",
			s.Pods, len(s.Result.On), per, m.RuntimeLabel(), len(m.KubeletCPU), m.WindowSeconds, m.ProfileSeconds, len(m.Mount))
	}
	b.WriteString("\n| figure |")
	for _, s := range sizes {
		if stock {
			fmt.Fprintf(&b, " %d stock | %d off | %d on | stock/on | off/on |", s.Pods, s.Pods, s.Pods)
		} else {
			fmt.Fprintf(&b, " %d off | %d on | off/on |", s.Pods, s.Pods)
		}
	}
	b.WriteString("\n|---|")
	for range sizes {
		if stock {
			b.WriteString("---|---|---|---|---|")
		} else {
			b.WriteString("---|---|---|")
		}
	}
	b.WriteString("\n")
	for _, f := range scaleFigures() {
		name := f.name
		if strings.Contains(name, "runtime") {
			name = strings.Replace(name, "runtime", sizes[0].Result.On[0].RuntimeName(), 1)
		}
		fmt.Fprintf(&b, "| %s (%s) |", name, f.unit)
		for _, s := range sizes {
			off, on := f.value(merge(s.Result.Off)), f.value(merge(s.Result.On))
			if stock {
				stockCell, stockRatio := "—", "—"
				if s.Result.HasStock() {
					st := f.value(merge(s.Result.Stock))
					stockCell, stockRatio = scaleCell(st), ratioCell(st, on)
				}
				fmt.Fprintf(&b, " %s | %s | %s | %s | %s |", stockCell, scaleCell(off), scaleCell(on), stockRatio, ratioCell(off, on))
			} else {
				fmt.Fprintf(&b, " %s | %s | %s |", scaleCell(off), scaleCell(on), ratioCell(off, on))
			}
		}
		b.WriteString("\n")
	}
	if stock {
		b.WriteString("\nStock and gate off, the loops count no passes: upstream's populator and reconciler each run every 100 ms, 600 passes a minute, all full.\n")
	} else {
		b.WriteString("\nGate off, the loops count no passes: upstream's populator and reconciler each run every 100 ms, 600 passes a minute, all full.\n")
	}
	if len(sizes) > 1 {
		first := sizes[0]
		growth := func(c Config, s Size) string {
			if len(s.Result.Modes(c)) == 0 || len(first.Result.Modes(c)) == 0 {
				return "—"
			}
			vm := func(r Result) float64 { return Median(merge(r.Modes(c)).vmPerMin) }
			return fmt.Sprintf("%.2fx", vm(s.Result)/vm(first.Result))
		}
		b.WriteString("\nGrowth of the idle volume manager CPU from the smallest size (linear growth is the pod ratio):\n\n")
		if stock {
			b.WriteString("| pods | pod ratio | stock growth | gate off growth | gate on growth |\n|---|---|---|---|---|\n")
		} else {
			b.WriteString("| pods | pod ratio | gate off growth | gate on growth |\n|---|---|---|---|\n")
		}
		for _, s := range sizes[1:] {
			fmt.Fprintf(&b, "| %d | %.2fx |", s.Pods, float64(s.Pods)/float64(first.Pods))
			if stock {
				fmt.Fprintf(&b, " %s |", growth(Stock, s))
			}
			fmt.Fprintf(&b, " %s | %s |\n", growth(GateOff, s), growth(GateOn, s))
		}
	}
	if stock {
		b.WriteString("\nThe runtime's idle CPU per window (stock | gate off | gate on), to judge its spread:\n\n")
	} else {
		b.WriteString("\nThe runtime's idle CPU per window (gate off | gate on), to judge its spread:\n\n")
	}
	for _, s := range sizes {
		var windows []string
		if stock {
			windows = append(windows, "—")
			if s.Result.HasStock() {
				windows[0] = list(merge(s.Result.Stock).runtimePerMin)
			}
		}
		windows = append(windows, list(merge(s.Result.Off).runtimePerMin), list(merge(s.Result.On).runtimePerMin))
		fmt.Fprintf(&b, "- %d pods: %s\n", s.Pods, strings.Join(windows, " | "))
	}
	return b.String()
}

func joinPods(sizes []Size) string {
	var pods []string
	for _, s := range sizes {
		pods = append(pods, fmt.Sprint(s.Pods))
	}
	return strings.Join(pods, ", ")
}

func scaleCell(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strings.TrimSpace(cell(v, ""))
}

func ratioCell(off, on float64) string {
	if math.IsNaN(off) || math.IsNaN(on) || on == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1fx", off/on)
}

// ScaleChart draws the idle volume manager CPU against the pods, of stock
// (at the sizes that ran it), gate off and gate on, with a dashed line of
// linear growth from each one's smallest size.
func ScaleChart(sizes []Size, file string) error {
	sizes = sortSizes(sizes)
	p := plot.New()
	p.Title.Text = "Real node: idle volume manager CPU against pods (4 volumes each)"
	p.X.Label.Text = "pods"
	p.Y.Label.Text = "volume manager CPU-seconds per minute (pprof)"
	p.Add(plotter.NewGrid())
	cols := map[Config]color.Color{Stock: stockColor, GateOff: bench.OffColor, GateOn: bench.OnColor}
	for _, c := range Configs {
		var pts plotter.XYs
		for _, size := range sizes {
			if modes := size.Result.Modes(c); len(modes) > 0 {
				pts = append(pts, plotter.XY{X: float64(size.Pods), Y: Median(merge(modes).vmPerMin)})
			}
		}
		if len(pts) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.Color, points.Color = cols[c], cols[c]
		line.Width = vg.Points(1.5)
		p.Add(line, points)
		p.Legend.Add(string(c), line, points)
		linear := plotter.XYs{pts[0], {X: pts[len(pts)-1].X, Y: pts[0].Y * pts[len(pts)-1].X / pts[0].X}}
		l, err := plotter.NewLine(linear)
		if err != nil {
			return err
		}
		l.Color = cols[c]
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
		p.Add(l)
		p.Legend.Add(string(c)+": linear growth", l)
	}
	p.X.Min, p.Y.Min = 0, 0
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.ThumbnailWidth = vg.Points(20)
	return p.Save(8*vg.Inch, 4.5*vg.Inch, file)
}
