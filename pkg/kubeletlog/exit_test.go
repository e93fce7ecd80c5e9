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
	"strings"
	"testing"
	"time"
)

// exitLog is a kubelet log at --v=4: pod A's container exits and the
// watcher sees it; pod B's exit is seen by a periodic relist only (no
// event), and its PLEG event is written as JSON; pod C only runs.
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

func TestParseExitTimelines(t *testing.T) {
	got, err := ParseExitTimelines(strings.NewReader(exitLog))
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		tt, err := time.ParseInLocation("2006 0102 15:04:05.000000", "2026 1128 "+s, time.Local)
		if err != nil {
			t.Fatal(err)
		}
		return tt.AddDate(time.Now().Year()-2026, 0, 0)
	}
	want := map[string]ExitTimeline{
		uidA: {At: [NumExitPhases]time.Time{
			ExitEventSeen:        at("10:00:00.100000"),
			ExitRelisted:         at("10:00:00.150000"),
			ExitPodTerminal:      at("10:00:00.200000"),
			ExitTerminatingEnter: at("10:00:01.100000"),
			ExitTerminated:       at("10:00:01.300000"),
			ExitTearDownDone:     at("10:00:01.400000"),
		}},
		uidB: {At: [NumExitPhases]time.Time{
			ExitRelisted:    at("10:00:00.900000"),
			ExitPodTerminal: at("10:00:02.000000"),
		}},
	}
	if len(got) != len(want) {
		t.Fatalf("timelines for %d pods, want %d: %v", len(got), len(want), got)
	}
	for uid, w := range want {
		g, ok := got[uid]
		if !ok {
			t.Errorf("no timeline for %s", uid)
			continue
		}
		for _, p := range ExitPhases() {
			if !g.At[p].Equal(w.At[p]) {
				t.Errorf("%s: %s at %v, want %v", uid, p, g.At[p], w.At[p])
			}
		}
	}
}
