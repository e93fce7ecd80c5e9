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
	"slices"
	"strings"
	"testing"
)

// TestExitStepAndCrashLoopRows checks the rows of the exit breakdown and of
// the crash-looping pods: per configuration, and absent where no
// configuration measured them.
func TestExitStepAndCrashLoopRows(t *testing.T) {
	off, on := configMode(GateOff, 5, []float64{0.3}, 1), configMode(GateOn, 4, []float64{0.01}, 0.5)
	off.ExitSteps = map[string][]float64{"exitToRelist": {0.5, 0.7, 0.9}}
	on.ExitSteps = map[string][]float64{"exitToEvent": {0.002, 0.004}, "exitToRelist": {0.01, 0.02, 0.03}}
	off.CrashLoop = &CrashLoopCost{Pods: 10, WindowSeconds: 30, Restarts: 10, PodRelists: 5, KubeletCPU: 1}
	on.CrashLoop = &CrashLoopCost{Pods: 10, WindowSeconds: 60, Restarts: 20, PodRelists: 40, KubeletCPU: 2}
	rows := Rows(Result{Off: []Mode{off}, On: []Mode{on}})
	for _, tc := range []struct {
		figure  string
		off, on float64
	}{
		{"  exit step: exit → a relist sees it p50", 700, 20},
		{"crash-looping pods: single-pod relists (median of rounds)", 10, 40},
		{"crash-looping pods: kubelet CPU (median of rounds)", 2, 2},
	} {
		i := slices.IndexFunc(rows, func(r Row) bool { return r.Figure == tc.figure })
		if i < 0 {
			t.Errorf("no row %q", tc.figure)
			continue
		}
		if r := rows[i]; !same(r.Stat(GateOff).Value, tc.off) || !same(r.Stat(GateOn).Value, tc.on) {
			t.Errorf("%s: %v, %v; want %v, %v", tc.figure, r.Stat(GateOff).Value, r.Stat(GateOn).Value, tc.off, tc.on)
		}
	}
	off.ExitSteps, on.ExitSteps, off.CrashLoop, on.CrashLoop = nil, nil, nil, nil
	for _, r := range Rows(Result{Off: []Mode{off}, On: []Mode{on}}) {
		if strings.Contains(r.Figure, "exit step") || strings.Contains(r.Figure, "crash-looping") {
			t.Errorf("a row %q that no configuration measured", r.Figure)
		}
	}
}
