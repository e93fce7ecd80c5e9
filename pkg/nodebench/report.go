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
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"evented-volume-manager/pkg/bench"
	"evented-volume-manager/pkg/node"
)

// Result is a whole benchmark run: every round of each configuration.
type Result struct {
	// Stock are the rounds of upstream's kubelet; results from before the
	// stock configuration, or from runs that skipped it, have none.
	Stock []Mode `json:"Stock,omitempty"`
	// Off and On are the rounds of the series' kubelet with the gate off
	// and on.
	Off, On []Mode
	// Orders are the configurations each round ran, in the order it ran
	// them; results from before they were recorded have none.
	Orders [][]Config `json:"Orders,omitempty"`
}

// Add files m with the rounds of its configuration.
func (r *Result) Add(m Mode) {
	switch m.Config() {
	case Stock:
		r.Stock = append(r.Stock, m)
	case GateOn:
		r.On = append(r.On, m)
	default:
		r.Off = append(r.Off, m)
	}
}

// Modes are the rounds of configuration c.
func (r Result) Modes(c Config) []Mode {
	switch c {
	case Stock:
		return r.Stock
	case GateOn:
		return r.On
	default:
		return r.Off
	}
}

// HasStock reports whether r has rounds of upstream's kubelet.
func (r Result) HasStock() bool { return len(r.Stock) > 0 }

// configs are the configurations r has rounds of, in the report's order.
func (r Result) configs() []Config {
	var cs []Config
	for _, c := range Configs {
		if len(r.Modes(c)) > 0 {
			cs = append(cs, c)
		}
	}
	return cs
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
	for _, modes := range [][]Mode{r.Stock, r.Off, r.On} {
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

// merged pools a configuration's rounds.
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
	// exitUnmount are the exiting pods' times from container exit to
	// volumes unmounted.
	exitUnmount []float64
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
		m.exitUnmount = append(m.exitUnmount, mode.ExitUnmount...)
		m.startup = append(m.startup, mode.StartupSeconds)
	}
	return m
}

// Stat is a figure of one configuration: its value over all rounds pooled,
// and the lowest and highest value it had in a single round.
type Stat struct {
	// Value pools every round; NaN where nothing measured it.
	Value float64
	// Min and Max are the figure's extremes in single rounds, over the
	// Rounds rounds that measured it.
	Min, Max float64
	Rounds   int
}

// Spread is how far apart the rounds were, Max - Min, or NaN with fewer
// than two rounds.
func (s Stat) Spread() float64 {
	if s.Rounds < 2 {
		return math.NaN()
	}
	return s.Max - s.Min
}

// statOf is value over modes pooled, and its extremes in single rounds.
func statOf(modes []Mode, value func(m merged) float64) Stat {
	s := Stat{Value: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	if len(modes) == 0 {
		return s
	}
	s.Value = value(merge(modes))
	for _, mode := range modes {
		v := value(merge([]Mode{mode}))
		if math.IsNaN(v) {
			continue
		}
		if s.Rounds == 0 || v < s.Min {
			s.Min = v
		}
		if s.Rounds == 0 || v > s.Max {
			s.Max = v
		}
		s.Rounds++
	}
	return s
}

// Row is a line of the comparison table: a figure of upstream's kubelet
// (Stock, NaN in results without it) and of the series' kubelet with the
// gate off and on.
type Row struct {
	Figure    string
	Unit      string
	LowerWins bool
	Stock     Stat
	Off, On   Stat
}

// Ratio is off/on for figures where lower is better (on/off otherwise), so
// that "9x" reads as nine times better with the gate on.
func (r Row) Ratio() string {
	return bench.Row{Off: r.Off.Value, On: r.On.Value, LowerWins: r.LowerWins}.Ratio()
}

// StockRatio is stock/on for figures where lower is better (on/stock
// otherwise): how many times better the gate on does than upstream's
// kubelet.
func (r Row) StockRatio() string {
	return bench.Row{Off: r.Stock.Value, On: r.On.Value, LowerWins: r.LowerWins}.Ratio()
}

// StockDiffers reports whether stock and gate off differ by more than the
// rounds' spread: their values are further apart than the wider of their
// spreads across rounds. Without two rounds of each there is no spread to
// judge by, and it reports false.
func (r Row) StockDiffers() bool {
	if r.Stock.Rounds < 2 || r.Off.Rounds < 2 || math.IsNaN(r.Stock.Value) || math.IsNaN(r.Off.Value) {
		return false
	}
	return math.Abs(r.Stock.Value-r.Off.Value) > max(r.Stock.Spread(), r.Off.Spread())
}

// figure is a row of the comparison table, to compute from any rounds.
type figure struct {
	name      string
	unit      string
	lowerWins bool
	// optional figures are left out of results whose gate-on rounds lack
	// them: results from before their metric or measurement.
	optional bool
	value    func(m merged) float64
}

// figures are the comparison table's rows.
func figures(r Result) []figure {
	rt := r.On[0].RuntimeName()
	gap, pods := r.On[0].GapSeconds, r.On[0].Pods
	median := func(of func(m merged) []float64) func(m merged) float64 {
		return func(m merged) float64 { return Median(of(m)) }
	}
	iterations := func(loop string) func(m merged) float64 {
		return func(m merged) float64 {
			if m.idleSeconds == 0 {
				return math.NaN() // no counter without the gate on
			}
			var n float64
			for l, v := range m.iterations {
				if loop == "" || l == loop {
					n += v
				}
			}
			return 60 * n / m.idleSeconds
		}
	}
	fs := []figure{
		{name: "idle kubelet CPU (median of windows)", unit: "CPU-s/min", lowerWins: true, value: median(func(m merged) []float64 { return m.kubeletPerMin })},
		{name: "idle " + rt + " CPU (median of windows)", unit: "CPU-s/min", lowerWins: true, value: median(func(m merged) []float64 { return m.runtimePerMin })},
		{name: "volume manager share of kubelet CPU (pprof)", unit: "%", lowerWins: true, value: func(m merged) float64 { return 100 * Median(m.vmShare) }},
		{name: "volume manager CPU (pprof)", unit: "CPU-s/min", lowerWins: true, value: median(func(m merged) []float64 { return m.vmPerMin })},
		{name: "idle populator iterations", unit: "/min", lowerWins: true, value: iterations("desired_state_of_world_populator")},
		{name: "idle reconciler iterations", unit: "/min", lowerWins: true, value: iterations("reconciler")},
	}
	for _, loop := range []struct{ name, label string }{{"populator", "desired_state_of_world_populator"}, {"reconciler", "reconciler"}} {
		for _, kind := range []struct{ name, label string }{{"full passes (walk all state)", "full"}, {"partial passes (changed pods)", "partial"}, {"skipped passes", "skipped"}} {
			key := loop.label + "/" + kind.label
			fs = append(fs, figure{name: fmt.Sprintf("idle %s %s", loop.name, kind.name), unit: "/min", lowerWins: kind.label == "full", optional: true,
				value: func(m merged) float64 {
					if m.passSeconds == 0 {
						return math.NaN() // no counter without the gate on
					}
					return 60 * m.passes[key] / m.passSeconds
				}})
		}
	}
	for _, s := range []struct {
		name string
		of   func(m merged) []float64
		// optional: see figure.optional.
		optional bool
	}{
		{fmt.Sprintf("volume-ready wait, single pods %gs apart", gap), func(m merged) []float64 { return m.mount }, false},
		{fmt.Sprintf("manifest written → volumes ready, single pods %gs apart", gap), func(m merged) []float64 { return m.mountE2E }, false},
		{fmt.Sprintf("unmount wait, single pods %gs apart", gap), func(m merged) []float64 { return m.unmount }, false},
		{fmt.Sprintf("manifest removed → volumes unmounted, single pods %gs apart", gap), func(m merged) []float64 { return m.unmountE2E }, false},
		{fmt.Sprintf("volume-ready wait, %d pods at once", pods), func(m merged) []float64 { return m.burst }, false},
		{"container exited on its own → volumes unmounted (mountinfo)", func(m merged) []float64 { return m.exitUnmount }, true},
	} {
		for _, q := range []struct {
			name string
			q    float64
		}{{"p50", 0.5}, {"p99", 0.99}} {
			fs = append(fs, figure{name: fmt.Sprintf("%s %s", s.name, q.name), unit: "ms", lowerWins: true, optional: s.optional,
				value: func(m merged) float64 { return 1000 * bench.Quantile(s.of(m), q.q) }})
		}
	}
	fs = append(fs, figure{name: fmt.Sprintf("all %d pods running, from manifests written", pods), unit: "s", lowerWins: true,
		value: median(func(m merged) []float64 { return m.startup })})
	for _, c := range []struct {
		name string
		of   func(m merged) []float64
	}{
		{"kubelet CPU while single pods are deleted", func(m merged) []float64 { return m.deleteKubelet }},
		{rt + " CPU while single pods are deleted", func(m merged) []float64 { return m.deleteRuntime }},
		{"kubelet CPU while single pods are added", func(m merged) []float64 { return m.addKubelet }},
		{rt + " CPU while single pods are added", func(m merged) []float64 { return m.addRuntime }},
	} {
		fs = append(fs, figure{name: fmt.Sprintf("%s, %gs apart (median of rounds)", c.name, gap), unit: "CPU-s/min", lowerWins: true, optional: true,
			value: median(c.of)})
	}
	return fs
}

// Rows are the comparison table's lines: each figure pooled over the rounds
// of every configuration, with its extremes in single rounds.
func Rows(r Result) []Row {
	var rows []Row
	for _, f := range figures(r) {
		row := Row{Figure: f.name, Unit: f.unit, LowerWins: f.lowerWins,
			Stock: statOf(r.Stock, f.value), Off: statOf(r.Off, f.value), On: statOf(r.On, f.value)}
		if f.optional && math.IsNaN(row.On.Value) {
			continue
		}
		rows = append(rows, row)
	}
	return rows
}

// PhaseStat is a single-pod deletion figure of one configuration: its p50
// and p99 in milliseconds, with their extremes in single rounds, and how
// many pods it has, all rounds pooled.
type PhaseStat struct {
	P50, P99 Stat
	Pods     int
}

// PhaseRow is a line of the single-pod deletion table: a figure of
// upstream's kubelet (Stock, without pods in results without it) and of the
// series' kubelet with the gate off and on.
type PhaseRow struct {
	Figure         string
	Stock, Off, On PhaseStat
}

// PhaseRows are the single-pod deletion table's lines: the time from a
// pod's manifest removed to each phase's kubelet log line, phase by phase,
// then the per-pod time from termination complete to the last TearDown and
// to SyncTerminatedPod enter. It is empty for results without phases.
func PhaseRows(r Result) []PhaseRow {
	hasPhases := false
	for _, c := range r.configs() {
		hasPhases = hasPhases || len(merge(r.Modes(c)).phases) > 0
	}
	if !hasPhases {
		return nil
	}
	stat := func(modes []Mode, of func(m merged) []float64) PhaseStat {
		ms := func(q float64) func(m merged) float64 {
			return func(m merged) float64 { return 1000 * bench.Quantile(of(m), q) }
		}
		return PhaseStat{P50: statOf(modes, ms(0.5)), P99: statOf(modes, ms(0.99)), Pods: len(of(merge(modes)))}
	}
	row := func(figure string, of func(m merged) []float64) PhaseRow {
		return PhaseRow{Figure: figure, Stock: stat(r.Stock, of), Off: stat(r.Off, of), On: stat(r.On, of)}
	}
	var rows []PhaseRow
	for _, p := range node.DeletionPhases() {
		rows = append(rows, row(fmt.Sprintf("%s (`%s`)", p, phaseMessage(p)), func(m merged) []float64 { return m.phases[p.Key()] }))
	}
	return append(rows,
		row(fmt.Sprintf("%s → %s, per pod", node.TerminationComplete, node.TearDownDone), func(m merged) []float64 { return m.terminatedToTearDown }),
		row(fmt.Sprintf("%s → %s, per pod", node.TerminationComplete, node.SyncTerminatedEnter), func(m merged) []float64 { return m.terminatedToSync }),
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

// roundsLine says how many rounds ran, and in which order.
func roundsLine(r Result) string {
	if len(r.Orders) == 0 {
		return fmt.Sprintf("%d round(s) per gate value (the order within each round is not recorded in these results)", len(r.On))
	}
	orders := make([]string, len(r.Orders))
	for i, order := range r.Orders {
		names := make([]string, len(order))
		for j, c := range order {
			names[j] = string(c)
		}
		orders[i] = fmt.Sprintf("round %d ran %s", i+1, strings.Join(names, ", "))
	}
	return fmt.Sprintf("%d round(s) per configuration: %s", len(r.On), strings.Join(orders, "; "))
}

// Markdown renders the comparison: stock (when the results have it), gate
// off, gate on, and the ratios against gate on; then whether stock and gate
// off differ beyond the rounds' spread, and the single-pod deletion phases.
func Markdown(r Result) string {
	var b strings.Builder
	m := r.On[0]
	stock := r.HasStock()
	verbosity := "--v=3"
	if m.ChurnVerbosity > 0 {
		verbosity = fmt.Sprintf("--v=3 (--v=%d while single pods are deleted and added)", m.ChurnVerbosity)
	}
	fmt.Fprintf(&b, "### Real node: %d static pods × %d volumes, %s and runc, standalone kubelet at %s\n\n", m.Pods, m.Volumes, m.RuntimeLabel(), verbosity)
	fmt.Fprintf(&b, "%s; %d idle window(s) of %.0f s and a %.0f s profile per round; %d single pods (%d samples per configuration).\n\n",
		roundsLine(r), len(m.KubeletCPU), m.WindowSeconds, m.ProfileSeconds, len(m.Mount), len(merge(r.On).mount))
	rows := Rows(r)
	if stock {
		b.WriteString("| figure | stock | gate off | gate on | stock/on | off/on |\n|---|---|---|---|---|---|\n")
	} else {
		b.WriteString("| figure | gate off | gate on | off/on |\n|---|---|---|---|\n")
	}
	for _, row := range rows {
		if stock {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", row.Figure, statCell(row.Stock, row.Unit), statCell(row.Off, row.Unit),
				statCell(row.On, row.Unit), row.StockRatio(), row.Ratio())
		} else {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", row.Figure, statCell(row.Off, row.Unit), statCell(row.On, row.Unit), row.Ratio())
		}
	}
	if len(r.On) > 1 {
		b.WriteString("\nEach value pools all rounds; in parentheses, the lowest and highest single round.")
	} else {
		b.WriteString("\nOne round: no spread across rounds.")
	}
	b.WriteString(exitLine(r))
	if stock {
		b.WriteString(" stock/on and off/on divide stock's and gate off's value by gate on's (the other way round where more is better): above 1x, the gate on does better.\n")
		b.WriteString(stockAgainstOff(r, rows))
	} else {
		b.WriteString(" off/on divides gate off's value by gate on's (the other way round where more is better): above 1x, the gate on does better.\n")
	}
	b.WriteString("\nEach window, kubelet CPU-s/min (")
	var names, windows []string
	for _, c := range r.configs() {
		names = append(names, string(c))
		windows = append(windows, list(merge(r.Modes(c)).kubeletPerMin))
	}
	fmt.Fprintf(&b, "%s): %s\n", strings.Join(names, " | "), strings.Join(windows, " | "))
	if stock {
		fmt.Fprintf(&b, "\nStock is upstream's kubelet%s, built from the release's tag without the series and configured without the EventedVolumeManager gate, which it does not know; "+
			"gate off and gate on are the series' kubelet%s. Stock and gate off count no loop iterations or passes; upstream's loops run every 100 ms.\n",
			versionNote(r.Stock), versionNote(r.On))
	} else {
		b.WriteString("\nThe gate-off kubelet is upstream's code, which counts no loop iterations; upstream's loops run every 100 ms.\n")
	}
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
		b.WriteString("Time from a pod's manifest removed to the kubelet's log line of each phase, all rounds pooled (in parentheses, with two rounds or more, the lowest and highest single round); " +
			"a pod whose log lacks a line is left out of that row. The last two rows are differences within each pod.\n\n")
		if stock {
			b.WriteString("| from manifest removed to | stock p50 | stock p99 | gate off p50 | gate off p99 | gate on p50 | gate on p99 | pods stock / off / on |\n|---|---|---|---|---|---|---|---|\n")
		} else {
			b.WriteString("| from manifest removed to | gate off p50 | gate off p99 | gate on p50 | gate on p99 | pods off / on |\n|---|---|---|---|---|---|\n")
		}
		for _, row := range rows {
			if stock {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %d / %d / %d |\n", row.Figure,
					statCell(row.Stock.P50, "ms"), statCell(row.Stock.P99, "ms"), statCell(row.Off.P50, "ms"), statCell(row.Off.P99, "ms"),
					statCell(row.On.P50, "ms"), statCell(row.On.P99, "ms"), row.Stock.Pods, row.Off.Pods, row.On.Pods)
			} else {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d / %d |\n", row.Figure,
					statCell(row.Off.P50, "ms"), statCell(row.Off.P99, "ms"), statCell(row.On.P50, "ms"), statCell(row.On.P99, "ms"), row.Off.Pods, row.On.Pods)
			}
		}
	}
	return b.String()
}

// exitLine says, for results with pods whose container exits on its own,
// what their rows time and how many pods each configuration has, all rounds
// pooled; it is empty for results without them.
func exitLine(r Result) string {
	m := r.On[0]
	if len(m.ExitUnmount) == 0 {
		return ""
	}
	var names, counts []string
	for _, c := range r.configs() {
		names = append(names, string(c))
		counts = append(counts, fmt.Sprint(len(merge(r.Modes(c)).exitUnmount)))
	}
	return fmt.Sprintf(" The container-exit rows time pods with restartPolicy Never whose one container sleeps %v to %v and exits 0, nothing deleting them: "+
		"from the container's finishedAt (the runtime's) to /proc/self/mountinfo, read every %v, showing no mount under the pod's volumes directory; "+
		"pods (%s): %s.", exitMin, exitMax, time.Duration(m.ExitPollSeconds*float64(time.Second)), strings.Join(names, " / "), strings.Join(counts, " / "))
}

// stockAgainstOff says on which rows stock and gate off differ by more than
// the rounds' spread (Row.StockDiffers), each on a line of its own.
func stockAgainstOff(r Result, rows []Row) string {
	if len(r.Stock) < 2 || len(r.Off) < 2 {
		return "\nStock against gate off: one round of either gives no spread across rounds to judge their difference by; run two rounds or more.\n"
	}
	var b strings.Builder
	for _, row := range rows {
		if row.StockDiffers() {
			fmt.Fprintf(&b, "- **stock and gate off differ beyond the rounds' spread: %s**: stock %s, gate off %s; spread across rounds %s (stock), %s (gate off)\n",
				row.Figure, cell(row.Stock.Value, row.Unit), cell(row.Off.Value, row.Unit), cell(row.Stock.Spread(), row.Unit), cell(row.Off.Spread(), row.Unit))
		}
	}
	if b.Len() == 0 {
		return "\nStock and gate off agree within the rounds' spread on every row both have.\n"
	}
	return "\n" + b.String()
}

// versionNote is " (<the kubelet's --version>)" of the modes' last round,
// or empty for results from before it was recorded.
func versionNote(modes []Mode) string {
	if len(modes) == 0 || modes[len(modes)-1].KubeletVersion == "" {
		return ""
	}
	return " (" + modes[len(modes)-1].KubeletVersion + ")"
}

// statCell is s's value and, with two rounds or more, its extremes in
// single rounds.
func statCell(s Stat, unit string) string {
	if math.IsNaN(s.Value) || s.Rounds < 2 {
		return cell(s.Value, unit)
	}
	return fmt.Sprintf("%s (%s–%s)", cell(s.Value, unit), number(s.Min), number(s.Max))
}

func cell(v float64, unit string) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return number(v) + " " + unit
}

// number formats v with fewer decimals the larger it is.
func number(v float64) string {
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

func list(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(s, ", ")
}

// stockColor draws upstream's kubelet in every chart, beside bench.OffColor
// and bench.OnColor.
var stockColor = color.RGBA{R: 70, G: 70, B: 70, A: 255}

// series is one configuration's rounds pooled, as the charts draw it.
type series struct {
	name string
	m    merged
	col  color.Color
}

// dashes are the line dashes of stock, empty for the other series: stock is
// drawn dashed over the others, since it often lies on gate off.
func (s series) dashes() []vg.Length {
	if s.name == string(Stock) {
		return []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return nil
}

// seriesOf are the configurations r has rounds of, pooled, in the report's
// order.
func seriesOf(r Result) []series {
	cols := map[Config]color.Color{Stock: stockColor, GateOff: bench.OffColor, GateOn: bench.OnColor}
	var ss []series
	for _, c := range r.configs() {
		ss = append(ss, series{name: string(c), m: merge(r.Modes(c)), col: cols[c]})
	}
	return ss
}

// Charts writes the latency CDFs, the idle CPU per window and, for results
// that have them, the single-pod deletion phases as PNGs in dir and returns
// their paths. Each chart draws stock, when the results have it, beside
// gate off and gate on.
func Charts(r Result, dir string) ([]string, error) {
	ss := seriesOf(r)
	var files []string
	for _, c := range []struct {
		file, title, x string
		of             func(m merged) []float64
	}{
		{"mount-latency-cdf.png", "Real node: volume-ready wait of single pods (kubelet log)", "milliseconds, Waiting for volumes → All volumes attached and mounted (log scale)",
			func(m merged) []float64 { return m.mount }},
		{"unmount-latency-cdf.png", "Real node: manifest removed → all volumes unmounted (kubelet log)", "milliseconds from the manifest's removal to All volumes are unmounted (log scale)",
			func(m merged) []float64 { return m.unmountE2E }},
	} {
		p := plot.New()
		p.Title.Text = c.title
		p.X.Label.Text = c.x
		p.Y.Label.Text = "fraction of pods"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Add(plotter.NewGrid())
		// Room right of the slowest pod, so that its line is not on the edge.
		var slowest float64
		var dashed []plot.Plotter
		for _, s := range ss {
			data := c.of(s.m)
			for _, x := range data {
				slowest = max(slowest, 1000*x)
			}
			if len(data) == 0 {
				continue
			}
			line, err := plotter.NewLine(bench.CDF(data))
			if err != nil {
				return nil, err
			}
			line.Color = s.col
			line.Width = vg.Points(1.5)
			if line.Dashes = s.dashes(); line.Dashes != nil {
				dashed = append(dashed, line)
			} else {
				p.Add(line)
			}
			p.Legend.Add(s.name, line)
		}
		p.Add(dashed...)
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
	var dashed []plot.Plotter
	for _, s := range ss {
		pts := make(plotter.XYs, len(s.m.kubeletPerMin))
		for i, v := range s.m.kubeletPerMin {
			pts[i] = plotter.XY{X: float64(i + 1), Y: v}
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		line.Color, points.Color = s.col, s.col
		if line.Dashes = s.dashes(); line.Dashes != nil {
			dashed = append(dashed, line, points)
		} else {
			p.Add(line, points)
		}
		p.Legend.Add(s.name, line, points)
	}
	p.Add(dashed...)
	p.Y.Min = 0
	p.Legend.Top = true
	f := filepath.Join(dir, "idle-kubelet-cpu.png")
	if err := p.Save(8*vg.Inch, 4.5*vg.Inch, f); err != nil {
		return nil, err
	}
	files = append(files, f)

	if len(PhaseRows(r)) == 0 {
		return files, nil // results from before the phases were timed
	}
	f = filepath.Join(dir, "deletion-phases.png")
	if err := deletionChart(r, ss, f); err != nil {
		return nil, err
	}
	return append(files, f), nil
}

// deletionChart draws, for each deletion phase, the p50 and p99 time from
// the manifest removed to the phase's log line of each configuration: one
// row per phase, first at the top, on a log scale.
func deletionChart(r Result, ss []series, file string) error {
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
	// The configurations' lines of a phase sit side by side within its row,
	// the first at the top.
	spacing := 0.6 / float64(len(ss))
	for si, s := range ss {
		offset := spacing * (float64(len(ss)-1)/2 - float64(si))
		var p50s, p99s plotter.XYs
		for i, ph := range phases {
			xs := s.m.phases[ph.Key()]
			if len(xs) == 0 {
				continue
			}
			y := float64(len(phases)-1-i) + offset
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
