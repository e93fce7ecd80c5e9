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
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"time"
)

// DeletionPhase is a step of a pod's deletion that the kubelet logs, in
// the order the kubelet takes them.
type DeletionPhase int

const (
	// RemovalSeen is the config source's removal of the pod reaching the
	// sync loop.
	RemovalSeen DeletionPhase = iota
	// ContainersKilled is the end of SyncTerminatingPod: no container runs.
	ContainersKilled
	// TerminationComplete is the pod worker recording the termination.
	TerminationComplete
	// SyncTerminatedEnter is the start of SyncTerminatedPod, once a PLEG
	// relist has given the pod worker a status newer than the termination.
	SyncTerminatedEnter
	// UnmountStarted is the reconciler starting the pod's first unmount.
	UnmountStarted
	// TearDownDone is the pod's last volume torn down.
	TearDownDone
	// VolumesUnmounted is the end of WaitForUnmount.
	VolumesUnmounted
	// SyncTerminatedExit is the end of SyncTerminatedPod.
	SyncTerminatedExit
	// PodDirRemoved is the housekeeping removing the pod's directory.
	PodDirRemoved
)

// NumDeletionPhases is how many DeletionPhases there are.
const NumDeletionPhases = int(PodDirRemoved) + 1

// deletionPhases describe each phase: a stable key for JSON, a name for
// reports, and the kubelet's log message and its verbosity.
var deletionPhases = [NumDeletionPhases]struct {
	key, name, message string
	verbosity          int
}{
	RemovalSeen:         {"removalSeen", "removal seen", "SyncLoop REMOVE", 2},
	ContainersKilled:    {"containersKilled", "containers killed", "Pod termination stopped all running containers", 4},
	TerminationComplete: {"terminationComplete", "termination complete", "Pod terminated all containers successfully", 4},
	SyncTerminatedEnter: {"syncTerminatedEnter", "SyncTerminatedPod enter", "SyncTerminatedPod enter", 4},
	UnmountStarted:      {"unmountStarted", "first unmount started", "operationExecutor.UnmountVolume started for volume ", 0},
	TearDownDone:        {"lastTearDown", "last TearDown succeeded", "UnmountVolume.TearDown succeeded for volume ", 0},
	VolumesUnmounted:    {"volumesUnmounted", "all volumes unmounted", UnmountDoneLine, 3},
	SyncTerminatedExit:  {"syncTerminatedExit", "SyncTerminatedPod exit", "SyncTerminatedPod exit", 4},
	PodDirRemoved:       {"podDirRemoved", "pod directory removed", "Orphaned pod found, removing", 3},
}

// podDirRemovalFailed follows "Orphaned pod found, removing" when the
// directory could not be removed; the housekeeping tries again later.
const podDirRemovalFailed = "Failed to remove orphaned pod dir"

// dirRemovalFailed is the event of a podDirRemovalFailed line.
const dirRemovalFailed DeletionPhase = -1

// DeletionPhases are every phase, in order.
func DeletionPhases() []DeletionPhase {
	ps := make([]DeletionPhase, NumDeletionPhases)
	for i := range ps {
		ps[i] = DeletionPhase(i)
	}
	return ps
}

// Key names the phase in JSON.
func (p DeletionPhase) Key() string { return deletionPhases[p].key }

// String names the phase in reports.
func (p DeletionPhase) String() string { return deletionPhases[p].name }

// Message is the kubelet's log message of the phase, or the start of it
// where the message goes on with the volume.
func (p DeletionPhase) Message() string { return deletionPhases[p].message }

// Verbosity is the --v at which the kubelet logs the phase.
func (p DeletionPhase) Verbosity() int { return deletionPhases[p].verbosity }

// DeletionTimeline is when the kubelet logged each phase of a pod's
// deletion.
type DeletionTimeline struct {
	// UID is the pod's UID, if a line after the removal gave it.
	UID string
	// At is each phase's time; zero where the log lacks the phase.
	At [NumDeletionPhases]time.Time
}

// Has reports whether the log has phase p.
func (t DeletionTimeline) Has(p DeletionPhase) bool { return !t.At[p].IsZero() }

// Between is the time from phase from to phase to, if the log has both.
func (t DeletionTimeline) Between(from, to DeletionPhase) (time.Duration, bool) {
	if !t.Has(from) || !t.Has(to) {
		return 0, false
	}
	return t.At[to].Sub(t.At[from]), true
}

// uidInText finds the pod UID in the text of the volume operations' lines,
// `... pod "<uid>" (UID: "<uid>") ...`, where the pod's name is its
// volume-unique name, which is the UID too.
var uidInText = regexp.MustCompile(`\(UID: "([^"]+)"\)`)

// deletionEvent is a line of interest of a kubelet log: a phase, or a
// failure to remove a pod's directory.
type deletionEvent struct {
	phase DeletionPhase
	at    time.Time
	pods  []string
	uid   string
}

// ParseDeletionTimeline reads a kubelet log in klog's text format and
// returns, for each pod ("namespace/name") whose removal the sync loop saw,
// when the kubelet logged each phase of its deletion: the first line of
// each phase after the removal, but the last TearDown, and the pod
// directory's removal that did not fail. Lines that give only the pod's UID
// are matched to the pod through any line that gives both, wherever it is
// in the log. Phases need the kubelet at their Verbosity; those it did not
// log are missing from the timelines.
func ParseDeletionTimeline(r io.Reader) (map[string]DeletionTimeline, error) {
	year := time.Now().Year()
	podOf := map[string]string{}
	var events []deletionEvent
	err := scanKlog(r, func(l klogLine) error {
		ev, ok := deletionEventOf(l, podOf)
		if !ok {
			return nil
		}
		at, err := l.time(year)
		if err != nil {
			return err
		}
		ev.at = at
		events = append(events, ev)
		return nil
	})
	if err != nil {
		return nil, err
	}

	timelines := map[string]*DeletionTimeline{}
	for _, ev := range events {
		if ev.phase == RemovalSeen {
			for _, pod := range ev.pods {
				if _, seen := timelines[pod]; !seen {
					t := &DeletionTimeline{}
					t.At[RemovalSeen] = ev.at
					timelines[pod] = t
				}
			}
			continue
		}
		pod := podOf[ev.uid]
		if len(ev.pods) > 0 {
			pod = ev.pods[0]
		}
		t, removed := timelines[pod]
		if !removed {
			continue // before the removal, or not a pod we know
		}
		if t.UID == "" {
			t.UID = ev.uid
		}
		switch {
		case ev.phase == dirRemovalFailed:
			t.At[PodDirRemoved] = time.Time{}
		case ev.phase == TearDownDone || !t.Has(ev.phase):
			t.At[ev.phase] = ev.at
		}
	}
	out := make(map[string]DeletionTimeline, len(timelines))
	for pod, t := range timelines {
		out[pod] = *t
	}
	return out, nil
}

// deletionEventOf classifies a line, and records in podOf the pod of a UID
// if the line gives both.
func deletionEventOf(l klogLine, podOf map[string]string) (deletionEvent, bool) {
	if !l.structured {
		if strings.HasPrefix(l.msg, TearDownDone.Message()) {
			if m := uidInText.FindStringSubmatch(l.msg); m != nil {
				return deletionEvent{phase: TearDownDone, uid: m[1]}, true
			}
		}
		return deletionEvent{}, false
	}
	pod, hasPod := l.value("pod")
	uid, hasUID := l.value("podUID")
	if hasPod && hasUID && pod != "" && uid != "" {
		podOf[uid] = pod
	}
	ev := deletionEvent{uid: uid}
	if hasPod {
		ev.pods = []string{pod}
	}
	switch l.msg {
	case RemovalSeen.Message():
		list, ok := l.value("pods")
		if !ok || json.Unmarshal([]byte(list), &ev.pods) != nil {
			return ev, false
		}
		ev.phase = RemovalSeen
	case ContainersKilled.Message():
		ev.phase = ContainersKilled
	case TerminationComplete.Message():
		ev.phase = TerminationComplete
	case SyncTerminatedEnter.Message():
		ev.phase = SyncTerminatedEnter
	case VolumesUnmounted.Message():
		ev.phase = VolumesUnmounted
	case SyncTerminatedExit.Message():
		ev.phase = SyncTerminatedExit
	case PodDirRemoved.Message():
		ev.phase = PodDirRemoved
	case podDirRemovalFailed:
		ev.phase = dirRemovalFailed
	default:
		if !strings.HasPrefix(l.msg, UnmountStarted.Message()) {
			return ev, false
		}
		m := uidInText.FindStringSubmatch(l.msg)
		if m == nil {
			return ev, false
		}
		ev.phase, ev.uid = UnmountStarted, m[1]
	}
	return ev, len(ev.pods) > 0 || ev.uid != ""
}
