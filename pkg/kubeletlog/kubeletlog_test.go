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
	"fmt"
	"maps"
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
	from := logTime(t, "1125 10:00:00.000000")
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
	for name, c := range map[string]struct{ got, want map[string]time.Duration }{
		"mount": {w.Mount, wantMount}, "unmount": {w.Unmount, map[string]time.Duration{"default/a-node": 100 * time.Millisecond}},
		"last SetUp → mounted": {w.LastSetUp, wantLastSetUp},
	} {
		if !maps.Equal(c.got, c.want) {
			t.Errorf("%s waits %v, want %v", name, c.got, c.want)
		}
	}
	if at := w.UnmountedAt["default/a-node"]; !at.Equal(logTime(t, "1121 10:00:01.100500")) {
		t.Errorf("unmounted at %v, want 10:00:01.1005 this year", at)
	}
	if len(w.MountedAt) != len(wantMount) {
		t.Errorf("mounted at %v, want one per measured pod", w.MountedAt)
	}
}

func TestParseKlogLine(t *testing.T) {
	tests := []struct {
		name, line string
		msg        string // "" if the line is not klog's
		structured bool
		values     map[string]string
	}{
		{name: "printf-style, quoted in single quotes", line: `I1123 01:02:03.456789    1234 x.go:1] 'a' pod="default/y"`, msg: `'a' pod="default/y"`},
		{name: "multi-line value", line: `E1123 01:02:03.456789    1234 x.go:1] "Failed" err=<`, msg: "Failed", structured: true, values: map[string]string{"err": "<"}},
		{name: "continuation of a multi-line value", line: "\tline 2 of the error"},
		{name: "no header", line: `"SyncLoop REMOVE" pods=["default/a"]`},
		{
			name:       "structured",
			line:       `I1123 01:02:03.456789    1234 kubelet.go:2771] "SyncLoop REMOVE" source="file" pods=["default/a","default/b"]`,
			msg:        "SyncLoop REMOVE",
			structured: true,
			values:     map[string]string{"source": "file", "pods": `["default/a","default/b"]`, "pod": ""},
		}, {
			name:       "escaped quotes in the message and a value",
			line:       `W1123 01:02:03.456789 1234567 x.go:1] "volume \"a\" pod=\"default/x\"" err="say \"no\"" pod="default/y" gracePeriod=2 obj={"a":"} b"} last=1`,
			msg:        `volume "a" pod="default/x"`,
			structured: true,
			values:     map[string]string{"err": `say "no"`, "pod": "default/y", "gracePeriod": "2", "obj": `{"a":"} b"}`, "last": "1"},
		}, {
			name:   "printf-style",
			line:   `I1123 01:02:03.456789    1234 operation_generator.go:791] UnmountVolume.TearDown succeeded for volume "v" pod "u" (UID: "u"). InnerVolumeSpecName "v"`,
			msg:    `UnmountVolume.TearDown succeeded for volume "v" pod "u" (UID: "u"). InnerVolumeSpecName "v"`,
			values: map[string]string{"pod": ""},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, ok := parseKlogLine(tc.line)
			if ok != (tc.msg != "") {
				t.Fatalf("parsed %t, want %t", ok, tc.msg != "")
			}
			if ok && (l.msg != tc.msg || l.structured != tc.structured || l.stamp != "1123 01:02:03.456789") {
				t.Errorf("got %q %q structured %t, want %q structured %t", l.stamp, l.msg, l.structured, tc.msg, tc.structured)
			}
			for k, want := range tc.values {
				got, found := l.value(k)
				if got != want || found != (want != "") {
					t.Errorf("value(%q) = %q, %t, want %q", k, got, found, want)
				}
			}
		})
	}
}

func TestScanKlogLongLine(t *testing.T) {
	long := `I1123 01:02:03.000000    1 x.go:1] "Status" status="` + strings.Repeat("x", 3*maxLogLine) + `"`
	log := fmt.Sprintf("%s\n%s\n", long, `I1123 01:02:04.000000    1 volume_manager.go:539] "All volumes are unmounted for pod" pod="default/a"`)
	var msgs []string
	if err := scanKlog(strings.NewReader(log), func(l klogLine) error {
		msgs = append(msgs, l.msg)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[1] != UnmountDoneLine {
		t.Errorf("messages %.80q, want the long line cut and the next one whole", msgs)
	}
}

// The UIDs of the pods in deletionLog.
const (
	uidA = "6f1d0c3b2a594e8d9c7b5a3f1e0d2c4b"
	uidB = "0b9a8c7d6e5f40312a1b2c3d4e5f6a7b"
	uidC = "c1c2c3c4c5c6c7c8c9c0cacbcccdcecf"
	uidD = "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"
)

// deletionLog is a kubelet log at --v=4. B's lines interleave with A's, and
// its directory is never removed; C's is removed on the second try; D's lines
// give no UID with its name, as at --v=3, so its UID-only lines are lost.
var deletionLog = strings.NewReplacer("$A", uidA, "$B", uidB, "$C", uidC, "$D", uidD).Replace(strings.Join([]string{
	// Before the removal: not a phase.
	`I1123 01:02:02.500000    4242 volume_manager.go:505] "All volumes are attached and mounted for pod" pod="default/w-000-evm-node"`,
	`I1123 01:02:02.600000    4242 kubelet.go:2519] "SyncTerminatedPod enter" pod="default/w-001-evm-node" podUID="$B"`,
	// A is removed.
	`I1123 01:02:03.000100    4242 kubelet.go:2771] "SyncLoop REMOVE" source="file" pods=["default/w-000-evm-node"]`,
	`I1123 01:02:03.000900    4242 pod_workers.go:899] "Pod is being removed by the kubelet, begin teardown" pod="default/w-000-evm-node" podUID="$A" updateType="kill"`,
	`I1123 01:02:03.001200    4242 kubelet.go:2346] "SyncTerminatingPod enter" pod="default/w-000-evm-node" podUID="$A"`,
	`I1123 01:02:03.001500    4242 kuberuntime_container.go:912] "Killing container with a grace period" pod="default/w-000-evm-node" podUID="$A" containerName="bb" containerID="containerd://9e8d7c6b5a4f" gracePeriod=2`,
	`I1123 01:02:03.120000    4242 kubelet.go:2457] "Pod termination stopped all running containers" pod="default/w-000-evm-node" podUID="$A"`,
	`I1123 01:02:03.120300    4242 kubelet.go:2360] "SyncTerminatingPod exit" pod="default/w-000-evm-node" podUID="$A"`,
	`I1123 01:02:03.120400    4242 pod_workers.go:1447] "Pod terminated all containers successfully" podUID="$A"`,
	// B is removed; its lines interleave with A's.
	`I1123 01:02:04.000200    4242 kubelet.go:2771] "SyncLoop REMOVE" source="file" pods=["default/w-001-evm-node"]`,
	`I1123 01:02:04.001000    4242 kubelet.go:2346] "SyncTerminatingPod enter" pod="default/w-001-evm-node" podUID="$B"`,
	`I1123 01:02:04.050000    4242 kubelet.go:2519] "SyncTerminatedPod enter" pod="default/w-000-evm-node" podUID="$A"`,
	`I1123 01:02:04.050100    4242 volume_manager.go:518] "Waiting for volumes to unmount for pod" pod="default/w-000-evm-node"`,
	`I1123 01:02:04.100000    4242 reconciler_common.go:165] "operationExecutor.UnmountVolume started for volume \"kubernetes.io/empty-dir/$A-scratch\" (UniqueName: \"kubernetes.io/empty-dir/$A-scratch\") pod \"$A\" (UID: \"$A\") "`,
	`I1123 01:02:04.100300    4242 reconciler_common.go:165] "operationExecutor.UnmountVolume started for volume \"kubernetes.io/host-path/$A-host\" (UniqueName: \"kubernetes.io/host-path/$A-host\") pod \"$A\" (UID: \"$A\") "`,
	`I1123 01:02:04.110000    4242 operation_generator.go:791] UnmountVolume.TearDown succeeded for volume "kubernetes.io/host-path/$A-host" pod "$A" (UID: "$A"). InnerVolumeSpecName "host". PluginName "kubernetes.io/host-path", VolumeGIDValue ""`,
	`I1123 01:02:04.112000    4242 operation_generator.go:791] UnmountVolume.TearDown succeeded for volume "kubernetes.io/empty-dir/$A-scratch" pod "$A" (UID: "$A"). InnerVolumeSpecName "scratch". PluginName "kubernetes.io/empty-dir", VolumeGIDValue ""`,
	`I1123 01:02:04.130000    4242 kubelet.go:2457] "Pod termination stopped all running containers" pod="default/w-001-evm-node" podUID="$B"`,
	`I1123 01:02:04.130200    4242 pod_workers.go:1447] "Pod terminated all containers successfully" podUID="$B"`,
	`I1123 01:02:04.150000    4242 reconciler_common.go:165] "operationExecutor.UnmountVolume started for volume \"kubernetes.io/downward-api/$A-labels\" (UniqueName: \"kubernetes.io/downward-api/$A-labels\") pod \"$A\" (UID: \"$A\") "`,
	`I1123 01:02:04.180000    4242 operation_generator.go:791] UnmountVolume.TearDown succeeded for volume "kubernetes.io/downward-api/$A-labels" pod "$A" (UID: "$A"). InnerVolumeSpecName "labels". PluginName "kubernetes.io/downward-api", VolumeGIDValue ""`,
	`I1123 01:02:04.180500    4242 reconciler_common.go:299] "Volume detached for volume \"kubernetes.io/downward-api/$A-labels\" (UniqueName: \"kubernetes.io/downward-api/$A-labels\") on node \"evm-node\" DevicePath \"\""`,
	`I1123 01:02:04.200000    4242 volume_manager.go:539] "All volumes are unmounted for pod" pod="default/w-000-evm-node"`,
	`I1123 01:02:04.200500    4242 kubelet.go:2520] "SyncTerminatedPod exit" pod="default/w-000-evm-node" podUID="$A"`,
	`garbage`,
	// C and D are removed at once.
	`I1123 01:02:04.300000    4242 kubelet.go:2771] "SyncLoop REMOVE" source="file" pods=["default/w-002-evm-node","default/w-003-evm-node"]`,
	`I1123 01:02:04.300500    4242 kubelet.go:2457] "Pod termination stopped all running containers" pod="default/w-002-evm-node" podUID="$C"`,
	`I1123 01:02:04.400000    4242 operation_generator.go:791] UnmountVolume.TearDown succeeded for volume "kubernetes.io/empty-dir/$D-scratch" pod "$D" (UID: "$D"). InnerVolumeSpecName "scratch". PluginName "kubernetes.io/empty-dir", VolumeGIDValue ""`,
	`I1123 01:02:04.450000    4242 volume_manager.go:539] "All volumes are unmounted for pod" pod="default/w-003-evm-node"`,
	`I1123 01:02:05.000000    4242 kubelet_volumes.go:248] "Orphaned pod found, removing" podUID="$A"`,
	`I1123 01:02:05.050000    4242 kubelet.go:2519] "SyncTerminatedPod enter" pod="default/w-001-evm-node" podUID="$B"`,
	`I1123 01:02:05.100000    4242 reconciler_common.go:165] "operationExecutor.UnmountVolume started for volume \"kubernetes.io/empty-dir/$B-scratch\" (UniqueName: \"kubernetes.io/empty-dir/$B-scratch\") pod \"$B\" (UID: \"$B\") "`,
	`I1123 01:02:05.150000    4242 operation_generator.go:791] UnmountVolume.TearDown succeeded for volume "kubernetes.io/empty-dir/$B-scratch" pod "$B" (UID: "$B"). InnerVolumeSpecName "scratch". PluginName "kubernetes.io/empty-dir", VolumeGIDValue ""`,
	`I1123 01:02:05.200000    4242 volume_manager.go:539] "All volumes are unmounted for pod" pod="default/w-001-evm-node"`,
	`I1123 01:02:05.200100    4242 kubelet.go:2520] "SyncTerminatedPod exit" pod="default/w-001-evm-node" podUID="$B"`,
	// B's directory is never removed; C's on the second try.
	`I1123 01:02:07.000000    4242 kubelet_volumes.go:200] "Orphaned pod found, but volumes are not cleaned up" podUID="$B"`,
	`I1123 01:02:09.000000    4242 kubelet_volumes.go:248] "Orphaned pod found, removing" podUID="$B"`,
	`E1123 01:02:09.000100    4242 kubelet_volumes.go:250] "Failed to remove orphaned pod dir" err="remove /work/kubelet/root/pods/$B: directory not empty" podUID="$B"`,
	`I1123 01:02:09.000200    4242 kubelet_volumes.go:248] "Orphaned pod found, removing" podUID="$C"`,
	`E1123 01:02:09.000300    4242 kubelet_volumes.go:250] "Failed to remove orphaned pod dir" err="remove /work/kubelet/root/pods/$C: device or resource busy" podUID="$C"`,
	`I1123 01:02:11.000000    4242 kubelet_volumes.go:248] "Orphaned pod found, removing" podUID="$C"`,
	// A's directory is gone: a later line would be another pod's.
	`I1123 01:02:11.000100    4242 kubelet_volumes.go:248] "Orphaned pod found, removing" podUID="$A"`,
}, "\n"))

// exitLog is a kubelet log at --v=4: the watcher sees pod A's container
// exit; a periodic relist sees B's, written as JSON; C only runs.
var exitLog = strings.Join([]string{
	`I1128 10:00:00.100000    4242 evented.go:130] "Evented PLEG: requested pod relist after container termination" podUID="` + uidA + `" containerID="c1" eventType="CONTAINER_STOPPED_EVENT"`,
	`I1128 10:00:00.150000    4242 kubelet.go:2804] "SyncLoop (PLEG): event for pod" pod="default/a" event={"ID":"` + uidA + `","Type":"ContainerDied","Data":"c1"}`,
	`I1128 10:00:00.160000    4242 kubelet.go:2804] "SyncLoop (PLEG): event for pod" pod="default/c" event={"ID":"` + uidC + `","Type":"ContainerStarted","Data":"c3"}`,
	`I1128 10:00:00.200000    4242 pod_workers.go:1379] "Pod is terminal" pod="default/a" podUID="` + uidA + `" updateType="sync"`,
	`I1128 10:00:00.250000    4242 evented.go:130] "Evented PLEG: requested pod relist after container termination" podUID="` + uidA + `" containerID="s1" eventType="CONTAINER_STOPPED_EVENT"`,
	`I1128 10:00:00.900000    4242 kubelet.go:2804] "SyncLoop (PLEG): event for pod" pod="default/b" event=&{ID:` + uidB + ` Type:ContainerDied Data:c2}`,
	`I1128 10:00:01.100000    4242 kubelet.go:2358] "SyncTerminatingPod enter" pod="default/a" podUID="` + uidA + `"`,
	`I1128 10:00:01.300000    4242 pod_workers.go:1454] "Pod terminated all containers successfully" podUID="` + uidA + `"`,
	`I1128 10:00:01.350000    4242 operation_generator.go:800] UnmountVolume.TearDown succeeded for volume "kubernetes.io/empty-dir/x" (OuterVolumeSpecName: "x") pod "` + uidA + `" (UID: "` + uidA + `"). InnerVolumeSpecName "x". PluginName "kubernetes.io/empty-dir", VolumeGIDValue ""`,
	`I1128 10:00:01.400000    4242 operation_generator.go:800] UnmountVolume.TearDown succeeded for volume "kubernetes.io/empty-dir/y" (OuterVolumeSpecName: "y") pod "` + uidA + `" (UID: "` + uidA + `"). InnerVolumeSpecName "y". PluginName "kubernetes.io/empty-dir", VolumeGIDValue ""`,
	`I1128 10:00:02.000000    4242 pod_workers.go:1379] "Pod is terminal" pod="default/b" podUID="` + uidB + `" updateType="sync"`,
}, "\n") + "\n"

// logTime is the time of a klog header's stamp this year.
func logTime(t *testing.T, stamp string) time.Time {
	t.Helper()
	at, err := klogLine{stamp: stamp}.time(time.Now().Year())
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// checkTimes compares each phase's time to the stamp prefix+want[phase].
func checkTimes(t *testing.T, what string, got []time.Time, prefix string, want []string) {
	t.Helper()
	for p, w := range want {
		var at time.Time
		if w != "" {
			at = logTime(t, prefix+w)
		}
		if !got[p].Equal(at) {
			t.Errorf("%s, phase %d: at %v, want %v", what, p, got[p], at)
		}
	}
}

func TestParseDeletionTimeline(t *testing.T) {
	got, err := ParseDeletionTimeline(strings.NewReader(deletionLog))
	if err != nil {
		t.Fatal(err)
	}
	// Each phase's time after 01:02, "" where missing.
	want := map[string][NumDeletionPhases]string{
		"default/w-000-evm-node": {"03.000100", "03.120000", "03.120400", "04.050000", "04.100000", "04.180000", "04.200000", "04.200500", "05.000000"},
		"default/w-001-evm-node": {"04.000200", "04.130000", "04.130200", "05.050000", "05.100000", "05.150000", "05.200000", "05.200100", ""},
		"default/w-002-evm-node": {"04.300000", "04.300500", "", "", "", "", "", "", "11.000000"},
		"default/w-003-evm-node": {"04.300000", "", "", "", "", "", "04.450000", "", ""},
	}
	if len(got) != len(want) {
		t.Errorf("timelines of %d pods, want %d: %v", len(got), len(want), got)
	}
	for pod, w := range want {
		tl := got[pod]
		checkTimes(t, pod, tl.At[:], "1123 01:02:", w[:])
	}
	a := got["default/w-000-evm-node"]
	if d, ok := a.Between(TerminationComplete, SyncTerminatedEnter); !ok || d != 929600*time.Microsecond {
		t.Errorf("termination complete → SyncTerminatedPod enter = %v, %t", d, ok)
	}
	if _, ok := got["default/w-001-evm-node"].Between(RemovalSeen, PodDirRemoved); ok {
		t.Error("B's directory removal is in its timeline")
	}
	keys := map[string]bool{}
	for i, p := range DeletionPhases() {
		if int(p) != i || p.Key() == "" || p.String() == "" || p.Message() == "" || keys[p.Key()] {
			t.Errorf("phase %d: key %q, name %q, message %q", i, p.Key(), p, p.Message())
		}
		keys[p.Key()] = true
	}
}

func TestParseExitTimelines(t *testing.T) {
	got, err := ParseExitTimelines(strings.NewReader(exitLog))
	if err != nil {
		t.Fatal(err)
	}
	// Each phase's time after 10:00, "" where missing.
	want := map[string][NumExitPhases]string{
		uidA: {"00.100000", "00.150000", "00.200000", "01.100000", "01.300000", "01.400000"},
		uidB: {"", "00.900000", "02.000000", "", "", ""},
	}
	if len(got) != len(want) {
		t.Errorf("timelines for %d pods, want %d: %v", len(got), len(want), got)
	}
	for uid, w := range want {
		tl := got[uid]
		checkTimes(t, uid, tl.At[:], "1128 10:00:", w[:])
	}
}
