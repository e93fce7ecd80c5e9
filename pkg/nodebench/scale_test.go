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
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestScaleReport(t *testing.T) {
	mode := func(gate bool, pods int, vm, runtime float64) Mode {
		m := Mode{
			Gate: gate, Pods: pods, Volumes: 4, WindowSeconds: 60,
			KubeletCPU: []float64{5, 5}, RuntimeCPU: []float64{runtime, runtime + 1},
			ProfileSeconds: 60, ProfileCPUSeconds: 4, VolumeManagerCPUSeconds: vm,
			Mount: []float64{0.3, 0.301}, GapSeconds: 1,
		}
		if gate {
			m.Passes = map[string]float64{"reconciler/full": 12, "reconciler/partial": 40}
		}
		return m
	}
	sizes := []Size{
		// Out of order: the report sorts them.
		{Pods: 250, Result: Result{Off: []Mode{mode(false, 250, 3, 16)}, On: []Mode{mode(true, 250, 0.25, 15)}}},
		{Pods: 110, Result: Result{Off: []Mode{mode(false, 110, 1.2, 8)}, On: []Mode{mode(true, 110, 0.1, 8)}}},
	}
	md := ScaleMarkdown(sizes)
	for _, want := range []string{
		"| figure | 110 off | 110 on | off/on | 250 off | 250 on | off/on |",
		"| idle volume manager CPU (pprof) (CPU-s/min) | 1.20 | 0.10 | 12.0x | 3.00 | 0.25 | 12.0x |",
		// 12 full passes over two 60 s windows.
		"| idle reconciler full passes (/min) | n/a | 6.00 | n/a |",
		"| 250 | 2.27x | 2.50x | 2.50x |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("scale report lacks %q:\n%s", want, md)
		}
	}
	file := filepath.Join(t.TempDir(), "vm.png")
	if err := ScaleChart(sizes, file); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(file); err != nil || st.Size() == 0 {
		t.Fatalf("chart not written: %v", err)
	}
}

func TestScaleReportStock(t *testing.T) {
	mode := func(c Config, pods int, vm float64) Mode {
		m := Mode{
			Gate: c.Gate(), Stock: c == Stock, Pods: pods, Volumes: 4, WindowSeconds: 60,
			KubeletCPU: []float64{5, 5}, RuntimeCPU: []float64{8, 9},
			ProfileSeconds: 60, ProfileCPUSeconds: 4, VolumeManagerCPUSeconds: vm,
			Mount: []float64{0.3, 0.301}, GapSeconds: 1,
		}
		if c == GateOn {
			m.Passes = map[string]float64{"reconciler/full": 12, "reconciler/partial": 40}
		}
		return m
	}
	size := func(pods int, stock bool, vmStock, vmOff, vmOn float64) Size {
		r := Result{Off: []Mode{mode(GateOff, pods, vmOff)}, On: []Mode{mode(GateOn, pods, vmOn)}}
		if stock {
			r.Stock = []Mode{mode(Stock, pods, vmStock)}
		}
		return Size{Pods: pods, Result: r}
	}
	tests := []struct {
		name           string
		sizes          []Size
		want, unwanted []string
	}{{
		name:  "stock at every size",
		sizes: []Size{size(250, true, 2.5, 3, 0.25), size(110, true, 1, 1.2, 0.1)},
		want: []string{
			"upstream's kubelet (stock) and the series with the gate off and on",
			"- 110 pods: 1 round(s) per configuration (stock, gate off, gate on) on containerd,",
			"| figure | 110 stock | 110 off | 110 on | stock/on | off/on | 250 stock | 250 off | 250 on | stock/on | off/on |",
			"| idle volume manager CPU (pprof) (CPU-s/min) | 1.00 | 1.20 | 0.10 | 10.0x | 12.0x | 2.50 | 3.00 | 0.25 | 10.0x | 12.0x |",
			"| idle reconciler full passes (/min) | n/a | n/a | 6.00 | n/a | n/a |",
			"| pods | pod ratio | stock growth | gate off growth | gate on growth |",
			"| 250 | 2.27x | 2.50x | 2.50x | 2.50x |",
			"(stock | gate off | gate on)",
			"- 110 pods: 8.00, 9.00 | 8.00, 9.00 | 8.00, 9.00",
			"Stock and gate off, the loops count no passes",
		},
	}, {
		name:  "stock at one size only",
		sizes: []Size{size(110, true, 1, 1.2, 0.1), size(250, false, 0, 3, 0.25)},
		want: []string{
			"| idle volume manager CPU (pprof) (CPU-s/min) | 1.00 | 1.20 | 0.10 | 10.0x | 12.0x | — | 3.00 | 0.25 | — | 12.0x |",
			"- 250 pods: 1 round(s) per gate value on containerd,",
			"| 250 | 2.27x | — | 2.50x | 2.50x |",
			"- 250 pods: — | 8.00, 9.00 | 8.00, 9.00",
		},
	}, {
		name:     "no stock",
		sizes:    []Size{size(110, false, 0, 1.2, 0.1), size(250, false, 0, 3, 0.25)},
		want:     []string{"| figure | 110 off | 110 on | off/on | 250 off | 250 on | off/on |", "| 250 | 2.27x | 2.50x | 2.50x |"},
		unwanted: []string{"stock", "—"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			md := ScaleMarkdown(tc.sizes)
			for _, want := range tc.want {
				if !strings.Contains(md, want) {
					t.Errorf("scale report lacks %q:\n%s", want, md)
				}
			}
			for _, unwanted := range tc.unwanted {
				if strings.Contains(md, unwanted) {
					t.Errorf("scale report has %q:\n%s", unwanted, md)
				}
			}
			if err := ScaleChart(tc.sizes, filepath.Join(t.TempDir(), "vm.png")); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestCommittedScaleResults renders the scale runs the project keeps, all
// from before the stock configuration, as the scale command renders them.
func TestCommittedScaleResults(t *testing.T) {
	root := filepath.Join("..", "..", "results", "node-bench")
	paths, err := filepath.Glob(filepath.Join(root, "*", "pods-*", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string][]Size{}
	for _, path := range paths {
		var pods int
		if _, err := fmt.Sscanf(filepath.Base(filepath.Dir(path)), "pods-%d", &pods); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		r, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		run := filepath.Dir(filepath.Dir(path))
		runs[run] = append(runs[run], Size{Pods: pods, Result: r})
	}
	if len(runs) == 0 {
		t.Fatalf("no scale runs under %s", root)
	}
	for run, sizes := range runs {
		md := ScaleMarkdown(sizes)
		if strings.Contains(md, "stock") || !strings.Contains(md, "gate off against gate on") {
			t.Errorf("the scale report of %s:\n%s", run, md)
		}
		if err := ScaleChart(sizes, filepath.Join(t.TempDir(), "vm.png")); err != nil {
			t.Errorf("%s: %v", run, err)
		}
	}
}
