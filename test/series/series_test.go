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

// Package series_test checks the project's own patch series in patches/.
package series_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"evented-volume-manager/pkg/series"
)

// patchesDir is patches/ at the root of the project.
func patchesDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "patches"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// machinePaths are paths that exist only on the machine running the test.
func machinePaths(t *testing.T) []string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{root, os.Getenv("HOME"), os.Getenv("GOPATH")}
	for _, v := range []string{"GOMODCACHE", "GOPATH", "GOCACHE"} {
		if out, err := exec.Command("go", "env", v).Output(); err == nil {
			paths = append(paths, strings.TrimSpace(string(out)))
		}
	}
	return paths
}

func TestSeriesFollowsTheRules(t *testing.T) {
	patches, err := series.ReadDir(patchesDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(patches) == 0 {
		t.Fatal("patches/ holds no patch")
	}
	rules := series.DefaultRules().WithLiteralPaths(machinePaths(t)...)
	for _, p := range series.CheckAll(patches, rules) {
		t.Error(p)
	}
}

// TestSeriesDeclaresTheGateFirst checks that the gate every evented patch
// relies on is declared by the first patch that names it: gate-independent
// groundwork may come before it, but nothing before it mentions the gate.
func TestSeriesDeclaresTheGateFirst(t *testing.T) {
	patches, err := series.ReadDir(patchesDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(patches) == 0 {
		t.Fatal("patches/ holds no patch")
	}
	var gate *series.Patch
	for i := range patches {
		for _, l := range patches[i].Added {
			if strings.Contains(l.Text, "EventedVolumeManager") {
				gate = patches[i]
				break
			}
		}
		if gate != nil {
			break
		}
	}
	if gate == nil {
		t.Fatal("no patch adds a line naming EventedVolumeManager")
	}
	for _, want := range []string{
		`EventedVolumeManager featuregate.Feature = "EventedVolumeManager"`,
		`{Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Alpha},`,
		`EventedVolumeManager: {},`,
		`- name: EventedVolumeManager`,
	} {
		found := false
		for _, l := range gate.Added {
			if strings.TrimSpace(l.Text) == want {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("%s, the first patch that names the gate, does not declare it: it lacks %q", gate.Name, want)
		}
	}
}
