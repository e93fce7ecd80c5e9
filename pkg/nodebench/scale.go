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
	// With the EventedVolumeManager gate off, upstream's loops count no
	// passes: NaN.
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

// ScaleMarkdown renders the scale table: every figure at every size, in a
// column for each configuration any size ran ("—" at a size that did not),
// then stock/on and off/on, then how the idle volume manager CPU grew
// against the pods.
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
		if !c.Gate() {
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

// scaleRuns writes the scale table's heading and how each size ran.
func scaleRuns(b *strings.Builder, sizes []Size, configs []Config) {
	pods := make([]string, len(sizes))
	for i, s := range sizes {
		pods[i] = fmt.Sprint(s.Pods)
	}
	fmt.Fprintf(b, "### Real node at %s pods × 4 volumes, %s\n\n", strings.Join(pods, ", "), scaleWhat(configs))
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

// scaleTable writes the table of figures, each size's configurations and
// ratios side by side.
func scaleTable(b *strings.Builder, sizes []Size, configs []Config) {
	ratios := ratioConfigs(configs)
	var columns []string
	for _, c := range configs {
		columns = append(columns, short(c))
	}
	for _, c := range ratios {
		columns = append(columns, ratioName(c))
	}
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

// scaleGrowth writes how the idle CPU grew from the smallest size.
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

// scaleWhat names the configurations of a scale table in its heading.
func scaleWhat(configs []Config) string {
	switch {
	case slices.Equal(configs, []Config{GateOff, GateOn}):
		return "gate off against gate on"
	case slices.Equal(configs, []Config{Stock, GateOff, GateOn}):
		return "upstream's kubelet (stock) and the series with the gate off and on"
	}
	return join(configs, ", ")
}
