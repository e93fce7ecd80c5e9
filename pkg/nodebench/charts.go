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
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"evented-volume-manager/pkg/bench"
)

// colors draw each configuration in every chart.
var colors = map[Config]color.Color{Stock: bench.StockColor, GateOff: bench.OffColor, GateOn: bench.OnColor}

// dashes are a configuration's line dashes: stock is drawn dashed over the
// others, since it often lies on gate off.
func dashes(c Config) []vg.Length {
	if c == Stock {
		return []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return nil
}

// Charts writes the report's charts as PNGs into dir and returns their
// paths: the single pods' mount and unmount CDFs (on a cluster node by kind
// of pod, created → mounted and deleted → unmounted) and the idle kubelet
// CPU per window. The tables have the rest.
func Charts(r Result, dir string) ([]string, error) {
	var mount, unmount []bench.Series
	where := "Real node"
	for _, c := range r.configs() {
		modes := r.Modes(c)
		if !r.Cluster {
			mount = append(mount, bench.Series{Name: string(c), Seconds: pooled(modes, func(m Mode) []float64 { return m.Mount }), Color: colors[c], Dashes: dashes(c)})
			unmount = append(unmount, bench.Series{Name: string(c), Seconds: pooled(modes, func(m Mode) []float64 { return m.UnmountEndToEnd }), Color: colors[c], Dashes: dashes(c)})
			continue
		}
		where = "Cluster node"
		for i, kind := range ClusterPodKinds {
			if t := pooledKind(modes, kind.Key); t != nil {
				dash := [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}}[i%3]
				mount = append(mount, bench.Series{Name: kind.Key + " " + string(c), Seconds: t.MountEndToEnd, Color: colors[c], Dashes: dash})
				unmount = append(unmount, bench.Series{Name: kind.Key + " " + string(c), Seconds: t.UnmountEndToEnd, Color: colors[c], Dashes: dash})
			}
		}
	}
	files := []string{filepath.Join(dir, "mount-latency-cdf.png"), filepath.Join(dir, "unmount-latency-cdf.png"), filepath.Join(dir, "idle-kubelet-cpu.png")}
	mountTitle, unmountTitle := "volume-ready wait of single pods (kubelet log)", "manifest removed → all volumes unmounted (kubelet log)"
	if r.Cluster {
		mountTitle, unmountTitle = "pod created through the API → all volumes mounted", "pod deleted through the API → all volumes unmounted"
	}
	if err := bench.CDFChart(files[0], where+": "+mountTitle, "milliseconds (log scale)", mount...); err != nil {
		return nil, err
	}
	if err := bench.CDFChart(files[1], where+": "+unmountTitle, "milliseconds (log scale)", unmount...); err != nil {
		return nil, err
	}

	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: idle kubelet CPU per window (%d pods × %d volumes)", where, r.On[0].Pods, r.On[0].Volumes)
	p.X.Label.Text = "idle window"
	p.Y.Label.Text = "kubelet CPU-seconds per minute"
	p.Add(plotter.NewGrid())
	var dashed []plot.Plotter
	for _, c := range r.configs() {
		cpu := pooled(r.Modes(c), kubeletCPU)
		pts := make(plotter.XYs, len(cpu))
		for i, v := range cpu {
			pts[i] = plotter.XY{X: float64(i + 1), Y: v}
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color, line.Dashes = colors[c], colors[c], dashes(c)
		if c == Stock {
			dashed = append(dashed, line, points)
		} else {
			p.Add(line, points)
		}
		p.Legend.Add(string(c), line, points)
	}
	p.Add(dashed...)
	p.Y.Min = 0
	p.Legend.Top = true
	return files, p.Save(8*vg.Inch, 4.5*vg.Inch, files[2])
}
