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

package node

import (
	"cmp"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetGate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stock     bool
		from, to  bool
		wantErr   bool
		wantGates string
	}{
		{name: "off to on", from: false, to: true, wantGates: "featureGates:\n  EventedVolumeManager: true\n  EventedPLEG: false\n"},
		{name: "on to off", from: true, to: false, wantGates: "featureGates:\n  EventedVolumeManager: false\n  EventedPLEG: false\n"},
		{name: "stock kubelet stays without the gate", stock: true, to: false, wantGates: "featureGates:\n  EventedPLEG: false\n"},
		{name: "stock kubelet cannot turn it on", stock: true, to: true, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			if err := os.MkdirAll(filepath.Join(work, "kubelet"), 0o755); err != nil {
				t.Fatal(err)
			}
			n := &Node{opts: Options{Gate: tc.from, StockKubelet: tc.stock, Runtime: Containerd}, work: work, runtime: driverFor(Containerd, false)}
			err := n.SetGate(tc.to)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("SetGate(%t) on a stock kubelet: no error", tc.to)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(n.KubeletConfig())
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(string(data), tc.wantGates) {
				t.Errorf("the configuration ends\n%s\nwant it to end\n%s", lastLines(string(data), 3), tc.wantGates)
			}
			if n.Gate() != tc.to {
				t.Errorf("Gate() = %t after SetGate(%t)", n.Gate(), tc.to)
			}
		})
	}
}

// TestSetKubelet swaps the series' kubelet, its gates on, for upstream's and
// back: upstream's configuration has none of the series' gates, and they
// are off after the swap.
func TestSetKubelet(t *testing.T) {
	work := t.TempDir()
	if err := os.MkdirAll(filepath.Join(work, "kubelet"), 0o755); err != nil {
		t.Fatal(err)
	}
	stock := filepath.Join(work, "kubelet-stock")
	if err := os.WriteFile(stock, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	n := &Node{opts: Options{Gate: true, Gates: map[string]bool{RelistOnPodTermination: true}, Runtime: Containerd}, work: work, runtime: driverFor(Containerd, false)}
	for _, step := range []struct {
		binary    string
		stock     bool
		wantGates string
	}{
		{binary: stock, stock: true, wantGates: "featureGates:\n  EventedPLEG: false\n"},
		{wantGates: "featureGates:\n  EventedVolumeManager: false\n  EventedPLEG: false\n"},
	} {
		if err := n.SetKubelet(step.binary, step.stock); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(n.KubeletConfig())
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(string(data), step.wantGates) || n.Gate() || n.kubeletBinary() != cmp.Or(step.binary, KubeletBinary(filepath.Dir(n.bin))) {
			t.Errorf("SetKubelet(%q, %t): gate %t, binary %s, configuration ending\n%s", step.binary, step.stock, n.Gate(), n.kubeletBinary(), lastLines(string(data), 3))
		}
	}
	if err := n.SetKubelet(filepath.Join(work, "missing"), true); err == nil {
		t.Error("SetKubelet with a missing binary: no error")
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func TestSetGateRefusesARunningKubelet(t *testing.T) {
	p, err := startProcess("sleep", filepath.Join(t.TempDir(), "sleep.log"), nil, "sleep", "60")
	if err != nil {
		t.Skipf("cannot start sleep: %v", err)
	}
	defer p.Stop(9, 0)
	n := &Node{opts: Options{Runtime: Containerd}, work: t.TempDir(), runtime: driverFor(Containerd, false), kubelet: p}
	if err := n.SetGate(true); err == nil {
		t.Fatal("SetGate with the kubelet running: no error")
	}
}

func TestParseMountIDs(t *testing.T) {
	// Fields: mount ID, parent ID, major:minor, root, mount point, ...
	const mountinfo = `21 1 8:1 / / rw shared:1 - ext4 /dev/sda1 rw
30 21 0:5 / /var/lib/kubelet rw shared:2 - tmpfs tmpfs rw
31 30 0:6 / /var/lib/kubelet/pods/a/volumes/x rw - tmpfs tmpfs rw
32 30 0:7 / /var/lib/kubelet/pods/a/volumes/my\040vol rw - tmpfs tmpfs rw
33 30 0:8 / /var/lib/kubeletx rw - tmpfs tmpfs rw
34 31 0:9 / /var/lib/kubelet/pods/a/volumes/x rw - tmpfs tmpfs rw
`
	for _, tc := range []struct {
		name  string
		roots []string
		want  map[string]string
	}{
		{name: "the root itself and everything under it", roots: []string{"/var/lib/kubelet"}, want: map[string]string{
			"/var/lib/kubelet": "30", "/var/lib/kubelet/pods/a/volumes/x": "34", "/var/lib/kubelet/pods/a/volumes/my vol": "32",
		}},
		{name: "a trailing slash", roots: []string{"/var/lib/kubelet/pods/a/"}, want: map[string]string{
			"/var/lib/kubelet/pods/a/volumes/x": "34", "/var/lib/kubelet/pods/a/volumes/my vol": "32",
		}},
		{name: "/ holds every mount", roots: []string{"/"}, want: map[string]string{
			"/": "21", "/var/lib/kubelet": "30", "/var/lib/kubelet/pods/a/volumes/x": "34",
			"/var/lib/kubelet/pods/a/volumes/my vol": "32", "/var/lib/kubeletx": "33",
		}},
		{name: "several roots", roots: []string{"/var/lib/kubeletx", "/var/lib/kubelet/pods/a/volumes/my vol"}, want: map[string]string{
			"/var/lib/kubeletx": "33", "/var/lib/kubelet/pods/a/volumes/my vol": "32",
		}},
		{name: "nothing mounted there", roots: []string{"/srv"}, want: map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseMountIDs(mountinfo, tc.roots); !maps.Equal(got, tc.want) {
				t.Errorf("parseMountIDs(%q) = %v, want %v", tc.roots, got, tc.want)
			}
		})
	}
}

func TestMountIDs(t *testing.T) {
	ids, err := MountIDs("/")
	if err != nil {
		t.Fatal(err)
	}
	if ids["/"] == "" || len(ids) < 2 {
		t.Fatalf("MountIDs(\"/\") = %v, want / and the mounts under it (/proc at least)", ids)
	}
}
