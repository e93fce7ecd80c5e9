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
	"encoding/json"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"evented-volume-manager/pkg/bench"
)

// LoadCluster reads a cluster benchmark's results.json.
func LoadCluster(path string) (ClusterResult, error) {
	var r ClusterResult
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if len(r.Off) == 0 || len(r.On) == 0 {
		return r, fmt.Errorf("%s has no complete round (gate off and on)", path)
	}
	return r, nil
}

// Save writes r as JSON.
func (r ClusterResult) Save(path string) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// clusterMerged pools one gate value's rounds.
type clusterMerged struct {
	kubelet, runtime, apiserver, kcm []float64 // CPU-s per minute, per window
	vmPerMin                         []float64 // per round
	passes                           map[string][]float64
	kinds                            map[string]*KindTimes
	configMap                        []float64
	configMapMissed                  int
	remount                          []float64
	remountMissed                    int
	// apiSeconds, apiCount and apiMax pool the API requests by phase and
	// key: seconds and counts add up, the most in 1 s is the rounds' most.
	apiSeconds       map[string]float64
	apiCount, apiMax map[string]map[string]int
}

func mergeCluster(modes []ClusterMode) clusterMerged {
	c := clusterMerged{passes: map[string][]float64{}, kinds: map[string]*KindTimes{},
		apiSeconds: map[string]float64{}, apiCount: map[string]map[string]int{}, apiMax: map[string]map[string]int{}}
	perMin := func(xs []float64, window float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = x * 60 / window
		}
		return out
	}
	for _, m := range modes {
		c.kubelet = append(c.kubelet, perMin(m.KubeletCPU, m.WindowSeconds)...)
		c.runtime = append(c.runtime, perMin(m.RuntimeCPU, m.WindowSeconds)...)
		c.apiserver = append(c.apiserver, perMin(m.APIServerCPU, m.WindowSeconds)...)
		c.kcm = append(c.kcm, perMin(m.ControllerManagerCPU, m.WindowSeconds)...)
		if m.ProfileSeconds > 0 {
			c.vmPerMin = append(c.vmPerMin, m.VolumeManagerCPUSeconds*60/m.ProfileSeconds)
		}
		idle := m.WindowSeconds * float64(len(m.KubeletCPU))
		for k, v := range m.Passes {
			if idle > 0 {
				c.passes[k] = append(c.passes[k], v*60/idle)
			}
		}
		for key, t := range m.Kinds {
			p := c.kinds[key]
			if p == nil {
				p = &KindTimes{}
				c.kinds[key] = p
			}
			p.Mount = append(p.Mount, t.Mount...)
			p.MountEndToEnd = append(p.MountEndToEnd, t.MountEndToEnd...)
			p.SetUpToMounted = append(p.SetUpToMounted, t.SetUpToMounted...)
			p.AttachedToMounted = append(p.AttachedToMounted, t.AttachedToMounted...)
			p.ListedToMounted = append(p.ListedToMounted, t.ListedToMounted...)
			p.UnmountEndToEnd = append(p.UnmountEndToEnd, t.UnmountEndToEnd...)
			p.DetachEndToEnd = append(p.DetachEndToEnd, t.DetachEndToEnd...)
		}
		c.configMap = append(c.configMap, m.ConfigMapUpdate...)
		c.configMapMissed += m.ConfigMapUpdateMissed
		c.remount = append(c.remount, m.Remount...)
		c.remountMissed += m.RemountMissed
		for phase, a := range m.APIRequests {
			if c.apiCount[phase] == nil {
				c.apiCount[phase], c.apiMax[phase] = map[string]int{}, map[string]int{}
			}
			c.apiSeconds[phase] += a.Seconds
			for key, v := range a.Count {
				c.apiCount[phase][key] += v
				c.apiMax[phase][key] = max(c.apiMax[phase][key], a.MaxInSecond[key])
			}
		}
	}
	return c
}

// ClusterRows are the comparison table's lines: idle figures are medians
// over all windows (CPU) or rounds (passes, profile); latencies pool every
// sample.
func ClusterRows(r ClusterResult) []bench.Row {
	off, on := mergeCluster(r.Off), mergeCluster(r.On)
	med := func(xs []float64) float64 { return bench.Quantile(xs, 0.5) }
	ms := func(xs []float64, q float64) float64 { return 1000 * bench.Quantile(xs, q) }
	rows := []bench.Row{
		{Figure: "idle volume manager CPU (pprof)", Off: med(off.vmPerMin), On: med(on.vmPerMin), Unit: "CPU-s/min", LowerWins: true},
		{Figure: "idle kubelet CPU", Off: med(off.kubelet), On: med(on.kubelet), Unit: "CPU-s/min", LowerWins: true},
		{Figure: "idle container runtime CPU", Off: med(off.runtime), On: med(on.runtime), Unit: "CPU-s/min", LowerWins: true},
		{Figure: "idle kube-apiserver CPU", Off: med(off.apiserver), On: med(on.apiserver), Unit: "CPU-s/min", LowerWins: true},
		{Figure: "idle kube-controller-manager CPU", Off: med(off.kcm), On: med(on.kcm), Unit: "CPU-s/min", LowerWins: true},
	}
	for _, loop := range loops {
		for _, kind := range []string{"full", "partial"} {
			key := loop + "/" + kind
			rows = append(rows, bench.Row{Figure: fmt.Sprintf("idle %s passes, %s", shortLoop(loop), kind),
				Off: math.NaN(), On: med(on.passes[key]), Unit: "/min", LowerWins: true})
		}
	}
	for _, kind := range ClusterPodKinds {
		o, n := off.kinds[kind.Key], on.kinds[kind.Key]
		if o == nil || n == nil {
			continue
		}
		add := func(figure string, xo, xn []float64) {
			if len(xo) == 0 && len(xn) == 0 {
				return
			}
			rows = append(rows,
				bench.Row{Figure: kind.Key + ": " + figure + " p50", Off: ms(xo, 0.5), On: ms(xn, 0.5), Unit: "ms", LowerWins: true},
				bench.Row{Figure: kind.Key + ": " + figure + " p99", Off: ms(xo, 0.99), On: ms(xn, 0.99), Unit: "ms", LowerWins: true})
		}
		add("volume-ready wait", o.Mount, n.Mount)
		add("created → mounted", o.MountEndToEnd, n.MountEndToEnd)
		add("last volume set up → wait ends", o.SetUpToMounted, n.SetUpToMounted)
		add("attached → mounted", o.AttachedToMounted, n.AttachedToMounted)
		add("node status lists it → mounted", o.ListedToMounted, n.ListedToMounted)
		add("deleted → unmounted", o.UnmountEndToEnd, n.UnmountEndToEnd)
		add("deleted → detached", o.DetachEndToEnd, n.DetachEndToEnd)
	}
	rows = append(rows,
		bench.Row{Figure: "configMap updated → pod file p50", Off: ms(off.configMap, 0.5), On: ms(on.configMap, 0.5), Unit: "ms", LowerWins: true},
		bench.Row{Figure: "configMap updated → pod file p99", Off: ms(off.configMap, 0.99), On: ms(on.configMap, 0.99), Unit: "ms", LowerWins: true},
		bench.Row{Figure: "pod sync → volumes remounted p50", Off: ms(off.remount, 0.5), On: ms(on.remount, 0.5), Unit: "ms", LowerWins: true},
		bench.Row{Figure: "pod sync → volumes remounted p99", Off: ms(off.remount, 0.99), On: ms(on.remount, 0.99), Unit: "ms", LowerWins: true},
	)
	return rows
}

// APIRequestRow is one line of the kubelet's API requests table: per gate
// value (0 off, 1 on), requests a minute in the idle and churn phases, and
// the most received in any 1 s of each.
type APIRequestRow struct {
	Key               string
	Idle, Churn       [2]float64
	IdleMax, ChurnMax [2]int
}

// APIRequestRows are the kubelet's requests by verb and resource, sorted by
// resource, then verb.
func APIRequestRows(r ClusterResult) []APIRequestRow {
	merged := [2]clusterMerged{mergeCluster(r.Off), mergeCluster(r.On)}
	byKey := map[string]*APIRequestRow{}
	for g, c := range merged {
		for phase, counts := range c.apiCount {
			for key, v := range counts {
				row := byKey[key]
				if row == nil {
					row = &APIRequestRow{Key: key}
					byKey[key] = row
				}
				perMin := float64(v) * 60 / c.apiSeconds[phase]
				if phase == PhaseIdle {
					row.Idle[g], row.IdleMax[g] = perMin, c.apiMax[phase][key]
				} else {
					row.Churn[g], row.ChurnMax[g] = perMin, c.apiMax[phase][key]
				}
			}
		}
	}
	rows := make([]APIRequestRow, 0, len(byKey))
	for _, row := range byKey {
		rows = append(rows, *row)
	}
	slices.SortFunc(rows, func(a, b APIRequestRow) int {
		va, ra, _ := strings.Cut(a.Key, " ")
		vb, rb, _ := strings.Cut(b.Key, " ")
		return cmp.Or(strings.Compare(ra, rb), strings.Compare(va, vb))
	})
	return rows
}

func shortLoop(loop string) string {
	if loop == "desired_state_of_world_populator" {
		return "populator"
	}
	return loop
}

// ClusterMarkdown is the cluster benchmark's report.
func ClusterMarkdown(r ClusterResult) string {
	var b strings.Builder
	m := r.On[0]
	fmt.Fprintf(&b, "### Cluster node: %d API pods × %d volumes (projected token, configMap, secret, emptyDir), %s and runc\n\n",
		m.Pods, m.Volumes, m.Runtime)
	fmt.Fprintf(&b, "etcd, kube-apiserver and kube-controller-manager (attach/detach, PV binder, service accounts, root CA) from the tree; "+
		"the kubelet registered as a node at --v=3; the project's CSI driver (attachRequired) and attacher. "+
		"%d round(s) per gate value, %s; %d idle window(s) of %.0f s and a %.0f s profile per round; "+
		"%d single pods of each kind per round, %gs apart; %d configMap updates per round, made with the kubelet at --v=%d.\n\n",
		len(r.On), orderNote(r.Orders), len(m.KubeletCPU), m.WindowSeconds, m.ProfileSeconds, singlesOf(m), m.GapSeconds,
		len(m.ConfigMapUpdate)+m.ConfigMapUpdateMissed, remountVerbosity)
	b.WriteString("| figure | gate off | gate on | off/on |\n|---|---|---|---|\n")
	for _, row := range ClusterRows(r) {
		offCell := cell(row.Off, row.Unit)
		if math.IsNaN(row.Off) && strings.Contains(row.Figure, "passes, full") {
			offCell = "600 (polls every 100 ms)"
		} else if math.IsNaN(row.Off) && strings.Contains(row.Figure, "passes, partial") {
			offCell = "0 (every poll is full)"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", row.Figure, offCell, cell(row.On, row.Unit), row.Ratio())
	}
	off, on := mergeCluster(r.Off), mergeCluster(r.On)
	fmt.Fprintf(&b, "\nEach window, CPU-s/min (gate off | gate on): kubelet %s | %s; runtime %s | %s; kube-apiserver %s | %s.\n",
		list(off.kubelet), list(on.kubelet), list(off.runtime), list(on.runtime), list(off.apiserver), list(on.apiserver))
	fmt.Fprintf(&b, "Volume manager CPU-s/min per round (gate off | gate on): %s | %s.\n", list(off.vmPerMin), list(on.vmPerMin))
	fmt.Fprintf(&b, "ConfigMap updates not in the pod's file within the timeout (gate off | gate on): %d | %d.\n",
		off.configMapMissed, on.configMapMissed)
	p50s := func(modes []ClusterMode, get func(ClusterMode) []float64) string {
		xs := make([]float64, len(modes))
		for i, m := range modes {
			xs[i] = Median(get(m))
		}
		return list(xs)
	}
	configMap := func(m ClusterMode) []float64 { return m.ConfigMapUpdate }
	remount := func(m ClusterMode) []float64 {
		ms := slices.Clone(m.Remount)
		for i := range ms {
			ms[i] *= 1000
		}
		return ms
	}
	fmt.Fprintf(&b, "Per round p50 (gate off | gate on): configMap updated → pod file %s | %s s; pod sync → volumes remounted %s | %s ms "+
		"(%d | %d syncs with no remount logged).\n", p50s(r.Off, configMap), p50s(r.On, configMap),
		p50s(r.Off, remount), p50s(r.On, remount), off.remountMissed, on.remountMissed)
	if rows := APIRequestRows(r); len(rows) > 0 {
		b.WriteString("\nThe kubelet's requests to kube-apiserver (its audit log, user system:node:<node>) a minute, in the idle windows and " +
			"while the CSI pods are added and deleted, and the most received in any 1 s (idle / churn):\n\n" +
			"| request | idle, off | idle, on | churn, off | churn, on | most in 1 s, off | most in 1 s, on |\n|---|---|---|---|---|---|---|\n")
		for _, row := range rows {
			fmt.Fprintf(&b, "| %s | %.1f | %.1f | %.1f | %.1f | %d / %d | %d / %d |\n", row.Key, row.Idle[0], row.Idle[1],
				row.Churn[0], row.Churn[1], row.IdleMax[0], row.ChurnMax[0], row.IdleMax[1], row.ChurnMax[1])
		}
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
	if t := r.On[len(r.On)-1].Triggers; len(t) > 0 {
		fmt.Fprintf(&b, "\nGate on, loop iterations by trigger over the last round: %s\n", formatCounts(t))
	}
	return b.String()
}

// orderNote says which gate value ran first in each round.
func orderNote(orders [][]bool) string {
	if len(orders) == 0 {
		return "gate off first"
	}
	parts := make([]string, len(orders))
	for i, o := range orders {
		parts[i] = fmt.Sprintf("round %d gate %s first", i+1, map[bool]string{false: "off", true: "on"}[o[0]])
	}
	return strings.Join(parts, ", ")
}

func singlesOf(m ClusterMode) int {
	for _, k := range ClusterPodKinds {
		if t := m.Kinds[k.Key]; t != nil {
			return len(t.MountEndToEnd)
		}
	}
	return 0
}

func formatCounts[V int | float64](m map[string]V) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %.0f", k, float64(m[k]))
	}
	return strings.Join(parts, ", ")
}

// ClusterCharts writes the cluster benchmark's charts as PNGs into dir: the
// idle CPU of each process, and the created → mounted and deleted →
// unmounted CDFs by pod kind.
func ClusterCharts(r ClusterResult, dir string) ([]string, error) {
	off, on := mergeCluster(r.Off), mergeCluster(r.On)
	var files []string

	p := plot.New()
	p.Title.Text = fmt.Sprintf("Cluster node: idle CPU, %d API pods (median over windows)", r.On[0].Pods)
	p.Y.Label.Text = "CPU-seconds per minute"
	med := func(xs []float64) float64 { return bench.Quantile(xs, 0.5) }
	names := []string{"volume manager", "kubelet", "runtime", "kube-apiserver", "kube-controller-manager"}
	offV := plotter.Values{med(off.vmPerMin), med(off.kubelet), med(off.runtime), med(off.apiserver), med(off.kcm)}
	onV := plotter.Values{med(on.vmPerMin), med(on.kubelet), med(on.runtime), med(on.apiserver), med(on.kcm)}
	w := vg.Points(18)
	for i, s := range []struct {
		name string
		v    plotter.Values
		col  color.Color
	}{{"gate off", offV, bench.OffColor}, {"gate on", onV, bench.OnColor}} {
		for j := range s.v {
			if math.IsNaN(s.v[j]) {
				s.v[j] = 0
			}
		}
		bars, err := plotter.NewBarChart(s.v, w)
		if err != nil {
			return nil, err
		}
		bars.Color = s.col
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(2*i-1) * w / 2
		p.Add(bars)
		p.Legend.Add(s.name, bars)
	}
	p.NominalX(names...)
	p.Legend.Top = true
	f := filepath.Join(dir, "cluster-idle-cpu.png")
	if err := p.Save(8*vg.Inch, 4.5*vg.Inch, f); err != nil {
		return nil, err
	}
	files = append(files, f)

	for _, c := range []struct {
		file, title, x string
		get            func(*KindTimes) []float64
	}{
		{"cluster-mount-cdf.png", "Cluster node: pod created through the API → all volumes mounted", "milliseconds (log scale)",
			func(t *KindTimes) []float64 { return t.MountEndToEnd }},
		{"cluster-unmount-cdf.png", "Cluster node: pod deleted through the API → all volumes unmounted", "milliseconds (log scale)",
			func(t *KindTimes) []float64 { return t.UnmountEndToEnd }},
	} {
		p := plot.New()
		p.Title.Text = c.title
		p.X.Label.Text = c.x
		p.Y.Label.Text = "fraction of pods"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Add(plotter.NewGrid())
		var slowest float64
		for i, kind := range ClusterPodKinds {
			for _, s := range []struct {
				name string
				m    clusterMerged
				col  color.Color
			}{{"off", off, bench.OffColor}, {"on", on, bench.OnColor}} {
				t := s.m.kinds[kind.Key]
				if t == nil || len(c.get(t)) == 0 {
					continue
				}
				for _, x := range c.get(t) {
					slowest = max(slowest, 1000*x)
				}
				line, err := plotter.NewLine(bench.CDF(c.get(t)))
				if err != nil {
					return nil, err
				}
				line.Color = s.col
				line.Width = vg.Points(1.5)
				line.Dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}}[i%3]
				p.Add(line)
				p.Legend.Add(kind.Key+" gate "+s.name, line)
			}
		}
		if slowest > 0 {
			p.X.Max = 2 * slowest
		}
		p.Y.Min, p.Y.Max = 0, 1
		p.Legend.Top = true
		p.Legend.Left = true
		p.Legend.ThumbnailWidth = vg.Points(30)
		f := filepath.Join(dir, c.file)
		if err := p.Save(8*vg.Inch, 4.5*vg.Inch, f); err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}
