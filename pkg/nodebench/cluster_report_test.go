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
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"evented-volume-manager/pkg/node"
)

func clusterMode(gate bool, scale float64) ClusterMode {
	return ClusterMode{
		Gate: gate, Runtime: "containerd", Pods: 110, Volumes: 4, WindowSeconds: 30,
		KubeletCPU: []float64{2 * scale, 3 * scale}, RuntimeCPU: []float64{1, 1},
		APIServerCPU: []float64{4, 4}, ControllerManagerCPU: []float64{0.5, 0.5},
		ProfileSeconds: 60, ProfileCPUSeconds: 6, VolumeManagerCPUSeconds: 1.2 * scale,
		Passes: map[string]float64{"reconciler/full": 6, "desired_state_of_world_populator/partial": 30},
		Kinds: map[string]*KindTimes{
			"api":    {Mount: []float64{0.3 * scale}, MountEndToEnd: []float64{1 * scale}, UnmountEndToEnd: []float64{0.5}},
			"csi-1s": {Mount: []float64{1.3}, MountEndToEnd: []float64{2}, AttachedToMounted: []float64{0.2 * scale}, UnmountEndToEnd: []float64{0.6}, DetachEndToEnd: []float64{9}},
		},
		ConfigMapUpdate: []float64{40, 50, 60},
		Remount:         []float64{0.1 * scale, 0.2 * scale, 0.3 * scale},
		APIRequests: map[string]node.APIRequests{
			PhaseIdle: {Seconds: 120, Count: map[string]int{"get nodes": 12, "patch nodes/status": int(12 * scale)},
				MaxInSecond: map[string]int{"get nodes": 1, "patch nodes/status": 1}},
			PhaseChurn: {Seconds: 60, Count: map[string]int{"patch nodes/status": int(30 / scale), "create serviceaccounts/token": 15},
				MaxInSecond: map[string]int{"patch nodes/status": int(2 / scale), "create serviceaccounts/token": 3}},
		},
	}
}

func TestClusterRows(t *testing.T) {
	r := ClusterResult{Off: []ClusterMode{clusterMode(false, 1)}, On: []ClusterMode{clusterMode(true, 0.1)}}
	rows := map[string][2]float64{}
	for _, row := range ClusterRows(r) {
		rows[row.Figure] = [2]float64{row.Off, row.On}
	}
	tests := []struct {
		figure  string
		off, on float64
	}{
		// Windows of 30 s: CPU-s per minute doubles; the median of two
		// windows is the nearest rank, the lower.
		{"idle kubelet CPU", 4, 0.4},
		{"idle volume manager CPU (pprof)", 1.2, 0.12},
		{"idle kube-apiserver CPU", 8, 8},
		{"api: volume-ready wait p50", 300, 30},
		{"csi-1s: attached → mounted p50", 200, 20},
		{"csi-1s: deleted → detached p99", 9000, 9000},
		{"configMap updated → pod file p50", 50000, 50000},
		{"pod sync → volumes remounted p50", 200, 20},
		// 6 passes over 60 s of idle windows.
		{"idle reconciler passes, full", math.NaN(), 6},
		{"idle populator passes, partial", math.NaN(), 30},
	}
	for _, tc := range tests {
		got, ok := rows[tc.figure]
		if !ok {
			t.Errorf("no row %q", tc.figure)
			continue
		}
		for i, want := range []float64{tc.off, tc.on} {
			if !(math.IsNaN(want) && math.IsNaN(got[i])) && math.Abs(got[i]-want) > 1e-9 {
				t.Errorf("%s: got %v, want off %v on %v", tc.figure, got, tc.off, tc.on)
			}
		}
	}
	if _, ok := rows["csi-0s: volume-ready wait p50"]; ok {
		t.Errorf("a row for a kind no round measured")
	}
}

func TestAPIRequestRows(t *testing.T) {
	// Two rounds of each: counts and seconds add up, the most in 1 s is
	// the rounds' most.
	on := clusterMode(true, 0.1)
	on.APIRequests[PhaseChurn].MaxInSecond["patch nodes/status"] = 1
	r := ClusterResult{Off: []ClusterMode{clusterMode(false, 1), clusterMode(false, 1)}, On: []ClusterMode{on, clusterMode(true, 0.1)}}
	got := APIRequestRows(r)
	want := []APIRequestRow{
		{Key: "get nodes", Idle: [2]float64{6, 6}, IdleMax: [2]int{1, 1}},
		{Key: "patch nodes/status", Idle: [2]float64{6, 0.5}, Churn: [2]float64{30, 300}, IdleMax: [2]int{1, 1}, ChurnMax: [2]int{2, 20}},
		{Key: "create serviceaccounts/token", Churn: [2]float64{15, 15}, ChurnMax: [2]int{3, 3}},
	}
	if !slices.Equal(got, want) {
		t.Errorf("rows\n%+v\nwant\n%+v", got, want)
	}
}

func TestClusterRoundOrder(t *testing.T) {
	for round, want := range map[int][]bool{1: {false, true}, 2: {true, false}, 3: {false, true}} {
		if got := ClusterRoundOrder(round); !slices.Equal(got, want) {
			t.Errorf("round %d: %v, want %v", round, got, want)
		}
	}
}

func TestClusterReportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := ClusterResult{Off: []ClusterMode{clusterMode(false, 1), clusterMode(false, 1)}, On: []ClusterMode{clusterMode(true, 0.1), clusterMode(true, 0.1)},
		Orders: [][]bool{ClusterRoundOrder(1), ClusterRoundOrder(2)}}
	path := filepath.Join(dir, "results.json")
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := LoadCluster(path)
	if err != nil {
		t.Fatal(err)
	}
	md := ClusterMarkdown(loaded)
	for _, want := range []string{"110 API pods", "2 round(s)", "| idle kubelet CPU | 4.00 CPU-s/min | 0.40 CPU-s/min | 10.0x |",
		"600 (polls every 100 ms)", "round 1 gate off first, round 2 gate on first",
		"| patch nodes/status | 6.0 | 0.5 | 30.0 | 300.0 | 1 / 2 | 1 / 20 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	files, err := ClusterCharts(loaded, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Errorf("%d charts, want 3", len(files))
	}
	for _, f := range files {
		if info, err := os.Stat(f); err != nil || info.Size() == 0 {
			t.Errorf("chart %s: %v", f, err)
		}
	}
	if err := os.WriteFile(path, []byte(`{"off":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCluster(path); err == nil {
		t.Errorf("results without a complete round loaded")
	}
}
