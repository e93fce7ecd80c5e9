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

package bench

import (
	"fmt"
	"image/color"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// OffColor and OnColor draw the gate-off and gate-on series in every chart.
var (
	OffColor = color.RGBA{R: 200, G: 60, B: 40, A: 255}
	OnColor  = color.RGBA{R: 30, G: 110, B: 200, A: 255}
)

// Charts writes, for one run, the loops' iterations per second over the idle
// window and the mount-ready latency CDF, gate off against gate on, as PNGs
// in dir. It returns the files written.
func Charts(r Run, dir, prefix string) ([]string, error) {
	var files []string
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Idle volume manager: iterations per second (%d pods × %d volumes)", r.Off.Pods, r.Off.Volumes)
	p.X.Label.Text = "seconds into the idle window"
	p.Y.Label.Text = "iterations per second"
	p.Add(plotter.NewGrid())
	for _, s := range []struct {
		name  string
		data  []float64
		color color.Color
		dash  bool
	}{
		{"populator, gate off", r.Off.PopulatorPerSecond, OffColor, false},
		{"reconciler, gate off", r.Off.ReconcilerPerSecond, OffColor, true},
		{"populator, gate on", r.On.PopulatorPerSecond, OnColor, false},
		{"reconciler, gate on", r.On.ReconcilerPerSecond, OnColor, true},
	} {
		pts := make(plotter.XYs, len(s.data))
		for i, v := range s.data {
			pts[i] = plotter.XY{X: float64(i + 1), Y: v}
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		line.Color = s.color
		line.Width = vg.Points(1.5)
		if s.dash {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(line)
		p.Legend.Add(s.name, line)
	}
	p.Y.Min = 0
	p.Y.Max = 14 // room for the legend above upstream's 10 per second
	p.Legend.Top = true
	f := filepath.Join(dir, prefix+"-idle-iterations.png")
	if err := p.Save(8*vg.Inch, 4.5*vg.Inch, f); err != nil {
		return nil, err
	}
	files = append(files, f)

	p = plot.New()
	p.Title.Text = fmt.Sprintf("Mount-ready latency CDF (%d pods × %d volumes)", r.Off.Pods, r.Off.Volumes)
	p.X.Label.Text = "milliseconds from pod added to WaitForAttachAndMount returning (log scale)"
	p.Y.Label.Text = "fraction of pods"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	for _, s := range []struct {
		name  string
		data  []float64
		color color.Color
		dash  bool
	}{
		{fmt.Sprintf("singles %gs apart, gate off", r.Off.GapSeconds), r.Off.MountSingle, OffColor, false},
		{fmt.Sprintf("singles %gs apart, gate off", r.Off.SlowSeconds), r.Off.MountSlow, OffColor, true},
		{fmt.Sprintf("singles %gs apart, gate on", r.On.GapSeconds), r.On.MountSingle, OnColor, false},
		{fmt.Sprintf("singles %gs apart, gate on", r.On.SlowSeconds), r.On.MountSlow, OnColor, true},
	} {
		if len(s.data) == 0 {
			continue
		}
		line, err := plotter.NewLine(CDF(s.data))
		if err != nil {
			return nil, err
		}
		line.Color = s.color
		line.Width = vg.Points(1.5)
		if s.dash {
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(line)
		p.Legend.Add(s.name, line)
	}
	// Room on the right of the slowest pod for the legend.
	var slowest float64
	for _, xs := range [][]float64{r.Off.MountSingle, r.Off.MountSlow, r.On.MountSingle, r.On.MountSlow} {
		for _, x := range xs {
			slowest = max(slowest, 1000*x)
		}
	}
	p.X.Max = 8 * slowest
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top = true
	p.Legend.Left = false
	f = filepath.Join(dir, prefix+"-mount-latency-cdf.png")
	if err := p.Save(8*vg.Inch, 4.5*vg.Inch, f); err != nil {
		return nil, err
	}
	return append(files, f), nil
}

// CDF returns the empirical CDF of latencies in seconds, in milliseconds.
func CDF(xs []float64) plotter.XYs {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	pts := make(plotter.XYs, len(s))
	for i, v := range s {
		pts[i] = plotter.XY{X: max(1000*v, 0.01), Y: float64(i+1) / float64(len(s))}
	}
	return pts
}
