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

// Package bench holds what the benchmarks' reports share.
package bench

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Quantile returns the q-quantile (0..1) of xs by nearest rank, or NaN.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	rank := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(rank, len(s)-1))]
}

// Median is the middle value of xs, the mean of the two middle ones, or NaN.
func Median(xs []float64) float64 {
	if len(xs)%2 == 1 || len(xs) == 0 {
		return Quantile(xs, 0.5)
	}
	s := slices.Sorted(slices.Values(xs))
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Ratio is off/on where lower is better, else on/off: "9x" is 9 times better on.
func Ratio(off, on float64, lowerWins bool) string {
	if on == 0 || math.IsNaN(on) || math.IsNaN(off) {
		return "n/a"
	}
	if !lowerWins {
		return fmt.Sprintf("%.1fx", on/off)
	}
	return fmt.Sprintf("%.1fx", off/on)
}

// Number formats v with fewer decimals the larger it is.
func Number(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 0.1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// Cell is v in unit, or n/a.
func Cell(v float64, unit string) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return Number(v) + " " + unit
}

// The charts' colors: gate off, on, upstream's, all gates, node-status gate alone.
var (
	OffColor        = color.RGBA{R: 200, G: 60, B: 40, A: 255}
	OnColor         = color.RGBA{R: 30, G: 110, B: 200, A: 255}
	StockColor      = color.RGBA{R: 70, G: 70, B: 70, A: 255}
	AllGatesColor   = color.RGBA{R: 40, G: 150, B: 70, A: 255}
	NodeStatusColor = color.RGBA{R: 220, G: 140, B: 20, A: 255}
)

// Series is one line of a chart; dashed lines are drawn over solid ones.
type Series struct {
	Name    string
	Seconds []float64
	Color   color.Color
	Dashes  []vg.Length
}

// CDFChart draws the CDFs of the series' latencies into file (PNG).
func CDFChart(file, title, xLabel string, series ...Series) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = "fraction of pods"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	var slowest float64
	var dashed []plot.Plotter
	for _, s := range series {
		if len(s.Seconds) == 0 {
			continue
		}
		pts := make(plotter.XYs, len(s.Seconds))
		for i, v := range slices.Sorted(slices.Values(s.Seconds)) {
			pts[i] = plotter.XY{X: max(1000*v, 0.01), Y: float64(i+1) / float64(len(pts))}
			slowest = max(slowest, pts[i].X)
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.Color, line.Width, line.Dashes = s.Color, vg.Points(1.5), s.Dashes
		if s.Dashes != nil {
			dashed = append(dashed, line)
		} else {
			p.Add(line)
		}
		p.Legend.Add(s.Name, line)
	}
	if slowest == 0 {
		return fmt.Errorf("%s: no latencies to draw", file) // a log scale needs some
	}
	p.Add(dashed...)
	p.X.Max = 2 * slowest // room right of the slowest pod
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.ThumbnailWidth = vg.Points(30)
	return p.Save(8*vg.Inch, 4.5*vg.Inch, file)
}
