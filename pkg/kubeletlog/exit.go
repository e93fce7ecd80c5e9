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
	"io"
	"regexp"
	"strings"
	"time"
)

// ExitPhase is a step from a container's exit on its own to its pod's
// volumes torn down, as the kubelet logs it at --v=4.
type ExitPhase int

const (
	// ExitEventSeen is EventedPLEG's watcher requesting the pod's relist
	// on the runtime's CONTAINER_STOPPED event.
	ExitEventSeen ExitPhase = iota
	// ExitRelisted is the PLEG reporting the container dead to the sync
	// loop, after a relist of the pod (on demand or periodic).
	ExitRelisted
	// ExitPodTerminal is the pod worker finding the pod terminal.
	ExitPodTerminal
	// ExitTerminatingEnter is the start of SyncTerminatingPod, once the
	// pod worker had a pod status newer than its terminal sync.
	ExitTerminatingEnter
	// ExitTerminated is the pod worker recording the termination: the
	// containers and the sandbox are stopped.
	ExitTerminated
	// ExitTearDownDone is the pod's last volume torn down.
	ExitTearDownDone
)

// NumExitPhases is how many ExitPhases there are.
const NumExitPhases = int(ExitTearDownDone) + 1

// exitPhases describe each phase: a stable key for JSON, a name for
// reports, and the kubelet's log message.
var exitPhases = [NumExitPhases]struct{ key, name, message string }{
	ExitEventSeen:        {"eventSeen", "runtime event seen", "Evented PLEG: requested pod relist after container termination"},
	ExitRelisted:         {"relisted", "relist saw the exit", "SyncLoop (PLEG): event for pod"},
	ExitPodTerminal:      {"podTerminal", "pod found terminal", "Pod is terminal"},
	ExitTerminatingEnter: {"terminatingEnter", "SyncTerminatingPod enter", "SyncTerminatingPod enter"},
	ExitTerminated:       {"terminated", "termination complete", TerminationComplete.Message()},
	ExitTearDownDone:     {"lastTearDown", "last TearDown succeeded", TearDownDone.Message()},
}

// ExitPhases are every phase, in order.
func ExitPhases() []ExitPhase {
	ps := make([]ExitPhase, NumExitPhases)
	for i := range ps {
		ps[i] = ExitPhase(i)
	}
	return ps
}

// Key names the phase in JSON.
func (p ExitPhase) Key() string { return exitPhases[p].key }

// String names the phase in reports.
func (p ExitPhase) String() string { return exitPhases[p].name }

// ExitTimeline is when the kubelet logged each phase of a pod's way from a
// container's exit to its volumes torn down.
type ExitTimeline struct {
	// At is each phase's time; zero where the log lacks the phase.
	At [NumExitPhases]time.Time
}

// Has reports whether the log has phase p.
func (t ExitTimeline) Has(p ExitPhase) bool { return !t.At[p].IsZero() }

// plegDiedID finds the pod UID in a PLEG event of a dead container, as
// klog writes the event: {ID:<uid> Type:ContainerDied ...}, or as JSON.
var plegDiedID = regexp.MustCompile(`"?ID"?:"?([0-9a-fA-F-]+)"?[ ,]+"?Type"?:"?ContainerDied`)

// ParseExitTimelines reads a kubelet log in klog's text format and returns,
// by pod UID, when the kubelet logged each phase: the first line of each
// phase, but the last TearDown. Only pods whose PLEG reported a dead
// container have a timeline; the caller picks the pods whose containers
// exited on their own. The phases at --v=4 need the kubelet at --v=4.
func ParseExitTimelines(r io.Reader) (map[string]ExitTimeline, error) {
	year := time.Now().Year()
	timelines := map[string]*ExitTimeline{}
	var pending []struct {
		phase ExitPhase
		uid   string
		at    time.Time
	}
	err := scanKlog(r, func(l klogLine) error {
		phase, uid, ok := exitEventOf(l)
		if !ok {
			return nil
		}
		at, err := l.time(year)
		if err != nil {
			return err
		}
		pending = append(pending, struct {
			phase ExitPhase
			uid   string
			at    time.Time
		}{phase, uid, at})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, ev := range pending {
		if ev.phase == ExitRelisted && timelines[ev.uid] == nil {
			timelines[ev.uid] = &ExitTimeline{}
		}
	}
	for _, ev := range pending {
		t := timelines[ev.uid]
		if t == nil {
			continue
		}
		if ev.phase == ExitTearDownDone || !t.Has(ev.phase) {
			t.At[ev.phase] = ev.at
		}
	}
	out := make(map[string]ExitTimeline, len(timelines))
	for uid, t := range timelines {
		out[uid] = *t
	}
	return out, nil
}

// exitEventOf classifies a line: its phase and pod UID.
func exitEventOf(l klogLine) (ExitPhase, string, bool) {
	if !l.structured {
		if strings.HasPrefix(l.msg, ExitTearDownDone.message()) {
			if m := uidInText.FindStringSubmatch(l.msg); m != nil {
				return ExitTearDownDone, m[1], true
			}
		}
		return 0, "", false
	}
	switch l.msg {
	case ExitRelisted.message():
		if m := plegDiedID.FindStringSubmatch(l.kvs); m != nil {
			return ExitRelisted, m[1], true
		}
		return 0, "", false
	case ExitEventSeen.message(), ExitPodTerminal.message(), ExitTerminatingEnter.message(), ExitTerminated.message():
		uid, ok := l.value("podUID")
		if !ok || uid == "" {
			return 0, "", false
		}
		for _, p := range []ExitPhase{ExitEventSeen, ExitPodTerminal, ExitTerminatingEnter, ExitTerminated} {
			if l.msg == p.message() {
				return p, uid, true
			}
		}
	}
	return 0, "", false
}

// message is the kubelet's log message of the phase, or the start of it.
func (p ExitPhase) message() string { return exitPhases[p].message }
