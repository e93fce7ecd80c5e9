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

package kubeletlog

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseRemounts(t *testing.T) {
	log := strings.Join([]string{
		// Before the window: not a sample, though its remount is in it.
		`I1125 09:59:59.900000   42 volume_manager.go:442] "Waiting for volumes to attach and mount for pod" pod="default/a"`,
		`I1125 10:00:00.050000   42 operation_generator.go:620] "MountVolume.SetUp succeeded for volume \"config\" (UniqueName: \"c\") pod \"a\" (UID: \"u\") " pod="default/a"`,
		`I1125 10:00:01.000000   42 volume_manager.go:442] "Waiting for volumes to attach and mount for pod" pod="default/a"`,
		`I1125 10:00:01.000100   42 volume_manager.go:503] "All volumes are attached and mounted for pod" pod="default/a"`,
		`I1125 10:00:01.100000   42 operation_generator.go:620] "MountVolume.SetUp succeeded for volume \"config\" (UniqueName: \"c\") pod \"a\" (UID: \"u\") " pod="default/a"`,
		`I1125 10:00:01.150000   42 operation_generator.go:620] "MountVolume.SetUp succeeded for volume \"secret\" (UniqueName: \"s\") pod \"a\" (UID: \"u\") " pod="default/a"`,
		// Another pod's SetUp does not count for a.
		`I1125 10:00:01.900000   42 operation_generator.go:620] "MountVolume.SetUp succeeded for volume \"config\" (UniqueName: \"d\") pod \"b\" (UID: \"v\") " pod="default/b"`,
		// b syncs with no remount before its next sync: missed.
		`I1125 10:00:02.000000   42 volume_manager.go:442] "Waiting for volumes to attach and mount for pod" pod="default/b"`,
		`I1125 10:00:03.000000   42 volume_manager.go:442] "Waiting for volumes to attach and mount for pod" pod="default/b"`,
		`I1125 10:00:03.900000   42 operation_generator.go:620] "MountVolume.SetUp succeeded for volume \"config\" (UniqueName: \"d\") pod \"b\" (UID: \"v\") " pod="default/b"`,
		// After the window.
		`I1125 10:00:10.000000   42 volume_manager.go:442] "Waiting for volumes to attach and mount for pod" pod="default/a"`,
		`I1125 10:00:10.100000   42 operation_generator.go:620] "MountVolume.SetUp succeeded for volume \"config\" (UniqueName: \"c\") pod \"a\" (UID: \"u\") " pod="default/a"`,
	}, "\n")
	from := time.Date(time.Now().Year(), 11, 25, 10, 0, 0, 0, time.Local)
	remounts, missed, err := ParseRemounts(strings.NewReader(log), from, from.Add(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{150 * time.Millisecond, 900 * time.Millisecond}
	if !slices.Equal(remounts, want) || missed != 1 {
		t.Errorf("remounts %v, %d missed; want %v, 1 missed", remounts, missed, want)
	}
}

func TestParseVolumeWaits(t *testing.T) {
	log := strings.Join([]string{
		`I1121 10:00:00.000000   42 volume_manager.go:440] "Waiting for volumes to attach and mount for pod" pod="default/a-node"`,
		`I1121 10:00:00.250000   42 volume_manager.go:498] "All volumes are attached and mounted for pod" pod="default/a-node"`,
		// A later sync of the same pod is not its first wait.
		`I1121 10:00:05.000000   42 volume_manager.go:440] "Waiting for volumes to attach and mount for pod" pod="default/a-node"`,
		`I1121 10:00:05.000100   42 volume_manager.go:498] "All volumes are attached and mounted for pod" pod="default/a-node"`,
		// Interleaved pods, and an unrelated line with a pod key.
		`I1121 10:00:01.000000   42 volume_manager.go:440] "Waiting for volumes to attach and mount for pod" pod="default/b-node"`,
		`I1121 10:00:01.001000   42 reconciler_common.go:225] "operationExecutor.MountVolume started" pod="default/b-node"`,
		`I1121 10:00:01.000500   42 volume_manager.go:505] "Waiting for volumes to unmount for pod" pod="default/a-node"`,
		`I1121 10:00:01.009000   42 volume_manager.go:498] "All volumes are attached and mounted for pod" pod="default/b-node"`,
		`I1121 10:00:01.100500   42 volume_manager.go:533] "All volumes are unmounted for pod" pod="default/a-node"`,
		// A wait that never ends is not measured.
		`I1121 10:00:02.000000   42 volume_manager.go:440] "Waiting for volumes to attach and mount for pod" pod="default/c-node"`,
		`garbage`,
		// Across midnight.
		`I1121 23:59:59.900000   42 volume_manager.go:440] "Waiting for volumes to attach and mount for pod" pod="default/d-node"`,
		`I1122 00:00:00.100000   42 volume_manager.go:498] "All volumes are attached and mounted for pod" pod="default/d-node"`,
		// LastSetUp: from the last SetUp before the wait ends, or the
		// wait's start if that was later.
		`I1125 10:00:00.000000   42 volume_manager.go:442] "Waiting for volumes to attach and mount for pod" pod="default/a"`,
		`I1125 10:00:00.010000   42 operation_generator.go:620] "MountVolume.SetUp succeeded for volume \"scratch\" (UniqueName: \"kubernetes.io/empty-dir/u-scratch\") pod \"a\" (UID: \"u\") " pod="default/a"`,
		`I1125 10:00:00.020000   42 operation_generator.go:620] "MountVolume.SetUp succeeded for volume \"config\" (UniqueName: \"kubernetes.io/configmap/u-config\") pod \"a\" (UID: \"u\") " pod="default/a"`,
		`I1125 10:00:00.020300   42 volume_manager.go:503] "All volumes are attached and mounted for pod" pod="default/a"`,
		// Polling: the wait ends at its next 300ms check.
		`I1125 10:00:01.000000   42 volume_manager.go:442] "Waiting for volumes to attach and mount for pod" pod="default/b"`,
		`I1125 10:00:01.005000   42 operation_generator.go:620] "MountVolume.SetUp succeeded for volume \"scratch\" (UniqueName: \"x\") pod \"b\" (UID: \"v\") " pod="default/b"`,
		`I1125 10:00:01.300000   42 volume_manager.go:503] "All volumes are attached and mounted for pod" pod="default/b"`,
		// A pod whose volumes were mounted before its wait began.
		`I1125 10:00:02.000000   42 operation_generator.go:620] "MountVolume.SetUp succeeded for volume \"scratch\" (UniqueName: \"y\") pod \"c\" (UID: \"w\") " pod="default/c"`,
		`I1125 10:00:02.100000   42 volume_manager.go:442] "Waiting for volumes to attach and mount for pod" pod="default/c"`,
		`I1125 10:00:02.100100   42 volume_manager.go:503] "All volumes are attached and mounted for pod" pod="default/c"`,
	}, "\n")
	w, err := ParseVolumeWaits(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	wantMount := map[string]time.Duration{
		"default/a-node": 250 * time.Millisecond,
		"default/b-node": 9 * time.Millisecond,
		"default/d-node": 200 * time.Millisecond,
		"default/a":      20300 * time.Microsecond,
		"default/b":      300 * time.Millisecond,
		"default/c":      100 * time.Microsecond,
	}
	wantLastSetUp := map[string]time.Duration{
		"default/a": 300 * time.Microsecond,
		"default/b": 295 * time.Millisecond,
		"default/c": 100 * time.Microsecond,
	}
	for pod, d := range wantLastSetUp {
		if got, ok := w.LastSetUp[pod]; !ok || got != d {
			t.Errorf("%s: last SetUp → mounted %v (%v), want %v", pod, got, ok, d)
		}
	}
	wantUnmount := map[string]time.Duration{"default/a-node": 100 * time.Millisecond}
	if at := w.UnmountedAt["default/a-node"]; at.Hour() != 10 || at.Nanosecond() != 100500000 || at.Year() != time.Now().Year() {
		t.Errorf("unmounted at %v, want 10:00:01.1005 this year", at)
	}
	if len(w.MountedAt) != len(wantMount) {
		t.Errorf("mounted at %v, want one per measured pod", w.MountedAt)
	}
	for name, c := range map[string]struct{ got, want map[string]time.Duration }{
		"mount": {w.Mount, wantMount}, "unmount": {w.Unmount, wantUnmount},
	} {
		if len(c.got) != len(c.want) {
			t.Errorf("%s waits %v, want %v", name, c.got, c.want)
		}
		for pod, d := range c.want {
			if c.got[pod] != d {
				t.Errorf("%s wait of %s = %v, want %v", name, pod, c.got[pod], d)
			}
		}
	}
}
