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
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"evented-volume-manager/pkg/bench"
)

// Result is a whole benchmark run: every round of each gate value.
type Result struct {
	Off, On []Mode
}

// Load reads a result written by Save.
func Load(path string) (Result, error) {
	var r Result
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if len(r.Off) == 0 || len(r.On) == 0 {
		return r, fmt.Errorf("%s: want results for the gate off and on", path)
	}
	return r, nil
}

// Save writes r as JSON.
func (r Result) Save(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// merged pools a gate value's rounds.
type merged struct {
	kubeletPerMin, containerdPerMin  []float64
	vmShare, vmPerMin, profilePerMin []float64
	iterations                       map[string]float64
	idleSeconds                      float64
	burst, mount, unmount            []float64
	mountE2E, unmountE2E             []float64
	startup                          []float64
}

func merge(modes []Mode) merged {
	m := merged{iterations: map[string]float64{}}
	for _, mode := range modes {
		for _, c := range mode.KubeletCPU {
			m.kubeletPerMin = append(m.kubeletPerMin, 60*c/mode.WindowSeconds)
		}
		for _, c := range mode.ContainerdCPU {
			m.containerdPerMin = append(m.containerdPerMin, 60*c/mode.WindowSeconds)
		}
		if mode.ProfileCPUSeconds > 0 {
			m.vmShare = append(m.vmShare, mode.VolumeManagerCPUSeconds/mode.ProfileCPUSeconds)
			m.vmPerMin = append(m.vmPerMin, 60*mode.VolumeManagerCPUSeconds/mode.ProfileSeconds)
			m.profilePerMin = append(m.profilePerMin, 60*mode.ProfileCPUSeconds/mode.ProfileSeconds)
		}
		for loop, v := range mode.Iterations {
			m.iterations[loop] += v
		}
		if mode.Iterations != nil {
			m.idleSeconds += mode.WindowSeconds * float64(len(mode.KubeletCPU))
		}
		m.burst = append(m.burst, mode.BurstMount...)
		m.mount = append(m.mount, mode.Mount...)
		m.unmount = append(m.unmount, mode.Unmount...)
		m.mountE2E = append(m.mountE2E, mode.MountEndToEnd...)
		m.unmountE2E = append(m.unmountE2E, mode.UnmountEndToEnd...)
		m.startup = append(m.startup, mode.StartupSeconds)
	}
	return m
}

// Rows are the comparison table's lines.
func Rows(r Result) []bench.Row {
	off, on := merge(r.Off), merge(r.On)
	iterations := func(m merged, loop string) float64 {
		if m.idleSeconds == 0 {
			return math.NaN() // no counter with the gate off
		}
		var n float64
		for l, v := range m.iterations {
			if loop == "" || l == loop {
				n += v
			}
		}
		return 60 * n / m.idleSeconds
	}
	ms := func(xs []float64, q float64) float64 { return 1000 * bench.Quantile(xs, q) }
	rows := []bench.Row{
		{Figure: "idle kubelet CPU (median of windows)", Off: Median(off.kubeletPerMin), On: Median(on.kubeletPerMin), Unit: "CPU-s/min", LowerWins: true},
		{Figure: "idle containerd CPU (median of windows)", Off: Median(off.containerdPerMin), On: Median(on.containerdPerMin), Unit: "CPU-s/min", LowerWins: true},
		{Figure: "volume manager share of kubelet CPU (pprof)", Off: 100 * Median(off.vmShare), On: 100 * Median(on.vmShare), Unit: "%", LowerWins: true},
		{Figure: "volume manager CPU (pprof)", Off: Median(off.vmPerMin), On: Median(on.vmPerMin), Unit: "CPU-s/min", LowerWins: true},
		{Figure: "idle populator iterations", Off: iterations(off, "desired_state_of_world_populator"), On: iterations(on, "desired_state_of_world_populator"), Unit: "/min", LowerWins: true},
		{Figure: "idle reconciler iterations", Off: iterations(off, "reconciler"), On: iterations(on, "reconciler"), Unit: "/min", LowerWins: true},
	}
	for _, s := range []struct {
		name    string
		off, on []float64
	}{
		{fmt.Sprintf("volume-ready wait, single pods %gs apart", r.On[0].GapSeconds), off.mount, on.mount},
		{fmt.Sprintf("manifest written → volumes ready, single pods %gs apart", r.On[0].GapSeconds), off.mountE2E, on.mountE2E},
		{fmt.Sprintf("unmount wait, single pods %gs apart", r.On[0].GapSeconds), off.unmount, on.unmount},
		{fmt.Sprintf("manifest removed → volumes unmounted, single pods %gs apart", r.On[0].GapSeconds), off.unmountE2E, on.unmountE2E},
		{fmt.Sprintf("volume-ready wait, %d pods at once", r.On[0].Pods), off.burst, on.burst},
	} {
		for _, q := range []struct {
			name string
			q    float64
		}{{"p50", 0.5}, {"p99", 0.99}} {
			rows = append(rows, bench.Row{Figure: fmt.Sprintf("%s %s", s.name, q.name), Off: ms(s.off, q.q), On: ms(s.on, q.q), Unit: "ms", LowerWins: true})
		}
	}
	rows = append(rows, bench.Row{Figure: fmt.Sprintf("all %d pods running, from manifests written", r.On[0].Pods), Off: Median(off.startup), On: Median(on.startup), Unit: "s", LowerWins: true})
	return rows
}

// Markdown renders the comparison: gate off, gate on, off/on.
func Markdown(r Result) string {
	var b strings.Builder
	m := r.On[0]
	fmt.Fprintf(&b, "### Real node: %d static pods × %d volumes, containerd and runc, standalone kubelet at --v=3\n\n", m.Pods, m.Volumes)
	fmt.Fprintf(&b, "%d round(s) per gate value, gate off first; %d idle window(s) of %.0f s and a %.0f s profile per round; %d single pods (%d samples per gate value).\n\n",
		len(r.On), len(m.KubeletCPU), m.WindowSeconds, m.ProfileSeconds, len(m.Mount), len(merge(r.On).mount))
	b.WriteString("| figure | gate off | gate on | off/on |\n|---|---|---|---|\n")
	for _, row := range Rows(r) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", row.Figure, cell(row.Off, row.Unit), cell(row.On, row.Unit), row.Ratio())
	}
	b.WriteString("\nEach window, kubelet CPU-s/min (gate off | gate on): ")
	off, on := merge(r.Off), merge(r.On)
	fmt.Fprintf(&b, "%s | %s\n", list(off.kubeletPerMin), list(on.kubeletPerMin))
	b.WriteString("\nThe gate-off kubelet is upstream's code, which counts no loop iterations; upstream's loops run every 100 ms.\n")
	if top := r.On[len(r.On)-1].VolumeManagerTop; len(top) > 0 {
		b.WriteString("\nGate on, volume manager functions with the most CPU (last round): ")
		for i, f := range top {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %.3fs", strings.TrimPrefix(f.Function, "k8s.io/kubernetes/pkg/kubelet/volumemanager/"), f.CPU.Seconds())
		}
		b.WriteString("\n")
	}
	return b.String()
}

func cell(v float64, unit string) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, unit)
	case v >= 10:
		return fmt.Sprintf("%.1f %s", v, unit)
	case v >= 0.1:
		return fmt.Sprintf("%.2f %s", v, unit)
	default:
		return fmt.Sprintf("%.3f %s", v, unit)
	}
}

func list(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(s, ", ")
}

// Charts writes the latency CDFs and the idle CPU per window as PNGs in dir
// and returns their paths.
func Charts(r Result, dir string) ([]string, error) {
	off, on := merge(r.Off), merge(r.On)
	var files []string
	for _, c := range []struct {
		file, title, x string
		off, on        []float64
	}{
		{"mount-latency-cdf.png", "Real node: volume-ready wait of single pods (kubelet log)", "milliseconds, Waiting for volumes → All volumes attached and mounted (log scale)", off.mount, on.mount},
		{"unmount-latency-cdf.png", "Real node: manifest removed → all volumes unmounted (kubelet log)", "milliseconds from the manifest's removal to All volumes are unmounted (log scale)", off.unmountE2E, on.unmountE2E},
	} {
		p := plot.New()
		p.Title.Text = c.title
		p.X.Label.Text = c.x
		p.Y.Label.Text = "fraction of pods"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Add(plotter.NewGrid())
		for _, s := range []struct {
			name string
			data []float64
			col  color.Color
		}{{"gate off", c.off, bench.OffColor}, {"gate on", c.on, bench.OnColor}} {
			if len(s.data) == 0 {
				continue
			}
			line, err := plotter.NewLine(bench.CDF(s.data))
			if err != nil {
				return nil, err
			}
			line.Color = s.col
			line.Width = vg.Points(1.5)
			p.Add(line)
			p.Legend.Add(s.name, line)
		}
		// Room right of the slowest pod, so that its line is not on the edge.
		var slowest float64
		for _, x := range append(append([]float64(nil), c.off...), c.on...) {
			slowest = max(slowest, 1000*x)
		}
		if slowest > 0 {
			p.X.Max = 2 * slowest
		}
		p.Y.Min, p.Y.Max = 0, 1
		p.Legend.Top = true
		p.Legend.Left = true
		f := filepath.Join(dir, c.file)
		if err := p.Save(8*vg.Inch, 4.5*vg.Inch, f); err != nil {
			return nil, err
		}
		files = append(files, f)
	}

	p := plot.New()
	p.Title.Text = fmt.Sprintf("Real node: idle kubelet CPU per window (%d pods × %d volumes)", r.On[0].Pods, r.On[0].Volumes)
	p.X.Label.Text = "idle window"
	p.Y.Label.Text = "kubelet CPU-seconds per minute"
	p.Add(plotter.NewGrid())
	for _, s := range []struct {
		name string
		data []float64
		col  color.Color
	}{{"gate off", off.kubeletPerMin, bench.OffColor}, {"gate on", on.kubeletPerMin, bench.OnColor}} {
		pts := make(plotter.XYs, len(s.data))
		for i, v := range s.data {
			pts[i] = plotter.XY{X: float64(i + 1), Y: v}
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color = s.col, s.col
		p.Add(line, points)
		p.Legend.Add(s.name, line, points)
	}
	p.Y.Min = 0
	p.Legend.Top = true
	f := filepath.Join(dir, "idle-kubelet-cpu.png")
	if err := p.Save(8*vg.Inch, 4.5*vg.Inch, f); err != nil {
		return nil, err
	}
	return append(files, f), nil
}
