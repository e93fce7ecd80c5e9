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
