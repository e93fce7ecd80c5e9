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
	"image/color"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot/vg"

	"evented-volume-manager/pkg/bench"
	"evented-volume-manager/pkg/kubeletlog"
	"evented-volume-manager/pkg/node"
)

// samples are a figure's values in one round; pooled gathers them.
type samples func(m Mode) []float64

func pooled(modes []Mode, of samples) []float64 {
	var xs []float64
	for _, m := range modes {
		xs = append(xs, of(m)...)
	}
	return xs
}

// CPU-s/min of each idle window, and of the volume manager in the profile.
var (
	kubeletCPU = perMinute(func(m Mode) []float64 { return m.KubeletCPU })
	runtimeCPU = perMinute(func(m Mode) []float64 { return m.RuntimeCPU })
	vmCPU      = profiled(func(m Mode) float64 { return 60 * m.VolumeManagerCPUSeconds / m.ProfileSeconds })
)

func perMinute(cpu func(m Mode) []float64) samples {
	return func(m Mode) []float64 {
		var xs []float64
		for _, x := range cpu(m) {
			xs = append(xs, 60*x/m.WindowSeconds)
		}
		return xs
	}
}

func profiled(of func(m Mode) float64) samples {
	return func(m Mode) []float64 {
		if m.ProfileCPUSeconds <= 0 {
			return nil
		}
		return []float64{of(m)}
	}
}

func churnCPU(stretch func(m Mode) *ChurnCPU, of func(c *ChurnCPU) float64) samples {
	return func(m Mode) []float64 {
		if c := stretch(m); c != nil && c.Seconds > 0 {
			return []float64{60 * of(c) / c.Seconds}
		}
		return nil
	}
}

// idleRate is counts' key a minute over the idle windows, or NaN for none.
func idleRate(modes []Mode, counts func(m Mode) map[string]float64, key string) float64 {
	var n, seconds float64
	for _, m := range modes {
		if c := counts(m); c != nil {
			n += c[key]
			seconds += m.WindowSeconds * float64(len(m.KubeletCPU))
		}
	}
	if seconds == 0 {
		return math.NaN() // no counter without the gate on
	}
	return 60 * n / seconds
}

func passes(m Mode) map[string]float64     { return m.Passes }
func iterations(m Mode) map[string]float64 { return m.Iterations }
func phase(p kubeletlog.DeletionPhase) samples {
	return func(m Mode) []float64 { return m.DeletionPhases[p.Key()] }
}

// Stat is a figure of one configuration over all rounds pooled (NaN where
// nothing measured it), and its extremes in the Rounds that measured it.
type Stat struct {
	Value    float64
	Min, Max float64
	Rounds   int
}

// Spread is how far apart the rounds were.
func (s Stat) Spread() float64 { return s.Max - s.Min }
func noStat() Stat             { return Stat{Value: math.NaN(), Min: math.NaN(), Max: math.NaN()} }

func statOf(modes []Mode, value func(modes []Mode) float64) Stat {
	s := noStat()
	if len(modes) == 0 {
		return s
	}
	s.Value = value(modes)
	var rounds []float64
	for i := range modes {
		if v := value(modes[i : i+1]); !math.IsNaN(v) {
			rounds = append(rounds, v)
		}
	}
	if s.Rounds = len(rounds); s.Rounds > 0 {
		s.Min, s.Max = slices.Min(rounds), slices.Max(rounds)
	}
	return s
}

// Row is a line of the comparison table: a figure of each configuration.
type Row struct {
	Figure, Unit string
	LowerWins    bool
	Stats        map[Config]Stat
	// offNote stands in an empty cell of the gate off.
	offNote string
}

// Stat is the figure of configuration c: NaN without c.
func (r Row) Stat(c Config) Stat {
	if s, ok := r.Stats[c]; ok {
		return s
	}
	return noStat()
}

// Ratio is c's value over gate on's ("9x": nine times better with the gate on).
func (r Row) Ratio(c Config) string {
	return bench.Ratio(r.Stat(c).Value, r.Stat(GateOn).Value, r.LowerWins)
}

// StockDiffers reports whether stock and gate off (two rounds or more of
// each) are further apart than the wider of their spreads.
func (r Row) StockDiffers() bool {
	stock, off := r.Stat(Stock), r.Stat(GateOff)
	if stock.Rounds < 2 || off.Rounds < 2 || math.IsNaN(stock.Value) || math.IsNaN(off.Value) {
		return false
	}
	return math.Abs(stock.Value-off.Value) > max(stock.Spread(), off.Spread())
}

// figure is a row of the comparison table, to compute from any rounds;
// optional figures are left out where no configuration has them.
type figure struct {
	name, unit          string
	lowerWins, optional bool
	offNote             string
	value               func(modes []Mode) float64
}

// quantiles are the figures "name p50" and "name p99" of of, in ms.
func quantiles(name string, optional bool, of samples) []figure {
	var fs []figure
	for _, q := range []float64{0.5, 0.99} {
		fs = append(fs, figure{name: fmt.Sprintf("%s p%.0f", name, 100*q), unit: "ms", lowerWins: true, optional: optional,
			value: func(modes []Mode) float64 { return 1000 * bench.Quantile(pooled(modes, of), q) }})
	}
	return fs
}

// median is the median of of (the mean of the middle two), scaled.
func median(of samples, scale float64) func(modes []Mode) float64 {
	return func(modes []Mode) float64 { return scale * bench.Median(pooled(modes, of)) }
}

func memoryFigures() []figure {
	return []figure{
		{name: "kubelet RSS (median of reads in the idle windows)", unit: "MiB", lowerWins: true, optional: true,
			value: median(func(m Mode) []float64 { return m.KubeletRSSMiB }, 1)},
		{name: "kubelet anonymous RSS (median of reads in the idle windows)", unit: "MiB", lowerWins: true, optional: true,
			value: median(func(m Mode) []float64 { return m.KubeletAnonMiB }, 1)},
		{name: "kubelet live Go heap after a forced GC (median of windows)", unit: "MiB", lowerWins: true, optional: true,
			value: median(func(m Mode) []float64 { return m.KubeletLiveHeapMiB }, 1)},
	}
}

func (Standalone) figures(r Result) []figure {
	m := r.lead()[0]
	rt, gap, pods := m.RuntimeName(), m.GapSeconds, m.Pods
	fs := []figure{
		{name: "idle kubelet CPU (median of windows)", unit: "CPU-s/min", lowerWins: true, value: median(kubeletCPU, 1)},
		{name: "idle " + rt + " CPU (median of windows)", unit: "CPU-s/min", lowerWins: true, value: median(runtimeCPU, 1)},
		{name: "volume manager share of kubelet CPU (pprof)", unit: "%", lowerWins: true,
			value: median(profiled(func(m Mode) float64 { return m.VolumeManagerCPUSeconds / m.ProfileCPUSeconds }), 100)},
		{name: "volume manager CPU (pprof)", unit: "CPU-s/min", lowerWins: true, value: median(vmCPU, 1)},
	}
	fs = append(fs, memoryFigures()...)
	for _, loop := range loops {
		fs = append(fs, figure{name: fmt.Sprintf("idle %s iterations", shortLoop(loop)), unit: "/min", lowerWins: true,
			value: func(modes []Mode) float64 { return idleRate(modes, iterations, loop) }})
	}
	for _, loop := range loops {
		for _, kind := range []struct{ name, label string }{{"full passes (walk all state)", "full"}, {"partial passes (changed pods)", "partial"}, {"skipped passes", "skipped"}} {
			fs = append(fs, figure{name: fmt.Sprintf("idle %s %s", shortLoop(loop), kind.name), unit: "/min", lowerWins: kind.label == "full", optional: true,
				value: func(modes []Mode) float64 { return idleRate(modes, passes, loop+"/"+kind.label) }})
		}
	}
	fs = slices.Concat(fs,
		quantiles(fmt.Sprintf("volume-ready wait, single pods %gs apart", gap), false, func(m Mode) []float64 { return m.Mount }),
		quantiles(fmt.Sprintf("manifest written → volumes ready, single pods %gs apart", gap), false, func(m Mode) []float64 { return m.MountEndToEnd }),
		quantiles(fmt.Sprintf("last volume set up → wait ends, single pods %gs apart", gap), true, func(m Mode) []float64 { return m.SetUpToMounted }),
		quantiles(fmt.Sprintf("unmount wait, single pods %gs apart", gap), false, func(m Mode) []float64 { return m.Unmount }),
		quantiles(fmt.Sprintf("manifest removed → volumes unmounted, single pods %gs apart", gap), false, func(m Mode) []float64 { return m.UnmountEndToEnd }),
		quantiles(fmt.Sprintf("volume-ready wait, %d pods at once", pods), false, func(m Mode) []float64 { return m.BurstMount }),
		quantiles("container exited on its own → volumes unmounted (mountinfo)", true, func(m Mode) []float64 { return m.ExitUnmount }),
		exitStepFigures(),
		crashLoopFigures(),
		[]figure{{name: fmt.Sprintf("all %d pods running, from manifests written", pods), unit: "s", lowerWins: true,
			value: median(func(m Mode) []float64 { return []float64{m.StartupSeconds} }, 1)}},
	)
	for _, stretch := range []struct {
		name string
		cpu  func(m Mode) *ChurnCPU
	}{{"deleted", func(m Mode) *ChurnCPU { return m.DeleteCPU }}, {"added", func(m Mode) *ChurnCPU { return m.AddCPU }}} {
		for _, p := range []struct {
			name string
			cpu  func(c *ChurnCPU) float64
		}{{"kubelet", func(c *ChurnCPU) float64 { return c.Kubelet }}, {rt, func(c *ChurnCPU) float64 { return c.Runtime }}} {
			fs = append(fs, figure{name: fmt.Sprintf("%s CPU while single pods are %s, %gs apart (median of rounds)", p.name, stretch.name, gap),
				unit: "CPU-s/min", lowerWins: true, optional: true, value: median(churnCPU(stretch.cpu, p.cpu), 1)})
		}
	}
	return fs
}

// figures: idle figures are medians by nearest rank.
func (Cluster) figures(r Result) []figure {
	var fs []figure
	for _, f := range []struct {
		name string
		of   samples
	}{
		{"idle volume manager CPU (pprof)", vmCPU},
		{"idle kubelet CPU", kubeletCPU},
		{"idle container runtime CPU", runtimeCPU},
		{"idle kube-apiserver CPU", perMinute(func(m Mode) []float64 { return m.APIServerCPU })},
		{"idle kube-controller-manager CPU", perMinute(func(m Mode) []float64 { return m.ControllerManagerCPU })},
	} {
		fs = append(fs, figure{name: f.name, unit: "CPU-s/min", lowerWins: true, value: nearestMedian(f.of)})
	}
	fs = append(fs, memoryFigures()...)
	// Gate off, upstream's loops count no passes.
	for _, loop := range loops {
		for _, kind := range []struct{ label, offNote string }{{"full", "600 (polls every 100 ms)"}, {"partial", "0 (every poll is full)"}} {
			fs = append(fs, figure{name: fmt.Sprintf("idle %s passes, %s", shortLoop(loop), kind.label), unit: "/min", lowerWins: true, offNote: kind.offNote,
				value: nearestMedian(func(m Mode) []float64 {
					if v, ok := m.Passes[loop+"/"+kind.label]; ok && m.WindowSeconds > 0 && len(m.KubeletCPU) > 0 {
						return []float64{60 * v / (m.WindowSeconds * float64(len(m.KubeletCPU)))}
					}
					return nil
				})})
		}
	}
	for _, kind := range ClusterPodKinds {
		if slices.ContainsFunc(r.configs(), func(c Config) bool { return pooledKind(r.Modes(c), kind.Key) == nil }) {
			continue
		}
		for _, t := range []struct {
			name string
			of   func(t *KindTimes) []float64
		}{
			{"volume-ready wait", func(t *KindTimes) []float64 { return t.Mount }},
			{"created → mounted", func(t *KindTimes) []float64 { return t.MountEndToEnd }},
			{"last volume set up → wait ends", func(t *KindTimes) []float64 { return t.SetUpToMounted }},
			{"attached → mounted", func(t *KindTimes) []float64 { return t.AttachedToMounted }},
			{"node status lists it → mounted", func(t *KindTimes) []float64 { return t.ListedToMounted }},
			{"deleted → unmounted", func(t *KindTimes) []float64 { return t.UnmountEndToEnd }},
			{"deleted → detached", func(t *KindTimes) []float64 { return t.DetachEndToEnd }},
		} {
			fs = append(fs, quantiles(kind.Key+": "+t.name, true, func(m Mode) []float64 {
				if k := m.Kinds[kind.Key]; k != nil {
					return t.of(k)
				}
				return nil
			})...)
		}
	}
	return slices.Concat(fs,
		quantiles("configMap updated → pod file", false, func(m Mode) []float64 { return m.ConfigMapUpdate }),
		quantiles("pod sync → volumes remounted", false, func(m Mode) []float64 { return m.Remount }))
}

// nearestMedian is the median of of by nearest rank: the lower of the middle two.
func nearestMedian(of samples) func(modes []Mode) float64 {
	return func(modes []Mode) float64 { return bench.Quantile(pooled(modes, of), 0.5) }
}

// pooledKind is a kind's end-to-end times over the rounds, or nil for none.
func pooledKind(modes []Mode, key string) *KindTimes {
	var t *KindTimes
	for _, m := range modes {
		if k := m.Kinds[key]; k != nil {
			t = cmp.Or(t, &KindTimes{})
			t.MountEndToEnd = append(t.MountEndToEnd, k.MountEndToEnd...)
			t.UnmountEndToEnd = append(t.UnmountEndToEnd, k.UnmountEndToEnd...)
		}
	}
	return t
}

// kindReport is what a report says differently by the node's kind.
type kindReport interface {
	figures(r Result) []figure
	heading(b *strings.Builder, r Result)
	cell(s Stat, unit string) string
	notes(b *strings.Builder, r Result, rows []Row)
	listsTriggers() bool
	charts(r Result) (titles []string, mount, unmount []bench.Series)
}

func reportOf(r Result) kindReport {
	if r.Cluster {
		return Cluster{}
	}
	return Standalone{}
}

func (Standalone) cell(s Stat, unit string) string { return statCell(s, unit) }
func (Standalone) listsTriggers() bool             { return false }
func (Cluster) cell(s Stat, unit string) string    { return bench.Cell(s.Value, unit) }
func (Cluster) listsTriggers() bool                { return true }

// Rows are the comparison table's lines.
func Rows(r Result) []Row {
	var rows []Row
	for _, f := range reportOf(r).figures(r) {
		row := Row{Figure: f.name, Unit: f.unit, LowerWins: f.lowerWins, offNote: f.offNote, Stats: map[Config]Stat{}}
		measured := false
		for _, c := range r.configs() {
			row.Stats[c] = statOf(r.Modes(c), f.value)
			measured = measured || !math.IsNaN(row.Stats[c].Value)
		}
		if measured || !f.optional {
			rows = append(rows, row)
		}
	}
	return rows
}

// APIRequestRow is a request's rate a minute idle and churning, and the most
// in any 1 s, of each configuration.
type APIRequestRow struct {
	Key               string
	Idle, Churn       []float64
	IdleMax, ChurnMax []int
}

// APIRequestRows are the kubelet's requests, by resource, then verb.
func APIRequestRows(r Result) []APIRequestRow {
	byKey := map[string]*APIRequestRow{}
	for _, c := range r.configs() {
		for _, m := range r.Modes(c) {
			for _, a := range m.APIRequests {
				for key := range a.Count {
					byKey[key] = &APIRequestRow{Key: key}
				}
			}
		}
	}
	rows := make([]APIRequestRow, 0, len(byKey))
	for _, row := range byKey {
		for _, c := range r.configs() {
			rate, most := apiRate(r.Modes(c), PhaseIdle, row.Key)
			row.Idle, row.IdleMax = append(row.Idle, rate), append(row.IdleMax, most)
			rate, most = apiRate(r.Modes(c), PhaseChurn, row.Key)
			row.Churn, row.ChurnMax = append(row.Churn, rate), append(row.ChurnMax, most)
		}
		rows = append(rows, *row)
	}
	slices.SortFunc(rows, func(a, b APIRequestRow) int {
		va, ra, _ := strings.Cut(a.Key, " ")
		vb, rb, _ := strings.Cut(b.Key, " ")
		return cmp.Or(strings.Compare(ra, rb), strings.Compare(va, vb))
	})
	return rows
}

// apiRate is the requests key a minute in phase, and the most in any 1 s.
func apiRate(modes []Mode, phase, key string) (perMinute float64, most int) {
	var count, seconds float64
	for _, m := range modes {
		a := m.APIRequests[phase]
		count += float64(a.Count[key])
		seconds += a.Seconds
		most = max(most, a.MaxInSecond[key])
	}
	if count == 0 {
		return 0, most
	}
	return count * 60 / seconds, most
}

// lead are the rounds a report takes the run's settings from, stock's last.
func (r Result) lead() []Mode {
	configs := r.configs()
	for _, c := range append([]Config{GateOn}, configs...) {
		if c != Stock && len(r.Modes(c)) > 0 {
			return r.Modes(c)
		}
	}
	return r.Modes(configs[0])
}

// Markdown renders the comparison table and the notes of the node's kind.
func Markdown(r Result) string {
	var b strings.Builder
	kind, rows := reportOf(r), Rows(r)
	kind.heading(&b, r)
	table(&b, r, rows)
	kind.notes(&b, r, rows)
	for _, c := range r.configs() {
		last := r.Modes(c)[len(r.Modes(c))-1]
		if top := last.VolumeManagerTop; len(top) > 0 && c.Kubelet("").Gate(node.EventedVolumeManager) {
			fs := stringsOf(top, func(f node.FunctionCPU) string {
				return fmt.Sprintf("%s %.3fs", strings.TrimPrefix(f.Function, "k8s.io/kubernetes/pkg/kubelet/volumemanager/"), f.CPU.Seconds())
			})
			fmt.Fprintf(&b, "\n%s, volume manager functions with the most CPU (last round): %s\n", capitalized(string(c)), strings.Join(fs, ", "))
		}
	}
	for _, c := range r.configs() {
		if t := r.Modes(c)[len(r.Modes(c))-1].Triggers; len(t) > 0 && kind.listsTriggers() && c.Kubelet("").Gate(node.EventedVolumeManager) {
			fmt.Fprintf(&b, "\n%s, loop iterations by trigger over the last round: %s\n", capitalized(string(c)), formatCounts(t))
		}
	}
	phaseTable(&b, r)
	return b.String()
}

func (Standalone) heading(b *strings.Builder, r Result) {
	m := r.lead()[0]
	fmt.Fprintf(b, "### Real node: %d static pods × %d volumes, %s and runc, standalone kubelet at --v=3 (--v=%d while single pods are deleted and added)\n\n",
		m.Pods, m.Volumes, m.Runtime, m.ChurnVerbosity)
	orders := make([]string, len(r.Orders))
	for i, order := range r.Orders {
		orders[i] = fmt.Sprintf("round %d ran %s", i+1, join(order, ", "))
	}
	fmt.Fprintf(b, "%d round(s) per configuration: %s; %d idle window(s) of %.0f s and a %.0f s profile per round; %d single pods (%d samples per configuration).\n\n",
		len(r.lead()), strings.Join(orders, "; "), len(m.KubeletCPU), m.WindowSeconds, m.ProfileSeconds, len(m.Mount), len(pooled(r.lead(), func(m Mode) []float64 { return m.Mount })))
}

func (Cluster) heading(b *strings.Builder, r Result) {
	m := r.lead()[0]
	fmt.Fprintf(b, "### Cluster node: %d API pods × %d volumes (projected token, configMap, secret, emptyDir), %s and runc\n\n", m.Pods, m.Volumes, m.Runtime)
	orders := make([]string, len(r.Orders))
	for i, o := range r.Orders {
		orders[i] = fmt.Sprintf("round %d %s first", i+1, o[0])
	}
	singles := 0
	if t := m.Kinds[ClusterPodKinds[0].Key]; t != nil {
		singles = len(t.MountEndToEnd)
	}
	per := "per configuration"
	if slices.Equal(r.configs(), []Config{GateOff, GateOn}) {
		per = "per gate value"
	}
	fmt.Fprintf(b, "etcd, kube-apiserver and kube-controller-manager (attach/detach, PV binder, service accounts, root CA) from the tree; "+
		"the kubelet registered as a node at --v=3; the project's CSI driver (attachRequired) and attacher. "+
		"%d round(s) %s, %s; %d idle window(s) of %.0f s and a %.0f s profile per round; "+
		"%d single pods of each kind per round, %gs apart; %d configMap updates per round, made with the kubelet at --v=%d.\n\n",
		len(r.lead()), per, strings.Join(orders, ", "), len(m.KubeletCPU), m.WindowSeconds, m.ProfileSeconds, singles, m.GapSeconds,
		len(m.ConfigMapUpdate)+m.ConfigMapUpdateMissed, churnVerbosity)
}

// ratioConfigs are stock and gate off, of configs, if configs have gate on.
func ratioConfigs(configs []Config) []Config {
	if !slices.Contains(configs, GateOn) {
		return nil
	}
	return slices.DeleteFunc([]Config{Stock, GateOff}, func(c Config) bool { return !slices.Contains(configs, c) })
}

func ratioName(c Config) string { return short(c) + "/on" }

func table(b *strings.Builder, r Result, rows []Row) {
	configs, ratios := r.configs(), ratioConfigs(r.configs())
	header := slices.Concat([]string{"figure"}, stringsOf(configs, Config.String), stringsOf(ratios, ratioName))
	fmt.Fprintf(b, "| %s |\n|%s\n", strings.Join(header, " | "), strings.Repeat("---|", len(header)))
	for _, row := range rows {
		cells := []string{row.Figure}
		for _, c := range configs {
			cell := reportOf(r).cell(row.Stat(c), row.Unit)
			if math.IsNaN(row.Stat(c).Value) && row.offNote != "" && !c.Kubelet("").Gate(node.EventedVolumeManager) {
				cell = row.offNote
			}
			cells = append(cells, cell)
		}
		for _, c := range ratios {
			cells = append(cells, row.Ratio(c))
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
	}
}

func (Standalone) notes(b *strings.Builder, r Result, rows []Row) {
	configs := r.configs()
	if len(r.lead()) > 1 {
		b.WriteString("\nEach value pools all rounds; in parentheses, the lowest and highest single round.")
	} else {
		b.WriteString("\nOne round: no spread across rounds.")
	}
	var exits, windows []string
	for _, c := range configs {
		exits = append(exits, fmt.Sprint(len(pooled(r.Modes(c), func(m Mode) []float64 { return m.ExitUnmount }))))
		windows = append(windows, list(pooled(r.Modes(c), kubeletCPU)))
	}
	if m := r.lead()[0]; len(m.ExitUnmount) > 0 {
		fmt.Fprintf(b, " The container-exit rows time pods with restartPolicy Never whose one container sleeps %v to %v and exits 0, nothing deleting them: "+
			"from the container's finishedAt (the runtime's) to /proc/self/mountinfo, read every %v, showing no mount under the pod's volumes directory; "+
			"pods (%s): %s.", exitMin, exitMax, time.Duration(m.ExitPollSeconds*float64(time.Second)), join(configs, " / "), strings.Join(exits, " / "))
	}
	switch ratios := ratioConfigs(configs); len(ratios) {
	case 0:
		b.WriteString("\n")
	case 1:
		fmt.Fprintf(b, " %s divides %s's value by gate on's (the other way round where more is better): above 1x, the gate on does better.\n", ratioName(ratios[0]), ratios[0])
	default:
		b.WriteString(" stock/on and off/on divide stock's and gate off's value by gate on's (the other way round where more is better): above 1x, the gate on does better.\n")
	}
	stock := slices.Contains(configs, Stock)
	if stock && slices.Contains(configs, GateOff) {
		var differ strings.Builder
		for _, row := range rows {
			if st, off := row.Stat(Stock), row.Stat(GateOff); row.StockDiffers() {
				fmt.Fprintf(&differ, "- **stock and gate off differ beyond the rounds' spread: %s**: stock %s, gate off %s; spread across rounds %s (stock), %s (gate off)\n",
					row.Figure, bench.Cell(st.Value, row.Unit), bench.Cell(off.Value, row.Unit), bench.Cell(st.Spread(), row.Unit), bench.Cell(off.Spread(), row.Unit))
			}
		}
		switch {
		case len(r.Stock) < 2 || len(r.Off) < 2:
			b.WriteString("\nStock against gate off: one round of either gives no spread across rounds to judge their difference by; run two rounds or more.\n")
		case differ.Len() == 0:
			b.WriteString("\nStock and gate off agree within the rounds' spread on every row both have.\n")
		default:
			b.WriteString("\n" + differ.String())
		}
	}
	fmt.Fprintf(b, "\nEach window, kubelet CPU-s/min (%s): %s\n", join(configs, " | "), strings.Join(windows, " | "))
	if stock && slices.ContainsFunc(configs, func(c Config) bool { return c != Stock }) {
		fmt.Fprintf(b, "\nStock is upstream's kubelet (%s), built from the release's tag without the series and configured without the EventedVolumeManager gate, which it does not know; "+
			"gate off and gate on are the series' kubelet (%s). Stock and gate off count no loop iterations or passes; upstream's loops run every 100 ms.\n",
			r.Stock[len(r.Stock)-1].KubeletVersion, r.lead()[len(r.lead())-1].KubeletVersion)
	} else if !stock {
		b.WriteString("\nThe gate-off kubelet is upstream's code, which counts no loop iterations; upstream's loops run every 100 ms.\n")
	}
	gatesNote(b, r, " ("+node.VolumesInUseNodeStatusUpdate+" acts only with an API server, which a standalone node has not)")
}

// gatesNote says which gates the configurations beyond gate on have.
func gatesNote(b *strings.Builder, r Result, nodeStatusNote string) {
	var notes []string
	for _, c := range r.configs() {
		k := c.Kubelet("")
		on := slices.DeleteFunc(k.GateNames(), func(name string) bool { return !k.Gate(name) })
		if len(on) < 2 { // gate off and gate on
			continue
		}
		note := ""
		if k.Gate(node.VolumesInUseNodeStatusUpdate) {
			note = nodeStatusNote
		}
		notes = append(notes, fmt.Sprintf("%s has %s on%s.", capitalized(string(c)), prose(on), note))
	}
	if len(notes) > 0 {
		fmt.Fprintf(b, "\n%s\n", strings.Join(notes, " "))
	}
}

func (Cluster) notes(b *strings.Builder, r Result, _ []Row) {
	configs := r.configs()
	each := func(of func(modes []Mode) string) string {
		return strings.Join(stringsOf(configs, func(c Config) string { return of(r.Modes(c)) }), " | ")
	}
	all := func(of samples) string { return each(func(modes []Mode) string { return list(pooled(modes, of)) }) }
	missed := func(of func(m Mode) int) string {
		return each(func(modes []Mode) string {
			n := 0
			for _, m := range modes {
				n += of(m)
			}
			return fmt.Sprint(n)
		})
	}
	p50s := func(scale float64, of func(Mode) []float64) string {
		return each(func(modes []Mode) string {
			return strings.Join(stringsOf(modes, func(m Mode) string { return fmt.Sprintf("%.2f", scale*bench.Median(of(m))) }), ", ")
		})
	}
	names := join(configs, " | ")
	fmt.Fprintf(b, "\nEach window, CPU-s/min (%s): kubelet %s; runtime %s; kube-apiserver %s.\n",
		names, all(kubeletCPU), all(runtimeCPU), all(perMinute(func(m Mode) []float64 { return m.APIServerCPU })))
	fmt.Fprintf(b, "Volume manager CPU-s/min per round (%s): %s.\n", names, all(vmCPU))
	fmt.Fprintf(b, "ConfigMap updates not in the pod's file within the timeout (%s): %s.\n",
		names, missed(func(m Mode) int { return m.ConfigMapUpdateMissed }))
	fmt.Fprintf(b, "Per round p50 (%s): configMap updated → pod file %s s; pod sync → volumes remounted %s ms (%s syncs with no remount logged).\n",
		names, p50s(1, func(m Mode) []float64 { return m.ConfigMapUpdate }), p50s(1000, func(m Mode) []float64 { return m.Remount }),
		missed(func(m Mode) int { return m.RemountMissed }))
	if rows := APIRequestRows(r); len(rows) > 0 {
		b.WriteString("\nThe kubelet's requests to kube-apiserver (its audit log, user system:node:<node>) a minute, in the idle windows and " +
			"while the CSI pods are added and deleted, and the most received in any 1 s (idle / churn):\n\n| request |")
		for _, column := range []string{"idle", "churn", "most in 1 s"} {
			for _, c := range configs {
				fmt.Fprintf(b, " %s, %s |", column, short(c))
			}
		}
		fmt.Fprintf(b, "\n|---|%s\n", strings.Repeat("---|", 3*len(configs)))
		rate := func(x float64) string { return fmt.Sprintf("%.1f", x) }
		for _, row := range rows {
			cells := slices.Concat([]string{row.Key}, stringsOf(row.Idle, rate), stringsOf(row.Churn, rate))
			for i := range configs {
				cells = append(cells, fmt.Sprintf("%d / %d", row.IdleMax[i], row.ChurnMax[i]))
			}
			fmt.Fprintf(b, "| %s |\n", strings.Join(cells, " | "))
		}
	}
	gatesNote(b, r, "")
}

func phaseTable(b *strings.Builder, r Result) {
	if !slices.ContainsFunc(r.configs(), func(c Config) bool {
		return slices.ContainsFunc(r.Modes(c), func(m Mode) bool { return len(m.DeletionPhases) > 0 })
	}) {
		return
	}
	type row struct {
		figure string
		of     samples
	}
	var rows []row
	for _, ph := range kubeletlog.DeletionPhases() {
		msg := ph.Message()
		if strings.HasSuffix(msg, " ") { // the kubelet's message goes on
			msg = strings.TrimSpace(msg) + " …"
		}
		rows = append(rows, row{fmt.Sprintf("%s (`%s`)", ph, msg), phase(ph)})
	}
	rows = append(rows,
		row{fmt.Sprintf("%s → %s, per pod", kubeletlog.TerminationComplete, kubeletlog.TearDownDone), func(m Mode) []float64 { return m.TerminatedToTearDown }},
		row{fmt.Sprintf("%s → %s, per pod", kubeletlog.TerminationComplete, kubeletlog.SyncTerminatedEnter), func(m Mode) []float64 { return m.TerminatedToSyncTerminated }})
	m := r.lead()[0]
	fmt.Fprintf(b, "\n#### Single-pod deletion, phase by phase (%gs apart, kubelet at --v=%d)\n\n", m.GapSeconds, m.ChurnVerbosity)
	b.WriteString("Time from a pod's manifest removed to the kubelet's log line of each phase, all rounds pooled (in parentheses, with two rounds or more, the lowest and highest single round); " +
		"a pod whose log lacks a line is left out of that row. The last two rows are differences within each pod.\n\n")
	configs := r.configs()
	b.WriteString("| from manifest removed to |")
	for _, c := range configs {
		fmt.Fprintf(b, " %s p50 | %s p99 |", c, c)
	}
	fmt.Fprintf(b, " pods %s |\n|---|%s\n", strings.Join(stringsOf(configs, short), " / "), strings.Repeat("---|", 2*len(configs)+1))
	for _, row := range rows {
		q := quantiles("", false, row.of)
		var cells, pods []string
		for _, c := range configs {
			cells = append(cells, statCell(statOf(r.Modes(c), q[0].value), "ms"), statCell(statOf(r.Modes(c), q[1].value), "ms"))
			pods = append(pods, fmt.Sprint(len(pooled(r.Modes(c), row.of))))
		}
		fmt.Fprintf(b, "| %s | %s | %s |\n", row.figure, strings.Join(cells, " | "), strings.Join(pods, " / "))
	}
}

func statCell(s Stat, unit string) string {
	if math.IsNaN(s.Value) || s.Rounds < 2 {
		return bench.Cell(s.Value, unit)
	}
	return fmt.Sprintf("%s (%s–%s)", bench.Cell(s.Value, unit), bench.Number(s.Min), bench.Number(s.Max))
}

func short(c Config) string       { return strings.TrimPrefix(string(c), "gate ") }
func capitalized(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// prose joins words as a sentence lists them: "a", "a and b", "a, b and c".
func prose(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

func stringsOf[T any](xs []T, f func(T) string) []string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = f(x)
	}
	return s
}

func join(cs []Config, sep string) string { return strings.Join(stringsOf(cs, Config.String), sep) }

func list(xs []float64) string {
	return strings.Join(stringsOf(xs, func(x float64) string { return fmt.Sprintf("%.2f", x) }), ", ")
}

func shortLoop(loop string) string {
	return strings.Replace(loop, "desired_state_of_world_populator", "populator", 1)
}

func formatCounts[V int | float64](m map[string]V) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %.0f", k, float64(m[k])))
	}
	return strings.Join(parts, ", ")
}

var colors = map[Config]color.Color{Stock: bench.StockColor, GateOff: bench.OffColor, GateOn: bench.OnColor,
	AllGates: bench.AllGatesColor, NodeStatusGate: bench.NodeStatusColor}

// Charts writes the single pods' mount and unmount CDFs into dir.
func Charts(r Result, dir string) ([]string, error) {
	titles, mount, unmount := reportOf(r).charts(r)
	files := []string{"mount-latency-cdf.png", "unmount-latency-cdf.png"}
	if err := bench.CDFChart(filepath.Join(dir, files[0]), titles[0], "milliseconds (log scale)", mount...); err != nil {
		return nil, err
	}
	return files, bench.CDFChart(filepath.Join(dir, files[1]), titles[1], "milliseconds (log scale)", unmount...)
}

func (Standalone) charts(r Result) (titles []string, mount, unmount []bench.Series) {
	for _, c := range r.configs() {
		var dash []vg.Length // stock dashed over the others: it often lies on gate off
		if c == Stock {
			dash = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		mount = append(mount, bench.Series{Name: string(c), Seconds: pooled(r.Modes(c), func(m Mode) []float64 { return m.Mount }), Color: colors[c], Dashes: dash})
		unmount = append(unmount, bench.Series{Name: string(c), Seconds: pooled(r.Modes(c), func(m Mode) []float64 { return m.UnmountEndToEnd }), Color: colors[c], Dashes: dash})
	}
	return []string{"Real node: volume-ready wait of single pods (kubelet log)", "Real node: manifest removed → all volumes unmounted (kubelet log)"}, mount, unmount
}

func (Cluster) charts(r Result) (titles []string, mount, unmount []bench.Series) {
	for _, c := range r.configs() {
		for i, kind := range ClusterPodKinds {
			if t := pooledKind(r.Modes(c), kind.Key); t != nil {
				dash := [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}}[i%3]
				mount = append(mount, bench.Series{Name: kind.Key + " " + string(c), Seconds: t.MountEndToEnd, Color: colors[c], Dashes: dash})
				unmount = append(unmount, bench.Series{Name: kind.Key + " " + string(c), Seconds: t.UnmountEndToEnd, Color: colors[c], Dashes: dash})
			}
		}
	}
	return []string{"Cluster node: pod created through the API → all volumes mounted", "Cluster node: pod deleted through the API → all volumes unmounted"}, mount, unmount
}

func exitStepFigures() []figure {
	var fs []figure
	for _, step := range ExitSteps {
		fs = append(fs, quantiles("  exit step: "+step.Name, true, func(m Mode) []float64 { return m.ExitSteps[step.Key] })...)
	}
	return fs
}

func crashLoopFigures() []figure {
	perMin := func(of func(c *CrashLoopCost) float64) func(modes []Mode) float64 {
		return median(func(m Mode) []float64 {
			if m.CrashLoop == nil || m.CrashLoop.WindowSeconds <= 0 {
				return nil
			}
			return []float64{60 * of(m.CrashLoop) / m.CrashLoop.WindowSeconds}
		}, 1)
	}
	return []figure{
		{name: "crash-looping pods: containers started (median of rounds)", unit: "/min", optional: true,
			value: perMin(func(c *CrashLoopCost) float64 { return c.Restarts })},
		{name: "crash-looping pods: single-pod relists (median of rounds)", unit: "/min", lowerWins: true, optional: true,
			value: perMin(func(c *CrashLoopCost) float64 { return c.PodRelists })},
		{name: "crash-looping pods: kubelet CPU (median of rounds)", unit: "CPU-s/min", lowerWins: true, optional: true,
			value: perMin(func(c *CrashLoopCost) float64 { return c.KubeletCPU })},
	}
}

// Size is one node size of a scale run.
type Size struct {
	Pods   int
	Result Result
}

func scaleFigures(runtime string) []figure {
	fs := []figure{
		{name: "idle volume manager CPU (pprof)", unit: "CPU-s/min", value: median(vmCPU, 1)},
		{name: "idle kubelet CPU (median of windows)", unit: "CPU-s/min", value: median(kubeletCPU, 1)},
		{name: "idle " + runtime + " CPU (median of windows)", unit: "CPU-s/min", value: median(runtimeCPU, 1)},
	}
	// Gate off, upstream's loops count no passes: NaN.
	for _, loop := range []string{loops[1], loops[0]} {
		for _, kind := range []string{"full", "partial"} {
			fs = append(fs, figure{name: fmt.Sprintf("idle %s %s passes", shortLoop(loop), kind), unit: "/min",
				value: func(modes []Mode) float64 { return idleRate(modes, passes, loop+"/"+kind) }})
		}
	}
	return slices.Concat(fs,
		quantiles("single-pod mount wait", false, func(m Mode) []float64 { return m.Mount }),
		quantiles("manifest removed → all volumes unmounted", false, phase(kubeletlog.VolumesUnmounted)),
		memoryFigures())
}

// ScaleMarkdown renders the scale table of sizes and how the idle CPU grew.
func ScaleMarkdown(sizes []Size) string {
	sizes = slices.SortedFunc(slices.Values(sizes), func(a, b Size) int { return cmp.Compare(a.Pods, b.Pods) })
	configs := slices.DeleteFunc(slices.Clone(Configs), func(c Config) bool {
		return !slices.ContainsFunc(sizes, func(s Size) bool { return len(s.Result.Modes(c)) > 0 })
	})
	var b strings.Builder
	scaleRuns(&b, sizes, configs)
	scaleTable(&b, sizes, configs)
	var unpassed []string
	for _, c := range configs {
		if !c.Kubelet("").Gate(node.EventedVolumeManager) {
			unpassed = append(unpassed, string(c))
		}
	}
	if len(unpassed) > 0 {
		fmt.Fprintf(&b, "\n%s, the loops count no passes: upstream's populator and reconciler each run every 100 ms, 600 passes a minute, all full.\n",
			capitalized(prose(unpassed)))
	}
	if len(sizes) > 1 {
		scaleGrowth(&b, sizes, configs)
	}
	fmt.Fprintf(&b, "\nThe runtime's idle CPU per window (%s), to judge its spread:\n\n", join(configs, " | "))
	for _, s := range sizes {
		windows := stringsOf(configs, func(c Config) string {
			if modes := s.Result.Modes(c); len(modes) > 0 {
				return list(pooled(modes, runtimeCPU))
			}
			return "—"
		})
		fmt.Fprintf(&b, "- %d pods: %s\n", s.Pods, strings.Join(windows, " | "))
	}
	return b.String()
}

func scaleRuns(b *strings.Builder, sizes []Size, configs []Config) {
	pods, what := stringsOf(sizes, func(s Size) string { return fmt.Sprint(s.Pods) }), join(configs, ", ")
	switch {
	case slices.Equal(configs, []Config{GateOff, GateOn}):
		what = "gate off against gate on"
	case slices.Equal(configs, []Config{Stock, GateOff, GateOn}):
		what = "upstream's kubelet (stock) and the series with the gate off and on"
	}
	fmt.Fprintf(b, "### Real node at %s pods × 4 volumes, %s\n\n", strings.Join(pods, ", "), what)
	for _, s := range sizes {
		m := s.Result.lead()[0]
		per := "per gate value"
		if cs := s.Result.configs(); !slices.Equal(cs, []Config{GateOff, GateOn}) {
			per = fmt.Sprintf("per configuration (%s)", join(cs, ", "))
		}
		fmt.Fprintf(b, "- %d pods: %d round(s) %s on %s, %d idle window(s) of %.0f s and a %.0f s profile per round, %d single pods per round.\n",
			s.Pods, len(s.Result.lead()), per, m.Runtime, len(m.KubeletCPU), m.WindowSeconds, m.ProfileSeconds, len(m.Mount))
	}
}

func scaleTable(b *strings.Builder, sizes []Size, configs []Config) {
	ratios := ratioConfigs(configs)
	columns := append(stringsOf(configs, short), stringsOf(ratios, ratioName)...)
	b.WriteString("\n| figure |")
	for _, s := range sizes {
		for _, c := range columns {
			if !strings.Contains(c, "/") {
				c = fmt.Sprintf("%d %s", s.Pods, c)
			}
			fmt.Fprintf(b, " %s |", c)
		}
	}
	fmt.Fprintf(b, "\n|---|%s\n", strings.Repeat("---|", len(sizes)*len(columns)))
	for _, f := range scaleFigures(sizes[0].Result.lead()[0].RuntimeName()) {
		if f.optional && !slices.ContainsFunc(sizes, func(s Size) bool {
			return slices.ContainsFunc(Configs, func(c Config) bool { return !math.IsNaN(f.value(s.Result.Modes(c))) })
		}) {
			continue
		}
		fmt.Fprintf(b, "| %s (%s) |", f.name, f.unit)
		for _, s := range sizes {
			for _, c := range configs {
				cell := "—"
				if modes := s.Result.Modes(c); len(modes) > 0 {
					cell = bench.Number(f.value(modes))
				}
				fmt.Fprintf(b, " %s |", cell)
			}
			for _, c := range ratios {
				ratio := "—"
				if len(s.Result.Modes(c)) > 0 && len(s.Result.On) > 0 {
					ratio = bench.Ratio(f.value(s.Result.Modes(c)), f.value(s.Result.On), true)
				}
				fmt.Fprintf(b, " %s |", ratio)
			}
		}
		b.WriteString("\n")
	}
}

func scaleGrowth(b *strings.Builder, sizes []Size, configs []Config) {
	first := sizes[0]
	b.WriteString("\nGrowth of the idle CPU from the smallest size, and in brackets per pod: the growth over the pod ratio (1.00x is linear in pods):\n\n| pods | pod ratio | process |")
	for _, c := range configs {
		fmt.Fprintf(b, " %s growth |", c)
	}
	fmt.Fprintf(b, "\n|---|---|---|%s\n", strings.Repeat("---|", len(configs)))
	for _, s := range sizes[1:] {
		ratio := float64(s.Pods) / float64(first.Pods)
		for _, p := range []struct {
			name string
			of   samples
		}{{"volume manager", vmCPU}, {"kubelet", kubeletCPU}} {
			fmt.Fprintf(b, "| %d | %.2fx | %s |", s.Pods, ratio, p.name)
			for _, c := range configs {
				if len(s.Result.Modes(c)) == 0 || len(first.Result.Modes(c)) == 0 {
					b.WriteString(" — |")
					continue
				}
				cpu := func(r Result) float64 { return bench.Median(pooled(r.Modes(c), p.of)) }
				growth := cpu(s.Result) / cpu(first.Result)
				fmt.Fprintf(b, " %.2fx (%.2fx) |", growth, growth/ratio)
			}
			b.WriteString("\n")
		}
	}
}
