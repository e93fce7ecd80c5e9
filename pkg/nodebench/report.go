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
	"gonum.org/v1/plot/vg/draw"

	"evented-volume-manager/pkg/bench"
	"evented-volume-manager/pkg/node"
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
	for _, modes := range [][]Mode{r.Off, r.On} {
		for i := range modes {
			modes[i].migrate()
		}
	}
	return r, nil
}

// migrate moves the fields of results from before CRI-O to their names now.
func (m *Mode) migrate() {
	if len(m.RuntimeCPU) == 0 {
		m.RuntimeCPU, m.LegacyContainerdCPU = m.LegacyContainerdCPU, nil
	}
	for _, c := range []*ChurnCPU{m.DeleteCPU, m.AddCPU} {
		if c != nil && c.Runtime == 0 {
			c.Runtime, c.LegacyContainerd = c.LegacyContainerd, 0
		}
	}
}

// RuntimeName is the short name of the mode's container runtime: containerd
// or CRI-O.
func (m Mode) RuntimeName() string {
	if strings.HasPrefix(m.Runtime, "CRI-O") {
		return "CRI-O"
	}
	return "containerd"
}

// RuntimeLabel is the mode's container runtime as the node named it.
func (m Mode) RuntimeLabel() string {
	if m.Runtime == "" {
		return "containerd"
	}
	return m.Runtime
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
	kubeletPerMin, runtimePerMin     []float64
	vmShare, vmPerMin, profilePerMin []float64
	iterations                       map[string]float64
	idleSeconds                      float64
	passes                           map[string]float64
	passSeconds                      float64
	burst, mount, unmount            []float64
	mountE2E, unmountE2E             []float64
	startup                          []float64
	// phases are the deletion phases by key; terminatedToTearDown and
	// terminatedToSync the per-pod differences.
	phases                                 map[string][]float64
	terminatedToTearDown, terminatedToSync []float64
	// CPU-s/min over each round's single-pod deletions and additions.
	deleteKubelet, deleteRuntime []float64
	addKubelet, addRuntime       []float64
}

func merge(modes []Mode) merged {
	m := merged{iterations: map[string]float64{}, passes: map[string]float64{}, phases: map[string][]float64{}}
	// perMin is one process's CPU-s/min over a stretch of churn, if the
	// mode has it.
	perMin := func(c *ChurnCPU, of func(ChurnCPU) float64) []float64 {
		if c == nil || c.Seconds <= 0 {
			return nil
		}
		return []float64{60 * of(*c) / c.Seconds}
	}
	for _, mode := range modes {
		for k, v := range mode.DeletionPhases {
			m.phases[k] = append(m.phases[k], v...)
		}
		m.terminatedToTearDown = append(m.terminatedToTearDown, mode.TerminatedToTearDown...)
		m.terminatedToSync = append(m.terminatedToSync, mode.TerminatedToSyncTerminated...)
		m.deleteKubelet = append(m.deleteKubelet, perMin(mode.DeleteCPU, func(c ChurnCPU) float64 { return c.Kubelet })...)
		m.deleteRuntime = append(m.deleteRuntime, perMin(mode.DeleteCPU, func(c ChurnCPU) float64 { return c.Runtime })...)
		m.addKubelet = append(m.addKubelet, perMin(mode.AddCPU, func(c ChurnCPU) float64 { return c.Kubelet })...)
		m.addRuntime = append(m.addRuntime, perMin(mode.AddCPU, func(c ChurnCPU) float64 { return c.Runtime })...)
		for _, c := range mode.KubeletCPU {
			m.kubeletPerMin = append(m.kubeletPerMin, 60*c/mode.WindowSeconds)
		}
		for _, c := range mode.RuntimeCPU {
			m.runtimePerMin = append(m.runtimePerMin, 60*c/mode.WindowSeconds)
		}
		if mode.ProfileCPUSeconds > 0 {
			m.vmShare = append(m.vmShare, mode.VolumeManagerCPUSeconds/mode.ProfileCPUSeconds)
			m.vmPerMin = append(m.vmPerMin, 60*mode.VolumeManagerCPUSeconds/mode.ProfileSeconds)
			m.profilePerMin = append(m.profilePerMin, 60*mode.ProfileCPUSeconds/mode.ProfileSeconds)
		}
		for loop, v := range mode.Iterations {
			m.iterations[loop] += v
		}
		for key, v := range mode.Passes {
			m.passes[key] += v
		}
		if mode.Passes != nil {
			m.passSeconds += mode.WindowSeconds * float64(len(mode.KubeletCPU))
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
	rt := r.On[0].RuntimeName()
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
		{Figure: "idle " + rt + " CPU (median of windows)", Off: Median(off.runtimePerMin), On: Median(on.runtimePerMin), Unit: "CPU-s/min", LowerWins: true},
		{Figure: "volume manager share of kubelet CPU (pprof)", Off: 100 * Median(off.vmShare), On: 100 * Median(on.vmShare), Unit: "%", LowerWins: true},
		{Figure: "volume manager CPU (pprof)", Off: Median(off.vmPerMin), On: Median(on.vmPerMin), Unit: "CPU-s/min", LowerWins: true},
		{Figure: "idle populator iterations", Off: iterations(off, "desired_state_of_world_populator"), On: iterations(on, "desired_state_of_world_populator"), Unit: "/min", LowerWins: true},
		{Figure: "idle reconciler iterations", Off: iterations(off, "reconciler"), On: iterations(on, "reconciler"), Unit: "/min", LowerWins: true},
	}
	passes := func(m merged, key string) float64 {
		if m.passSeconds == 0 {
			return math.NaN() // no counter with the gate off
		}
		return 60 * m.passes[key] / m.passSeconds
	}
	for _, loop := range []struct{ name, label string }{{"populator", "desired_state_of_world_populator"}, {"reconciler", "reconciler"}} {
		for _, kind := range []struct{ name, label string }{{"full passes (walk all state)", "full"}, {"partial passes (changed pods)", "partial"}, {"skipped passes", "skipped"}} {
			key := loop.label + "/" + kind.label
			if math.IsNaN(passes(on, key)) {
				continue // results from before the passes metric
			}
			rows = append(rows, bench.Row{Figure: fmt.Sprintf("idle %s %s", loop.name, kind.name), Off: passes(off, key), On: passes(on, key), Unit: "/min", LowerWins: kind.label == "full"})
		}
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
	for _, c := range []struct {
		name    string
		off, on []float64
	}{
		{"kubelet CPU while single pods are deleted", off.deleteKubelet, on.deleteKubelet},
		{rt + " CPU while single pods are deleted", off.deleteRuntime, on.deleteRuntime},
		{"kubelet CPU while single pods are added", off.addKubelet, on.addKubelet},
		{rt + " CPU while single pods are added", off.addRuntime, on.addRuntime},
	} {
		if len(c.off) == 0 && len(c.on) == 0 {
			continue // results from before churn CPU was measured
		}
		rows = append(rows, bench.Row{Figure: fmt.Sprintf("%s, %gs apart (median of rounds)", c.name, r.On[0].GapSeconds),
			Off: Median(c.off), On: Median(c.on), Unit: "CPU-s/min", LowerWins: true})
	}
	return rows
}

// PhaseRow is a line of the single-pod deletion table: a figure's p50 and
// p99 in milliseconds, and how many pods it has, with the gate off and on.
type PhaseRow struct {
	Figure          string
	OffP50, OffP99  float64
	OnP50, OnP99    float64
	OffPods, OnPods int
}

// PhaseRows are the single-pod deletion table's lines: the time from a
// pod's manifest removed to each phase's kubelet log line, phase by phase,
// then the per-pod time from termination complete to the last TearDown and
// to SyncTerminatedPod enter. It is empty for results without phases.
func PhaseRows(r Result) []PhaseRow {
	off, on := merge(r.Off), merge(r.On)
	if len(off.phases) == 0 && len(on.phases) == 0 {
		return nil
	}
	ms := func(xs []float64, q float64) float64 { return 1000 * bench.Quantile(xs, q) }
	row := func(figure string, off, on []float64) PhaseRow {
		return PhaseRow{
			Figure: figure,
			OffP50: ms(off, 0.5), OffP99: ms(off, 0.99), OnP50: ms(on, 0.5), OnP99: ms(on, 0.99),
			OffPods: len(off), OnPods: len(on),
		}
	}
	var rows []PhaseRow
	for _, p := range node.DeletionPhases() {
		rows = append(rows, row(fmt.Sprintf("%s (`%s`)", p, phaseMessage(p)), off.phases[p.Key()], on.phases[p.Key()]))
	}
	return append(rows,
		row(fmt.Sprintf("%s → %s, per pod", node.TerminationComplete, node.TearDownDone), off.terminatedToTearDown, on.terminatedToTearDown),
		row(fmt.Sprintf("%s → %s, per pod", node.TerminationComplete, node.SyncTerminatedEnter), off.terminatedToSync, on.terminatedToSync),
	)
}

// phaseMessage is a phase's log message, with an ellipsis where the
// kubelet's message goes on.
func phaseMessage(p node.DeletionPhase) string {
	if msg := p.Message(); strings.HasSuffix(msg, " ") {
		return strings.TrimSpace(msg) + " …"
	}
	return p.Message()
}

// Markdown renders the comparison: gate off, gate on, off/on.
func Markdown(r Result) string {
	var b strings.Builder
	m := r.On[0]
	verbosity := "--v=3"
	if m.ChurnVerbosity > 0 {
		verbosity = fmt.Sprintf("--v=3 (--v=%d while single pods are deleted and added)", m.ChurnVerbosity)
	}
	fmt.Fprintf(&b, "### Real node: %d static pods × %d volumes, %s and runc, standalone kubelet at %s\n\n", m.Pods, m.Volumes, m.RuntimeLabel(), verbosity)
	fmt.Fprintf(&b, "%d round(s) per gate value, gate off first in odd rounds and on first in even ones; %d idle window(s) of %.0f s and a %.0f s profile per round; %d single pods (%d samples per gate value).\n\n",
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
	if rows := PhaseRows(r); len(rows) > 0 {
		fmt.Fprintf(&b, "\n#### Single-pod deletion, phase by phase (%gs apart, kubelet at --v=%d)\n\n", m.GapSeconds, m.ChurnVerbosity)
		b.WriteString("Time from a pod's manifest removed to the kubelet's log line of each phase, all rounds pooled; a pod whose log lacks a line is left out of that row. " +
			"The last two rows are differences within each pod.\n\n")
		b.WriteString("| from manifest removed to | gate off p50 | gate off p99 | gate on p50 | gate on p99 | pods off / on |\n|---|---|---|---|---|---|\n")
		for _, row := range rows {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d / %d |\n", row.Figure,
				cell(row.OffP50, "ms"), cell(row.OffP99, "ms"), cell(row.OnP50, "ms"), cell(row.OnP99, "ms"), row.OffPods, row.OnPods)
		}
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

// Charts writes the latency CDFs, the idle CPU per window and, for results
// that have them, the single-pod deletion phases as PNGs in dir and returns
// their paths.
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
	files = append(files, f)

	if len(off.phases) == 0 && len(on.phases) == 0 {
		return files, nil // results from before the phases were timed
	}
	f = filepath.Join(dir, "deletion-phases.png")
	if err := deletionChart(r, off, on, f); err != nil {
		return nil, err
	}
	return append(files, f), nil
}

// deletionChart draws, for each deletion phase, the p50 and p99 time from
// the manifest removed to the phase's log line, gate off against gate on:
// one row per phase, first at the top, on a log scale.
func deletionChart(r Result, off, on merged, file string) error {
	phases := node.DeletionPhases()
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Real node: single-pod deletion, manifest removed → kubelet log line of each phase\n(pods %gs apart; p50 dot to p99 triangle)", r.On[0].GapSeconds)
	// Short: plot.Plot centres the label at the linear middle of the axis,
	// near its end on a log scale, and narrows the axis to make it fit.
	p.X.Label.Text = "ms (log scale)"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	names := make([]string, len(phases))
	for i, ph := range phases {
		names[len(phases)-1-i] = ph.String()
	}
	p.NominalY(names...)
	ms := func(xs []float64, q float64) float64 { return max(1000*bench.Quantile(xs, q), 0.01) }
	fastest, slowest := math.Inf(1), 0.0
	for _, s := range []struct {
		name   string
		m      merged
		col    color.Color
		offset float64
	}{{"gate off", off, bench.OffColor, 0.15}, {"gate on", on, bench.OnColor, -0.15}} {
		var p50s, p99s plotter.XYs
		for i, ph := range phases {
			xs := s.m.phases[ph.Key()]
			if len(xs) == 0 {
				continue
			}
			y := float64(len(phases)-1-i) + s.offset
			p50, p99 := ms(xs, 0.5), ms(xs, 0.99)
			fastest, slowest = min(fastest, p50), max(slowest, p99)
			p50s = append(p50s, plotter.XY{X: p50, Y: y})
			p99s = append(p99s, plotter.XY{X: p99, Y: y})
			whisker, err := plotter.NewLine(plotter.XYs{{X: p50, Y: y}, {X: p99, Y: y}})
			if err != nil {
				return err
			}
			whisker.Color = s.col
			whisker.Width = vg.Points(1.5)
			p.Add(whisker)
		}
		if len(p50s) == 0 {
			continue
		}
		for _, q := range []struct {
			name  string
			pts   plotter.XYs
			glyph draw.GlyphDrawer
		}{{"p50", p50s, draw.CircleGlyph{}}, {"p99", p99s, draw.TriangleGlyph{}}} {
			sc, err := plotter.NewScatter(q.pts)
			if err != nil {
				return err
			}
			sc.GlyphStyle.Color = s.col
			sc.GlyphStyle.Shape = q.glyph
			sc.GlyphStyle.Radius = vg.Points(3.5)
			p.Add(sc)
			p.Legend.Add(fmt.Sprintf("%s %s", s.name, q.name), sc)
		}
	}
	// Whole decades, since plot.LogTicks labels the next power of ten past
	// the axis' end, and room right of the slowest phase for the legend.
	if slowest > 0 {
		p.X.Min = math.Pow10(int(math.Floor(math.Log10(fastest))))
		p.X.Max = math.Pow10(int(math.Ceil(math.Log10(4 * slowest))))
	}
	p.Y.Min, p.Y.Max = -0.5, float64(len(phases))-0.5
	p.Legend.Top = true
	return p.Save(8*vg.Inch, 5*vg.Inch, file)
}
