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
	"strings"
	"testing"
	"time"
)

// The UIDs of the pods in deletionLog.
const (
	uidA = "6f1d0c3b2a594e8d9c7b5a3f1e0d2c4b"
	uidB = "0b9a8c7d6e5f40312a1b2c3d4e5f6a7b"
	uidC = "c1c2c3c4c5c6c7c8c9c0cacbcccdcecf"
	uidD = "d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4d4"
)

// deletionLog is a kubelet log at --v=4 in the formats of the kubelet's
// source: klog's header, quoted messages with key=value pairs for
// structured lines, free text for klog.Infof. Pod A is deleted from start to
// end; pod B is removed a second later, so that its lines interleave with
// A's, and its directory is never removed; pods C and D are removed
// together; C's directory is removed on the second try; D's lines give no
// UID with its name, as at --v=3, so that its UID-only lines are lost.
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

func TestParseDeletionTimeline(t *testing.T) {
	got, err := ParseDeletionTimeline(strings.NewReader(deletionLog))
	if err != nil {
		t.Fatal(err)
	}
	// Each phase's time, "" where missing.
	tests := []struct {
		pod, uid string
		want     [NumDeletionPhases]string
	}{{
		pod: "default/w-000-evm-node", uid: uidA,
		want: [NumDeletionPhases]string{"03.000100", "03.120000", "03.120400", "04.050000", "04.100000", "04.180000", "04.200000", "04.200500", "05.000000"},
	}, {
		pod: "default/w-001-evm-node", uid: uidB,
		want: [NumDeletionPhases]string{"04.000200", "04.130000", "04.130200", "05.050000", "05.100000", "05.150000", "05.200000", "05.200100", ""},
	}, {
		pod: "default/w-002-evm-node", uid: uidC,
		want: [NumDeletionPhases]string{"04.300000", "04.300500", "", "", "", "", "", "", "11.000000"},
	}, {
		pod: "default/w-003-evm-node", uid: "",
		want: [NumDeletionPhases]string{"04.300000", "", "", "", "", "", "04.450000", "", ""},
	}}
	if len(got) != len(tests) {
		t.Errorf("timelines of %d pods, want %d: %v", len(got), len(tests), got)
	}
	year := time.Now().Year()
	for _, tc := range tests {
		tl, ok := got[tc.pod]
		if !ok {
			t.Errorf("no timeline of %s", tc.pod)
			continue
		}
		if tl.UID != tc.uid {
			t.Errorf("%s: UID %q, want %q", tc.pod, tl.UID, tc.uid)
		}
		for _, p := range DeletionPhases() {
			var want time.Time
			if tc.want[p] != "" {
				want = time.Date(year, time.November, 23, 1, 2, 0, 0, time.Local)
				d, err := time.ParseDuration(tc.want[p] + "s")
				if err != nil {
					t.Fatal(err)
				}
				want = want.Add(d)
			}
			if !tl.At[p].Equal(want) {
				t.Errorf("%s, %s: at %v, want %v", tc.pod, p, tl.At[p], want)
			}
		}
	}
	a := got["default/w-000-evm-node"]
	if d, ok := a.Between(TerminationComplete, SyncTerminatedEnter); !ok || d != 929600*time.Microsecond {
		t.Errorf("termination complete → SyncTerminatedPod enter = %v, %t", d, ok)
	}
	if _, ok := got["default/w-001-evm-node"].Between(RemovalSeen, PodDirRemoved); ok {
		t.Error("B's directory removal is in its timeline")
	}
}

func TestDeletionPhases(t *testing.T) {
	keys := map[string]bool{}
	for i, p := range DeletionPhases() {
		if int(p) != i || p.Key() == "" || p.String() == "" || p.Message() == "" || keys[p.Key()] {
			t.Errorf("phase %d: key %q, name %q, message %q", i, p.Key(), p, p.Message())
		}
		keys[p.Key()] = true
	}
	for _, tc := range []struct {
		phase DeletionPhase
		level int
	}{{RemovalSeen, 2}, {ContainersKilled, 4}, {TearDownDone, 0}, {VolumesUnmounted, 3}, {PodDirRemoved, 3}} {
		if got := tc.phase.Verbosity(); got != tc.level {
			t.Errorf("%s is logged at V(%d), want V(%d)", tc.phase, got, tc.level)
		}
	}
}

func TestParseKlogLine(t *testing.T) {
	tests := []struct {
		name, line string
		ok         bool
		severity   byte
		msg        string
		structured bool
		values     map[string]string
	}{{
		name:     "structured",
		line:     `I1123 01:02:03.456789    1234 kubelet.go:2771] "SyncLoop REMOVE" source="file" pods=["default/a","default/b"]`,
		ok:       true,
		severity: 'I', msg: "SyncLoop REMOVE", structured: true,
		values: map[string]string{"source": "file", "pods": `["default/a","default/b"]`, "pod": ""},
	}, {
		name:     "escaped quotes in the message and a value",
		line:     `W1123 01:02:03.456789 1234567 x.go:1] "volume \"a\" pod=\"default/x\"" err="say \"no\"" pod="default/y" gracePeriod=2 obj={"a":"} b"} last=1`,
		ok:       true,
		severity: 'W', msg: `volume "a" pod="default/x"`, structured: true,
		values: map[string]string{"err": `say "no"`, "pod": "default/y", "gracePeriod": "2", "obj": `{"a":"} b"}`, "last": "1"},
	}, {
		name:     "printf-style",
		line:     `I1123 01:02:03.456789    1234 operation_generator.go:791] UnmountVolume.TearDown succeeded for volume "v" pod "u" (UID: "u"). InnerVolumeSpecName "v"`,
		ok:       true,
		severity: 'I', msg: `UnmountVolume.TearDown succeeded for volume "v" pod "u" (UID: "u"). InnerVolumeSpecName "v"`,
		values: map[string]string{"pod": ""},
	}, {
		name:     "multi-line value",
		line:     `E1123 01:02:03.456789    1234 x.go:1] "Failed" err=<`,
		ok:       true,
		severity: 'E', msg: "Failed", structured: true,
		values: map[string]string{"err": "<"},
	}, {
		name: "continuation of a multi-line value",
		line: "\tline 2 of the error",
	}, {
		name: "no header",
		line: `"SyncLoop REMOVE" pods=["default/a"]`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, ok := parseKlogLine(tc.line)
			if ok != tc.ok {
				t.Fatalf("parsed %t, want %t", ok, tc.ok)
			}
			if !ok {
				return
			}
			if l.severity != tc.severity || l.msg != tc.msg || l.structured != tc.structured || l.stamp != "1123 01:02:03.456789" {
				t.Errorf("got %c %q %q structured %t, want %c %q structured %t", l.severity, l.stamp, l.msg, l.structured, tc.severity, tc.msg, tc.structured)
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
