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
	"path/filepath"
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	mode := func(gate bool, cpu, vm float64, mount []float64) Mode {
		m := Mode{
			Gate: gate, Pods: 110, Volumes: 4, WindowSeconds: 60,
			KubeletCPU: []float64{cpu, cpu + 1, cpu - 1}, ContainerdCPU: []float64{8, 8, 8},
			ProfileSeconds: 60, ProfileCPUSeconds: 4, VolumeManagerCPUSeconds: vm,
			Mount: mount, Unmount: mount, MountEndToEnd: mount, UnmountEndToEnd: mount, BurstMount: mount,
			StartupSeconds: 18, GapSeconds: 1,
		}
		if gate {
			m.Iterations = map[string]float64{"reconciler": 360, "desired_state_of_world_populator": 180}
		}
		return m
	}
	r := Result{
		Off: []Mode{mode(false, 5, 1, []float64{0.3, 0.3, 0.301})},
		On:  []Mode{mode(true, 4, 0.5, []float64{0.01, 0.02, 0.1})},
	}
	rows := Rows(r)
	find := func(prefix string) (off, on float64, ratio string) {
		for _, row := range rows {
			if strings.HasPrefix(row.Figure, prefix) {
				return row.Off, row.On, row.Ratio()
			}
		}
		t.Fatalf("no row %q", prefix)
		return
	}
	if off, on, ratio := find("idle kubelet CPU"); off != 5 || on != 4 || ratio != "1.2x" {
		t.Errorf("kubelet CPU row = %v, %v, %s", off, on, ratio)
	}
	if off, on, _ := find("volume manager share"); off != 25 || on != 12.5 {
		t.Errorf("share row = %v, %v", off, on)
	}
	if off, on, ratio := find("idle reconciler iterations"); !math.IsNaN(off) || on != 120 || ratio != "n/a" {
		t.Errorf("reconciler iterations row = %v, %v, %s (3 windows of 60s)", off, on, ratio)
	}
	if off, on, _ := find("volume-ready wait, single pods 1s apart p50"); off != 300 || on != 20 {
		t.Errorf("mount p50 row = %v, %v", off, on)
	}
	md := Markdown(r)
	for _, want := range []string{"| figure | gate off | gate on | off/on |", "| idle kubelet CPU (median of windows) | 5.00 CPU-s/min | 4.00 CPU-s/min | 1.2x |", "n/a"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	dir := t.TempDir()
	files, err := Charts(r, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 || filepath.Dir(files[0]) != dir {
		t.Errorf("charts = %v", files)
	}
	path := filepath.Join(dir, "results.json")
	if err := r.Save(path); err != nil {
		t.Fatal(err)
	}
	if back, err := Load(path); err != nil || len(back.On) != 1 || back.On[0].Iterations["reconciler"] != 360 {
		t.Errorf("Load = %+v, %v", back, err)
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("loading a missing file gave no error")
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2}, {[]float64{7}, 7}} {
		if got := Median(tc.xs); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}
