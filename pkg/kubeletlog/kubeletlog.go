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
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The kubelet's lines around its volume waits (V(3)), and a mount's (V(1), V(4)).
const (
	MountWaitLine   = "Waiting for volumes to attach and mount for pod"
	MountDoneLine   = "All volumes are attached and mounted for pod"
	UnmountWaitLine = "Waiting for volumes to unmount for pod"
	UnmountDoneLine = "All volumes are unmounted for pod"
	SetUpDoneLine   = "MountVolume.SetUp succeeded for volume"
)

// VolumeWaits are each pod's first mount and unmount wait, and its end.
type VolumeWaits struct {
	Mount, Unmount         map[string]time.Duration
	MountedAt, UnmountedAt map[string]time.Time
	// LastSetUp is, per ended mount wait, the time from the pod's last
	// SetUpDoneLine (or the wait's start, if later) to the wait's end.
	LastSetUp map[string]time.Duration
}

// ParseRemounts returns, for each pod sync (MountWaitLine) from from until
// to, the time to the pod's last SetUpDoneLine (--v=4) before its next sync;
// missed counts the syncs without one.
func ParseRemounts(r io.Reader, from, to time.Time) (remounts []time.Duration, missed int, err error) {
	synced := map[string]time.Time{}
	setUp := map[string]time.Time{}
	done := func(pod string) {
		if s, ok := synced[pod]; ok {
			if at, ok := setUp[pod]; ok {
				remounts = append(remounts, at.Sub(s))
			} else {
				missed++
			}
		}
		delete(synced, pod)
		delete(setUp, pod)
	}
	err = scanKlog(r, func(l klogLine) error {
		sync := l.msg == MountWaitLine
		if !sync && !strings.HasPrefix(l.msg, SetUpDoneLine) {
			return nil
		}
		pod, ok := l.value("pod")
		if !ok {
			return nil
		}
		at, err := l.time(from.Year())
		if err != nil {
			return err
		}
		if sync {
			done(pod)
			if !at.Before(from) && at.Before(to) {
				synced[pod] = at
			}
		} else if _, ok := synced[pod]; ok {
			setUp[pod] = at
		}
		return nil
	})
	for _, pod := range slices.Sorted(maps.Keys(synced)) {
		done(pod)
	}
	return remounts, missed, err
}

// ParseVolumeWaits reads a kubelet log in klog's text format.
func ParseVolumeWaits(r io.Reader) (VolumeWaits, error) {
	w := VolumeWaits{Mount: map[string]time.Duration{}, Unmount: map[string]time.Duration{},
		MountedAt: map[string]time.Time{}, UnmountedAt: map[string]time.Time{}, LastSetUp: map[string]time.Duration{}}
	year := time.Now().Year()
	mountStart, unmountStart, lastSetUp := map[string]time.Time{}, map[string]time.Time{}, map[string]time.Time{}
	err := scanKlog(r, func(l klogLine) error {
		starts, done, doneAt := mountStart, w.Mount, w.MountedAt
		setUp := strings.HasPrefix(l.msg, SetUpDoneLine)
		switch l.msg {
		case UnmountWaitLine, UnmountDoneLine:
			starts, done, doneAt = unmountStart, w.Unmount, w.UnmountedAt
		case MountWaitLine, MountDoneLine:
		default:
			if !setUp {
				return nil
			}
		}
		pod, ok := l.value("pod")
		if !ok {
			return nil
		}
		at, err := l.time(year)
		if err != nil {
			return err
		}
		s, waiting := starts[pod]
		switch _, measured := done[pod]; {
		case setUp:
			lastSetUp[pod] = at
		case measured: // only the first wait of each pod
		case l.msg == MountWaitLine || l.msg == UnmountWaitLine:
			if !waiting {
				starts[pod] = at
			}
		case waiting:
			d := at.Sub(s)
			if d < 0 { // across New Year
				d += 365 * 24 * time.Hour
			}
			done[pod], doneAt[pod] = d, at
			if set, ok := lastSetUp[pod]; ok && l.msg == MountDoneLine && !set.After(at) {
				w.LastSetUp[pod] = min(at.Sub(set), d)
			}
		}
		return nil
	})
	return w, err
}

// ParseFile runs parse on the log file at path.
func ParseFile[T any](path string, parse func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return parse(f)
}

// Lines returns the lines of the log file at path that contain substr.
func Lines(path, substr string) ([]string, error) {
	return ParseFile(path, func(r io.Reader) (lines []string, err error) {
		err = scanLines(r, func(line string) error {
			if strings.Contains(line, substr) {
				lines = append(lines, line)
			}
			return nil
		})
		return lines, err
	})
}

// DeletionPhase is a step of a pod's deletion that the kubelet logs, in order.
type DeletionPhase int

const (
	RemovalSeen         DeletionPhase = iota // the pod's removal reaching the sync loop (V(2))
	ContainersKilled                         // the end of SyncTerminatingPod (V(4))
	TerminationComplete                      // the pod worker recording the termination (V(4))
	SyncTerminatedEnter                      // the start of SyncTerminatedPod (V(4))
	UnmountStarted                           // the reconciler starting the pod's first unmount
	TearDownDone                             // the pod's last volume torn down
	VolumesUnmounted                         // the end of WaitForUnmount (V(3))
	SyncTerminatedExit                       // the end of SyncTerminatedPod (V(4))
	PodDirRemoved                            // the housekeeping removing the pod's directory (V(3))
)

// NumDeletionPhases is how many DeletionPhases there are.
const NumDeletionPhases = int(PodDirRemoved) + 1

// deletionPhases are each phase's JSON key, report name and log message.
var deletionPhases = [NumDeletionPhases]struct{ key, name, message string }{
	RemovalSeen:         {"removalSeen", "removal seen", "SyncLoop REMOVE"},
	ContainersKilled:    {"containersKilled", "containers killed", "Pod termination stopped all running containers"},
	TerminationComplete: {"terminationComplete", "termination complete", "Pod terminated all containers successfully"},
	SyncTerminatedEnter: {"syncTerminatedEnter", "SyncTerminatedPod enter", "SyncTerminatedPod enter"},
	UnmountStarted:      {"unmountStarted", "first unmount started", "operationExecutor.UnmountVolume started for volume "},
	TearDownDone:        {"lastTearDown", "last TearDown succeeded", "UnmountVolume.TearDown succeeded for volume "},
	VolumesUnmounted:    {"volumesUnmounted", "all volumes unmounted", UnmountDoneLine},
	SyncTerminatedExit:  {"syncTerminatedExit", "SyncTerminatedPod exit", "SyncTerminatedPod exit"},
	PodDirRemoved:       {"podDirRemoved", "pod directory removed", "Orphaned pod found, removing"},
}

// podDirRemovalFailed (event dirRemovalFailed) follows a failed PodDirRemoved.
const (
	podDirRemovalFailed               = "Failed to remove orphaned pod dir"
	dirRemovalFailed    DeletionPhase = -1
)

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

// Message is the kubelet's log message of the phase, or its start.
func (p DeletionPhase) Message() string { return deletionPhases[p].message }

// DeletionTimeline is when the kubelet logged each phase; zero if it did not.
type DeletionTimeline struct {
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

// uidInText finds the pod UID in the volume operations' text lines.
var uidInText = regexp.MustCompile(`\(UID: "([^"]+)"\)`)

// deletionEvent is a phase's line, or a pod directory's removal failing.
type deletionEvent struct {
	phase DeletionPhase
	pods  []string
	uid   string
}

// ParseDeletionTimeline returns, for each pod whose removal the sync loop saw,
// each phase's first line after it, but the last TearDown and the directory
// removal that did not fail; UID-only lines are matched through others.
func ParseDeletionTimeline(r io.Reader) (map[string]DeletionTimeline, error) {
	podOf := map[string]string{}
	events, ats, err := collect(r, func(l klogLine) (deletionEvent, bool) { return deletionEventOf(l, podOf) })
	if err != nil {
		return nil, err
	}
	timelines := map[string]DeletionTimeline{}
	for i, ev := range events {
		if ev.phase == RemovalSeen {
			for _, pod := range ev.pods {
				if _, seen := timelines[pod]; !seen {
					t := DeletionTimeline{}
					t.At[RemovalSeen] = ats[i]
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
		switch {
		case !removed: // before the removal, or not a pod we know
			continue
		case ev.phase == dirRemovalFailed:
			t.At[PodDirRemoved] = time.Time{}
		case ev.phase == TearDownDone || !t.Has(ev.phase):
			t.At[ev.phase] = ats[i]
		}
		timelines[pod] = t
	}
	return timelines, nil
}

// deletionEventOf classifies a line, and records in podOf the UID's pod.
func deletionEventOf(l klogLine, podOf map[string]string) (deletionEvent, bool) {
	if !l.structured {
		if m := uidInText.FindStringSubmatch(l.msg); m != nil && strings.HasPrefix(l.msg, TearDownDone.Message()) {
			return deletionEvent{phase: TearDownDone, uid: m[1]}, true
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
	switch {
	case l.msg == podDirRemovalFailed:
		ev.phase = dirRemovalFailed
	case l.msg == RemovalSeen.Message():
		ev.phase = RemovalSeen
		list, ok := l.value("pods")
		if !ok || json.Unmarshal([]byte(list), &ev.pods) != nil {
			return ev, false
		}
	case strings.HasPrefix(l.msg, UnmountStarted.Message()):
		m := uidInText.FindStringSubmatch(l.msg)
		if m == nil {
			return ev, false
		}
		ev.phase, ev.uid = UnmountStarted, m[1]
	default: // the other phases' messages are whole
		i := slices.IndexFunc(DeletionPhases(), func(p DeletionPhase) bool { return p.Message() == l.msg })
		if i < 0 {
			return ev, false
		}
		ev.phase = DeletionPhase(i)
	}
	return ev, len(ev.pods) > 0 || ev.uid != ""
}

// collect returns the events that of finds in r's lines, and their times.
func collect[E any](r io.Reader, of func(klogLine) (E, bool)) (events []E, ats []time.Time, err error) {
	year := time.Now().Year()
	err = scanKlog(r, func(l klogLine) error {
		ev, ok := of(l)
		if !ok {
			return nil
		}
		at, err := l.time(year)
		events, ats = append(events, ev), append(ats, at)
		return err
	})
	return events, ats, err
}

// ExitPhase is a step from a container's exit to its pod's volumes torn down.
type ExitPhase int

const (
	ExitEventSeen        ExitPhase = iota // EventedPLEG requesting a relist on CONTAINER_STOPPED
	ExitRelisted                          // the PLEG reporting the container dead to the sync loop
	ExitPodTerminal                       // the pod worker finding the pod terminal
	ExitTerminatingEnter                  // the start of SyncTerminatingPod
	ExitTerminated                        // the pod worker recording the termination
	ExitTearDownDone                      // the pod's last volume torn down
)

// NumExitPhases is how many ExitPhases there are.
const NumExitPhases = int(ExitTearDownDone) + 1

// exitMessages are the kubelet's log messages of the phases, or their start.
var exitMessages = [NumExitPhases]string{
	ExitEventSeen:        "Evented PLEG: requested pod relist after container termination",
	ExitRelisted:         "SyncLoop (PLEG): event for pod",
	ExitPodTerminal:      "Pod is terminal",
	ExitTerminatingEnter: "SyncTerminatingPod enter",
	ExitTerminated:       TerminationComplete.Message(),
	ExitTearDownDone:     TearDownDone.Message(),
}

// ExitTimeline is when the kubelet logged each phase; zero if it did not.
type ExitTimeline struct {
	At [NumExitPhases]time.Time
}

// Has reports whether the log has phase p.
func (t ExitTimeline) Has(p ExitPhase) bool { return !t.At[p].IsZero() }

// plegDiedID finds the pod UID in a PLEG ContainerDied event, in Go or JSON syntax.
var plegDiedID = regexp.MustCompile(`"?ID"?:"?([0-9a-fA-F-]+)"?[ ,]+"?Type"?:"?ContainerDied`)

type exitEvent struct {
	phase ExitPhase
	uid   string
}

// ParseExitTimelines returns the timelines of pods with a dead container, by UID.
func ParseExitTimelines(r io.Reader) (map[string]ExitTimeline, error) {
	events, ats, err := collect(r, exitEventOf)
	if err != nil {
		return nil, err
	}
	timelines := map[string]ExitTimeline{}
	for _, ev := range events {
		if ev.phase == ExitRelisted {
			timelines[ev.uid] = ExitTimeline{}
		}
	}
	for i, ev := range events {
		if t, ok := timelines[ev.uid]; ok && (ev.phase == ExitTearDownDone || !t.Has(ev.phase)) {
			t.At[ev.phase] = ats[i]
			timelines[ev.uid] = t
		}
	}
	return timelines, nil
}

func exitEventOf(l klogLine) (exitEvent, bool) {
	var m []string
	switch {
	case !l.structured:
		if m = uidInText.FindStringSubmatch(l.msg); m != nil && strings.HasPrefix(l.msg, exitMessages[ExitTearDownDone]) {
			return exitEvent{ExitTearDownDone, m[1]}, true
		}
	case l.msg == exitMessages[ExitRelisted]:
		if m = plegDiedID.FindStringSubmatch(l.kvs); m != nil {
			return exitEvent{ExitRelisted, m[1]}, true
		}
	default:
		for _, p := range []ExitPhase{ExitEventSeen, ExitPodTerminal, ExitTerminatingEnter, ExitTerminated} {
			if l.msg == exitMessages[p] {
				uid, _ := l.value("podUID")
				return exitEvent{p, uid}, uid != ""
			}
		}
	}
	return exitEvent{}, false
}

// maxLogLine is how much of a line the parsers read: longer ones are cut.
const maxLogLine = 1 << 20

// klogPrefix is klog's header, "Lmmdd hh:mm:ss.uuuuuu threadid file:line] ".
var klogPrefix = regexp.MustCompile(`^[IWEF](\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ [^\]\s]+\] `)

// klogLine is one line of a log in klog's text format: the header's stamp,
// and the message, unquoted when structured (klog.InfoS quotes it and follows
// it with kvs, the key=value pairs; klog.Infof writes it as is).
type klogLine struct {
	stamp, msg string
	structured bool
	kvs        string
}

// parseKlogLine parses a line in klog's text format, or reports false.
func parseKlogLine(s string) (klogLine, bool) {
	m := klogPrefix.FindStringSubmatchIndex(s)
	if m == nil {
		return klogLine{}, false
	}
	l := klogLine{stamp: s[m[2]:m[3]], msg: s[m[1]:]}
	if q, err := strconv.QuotedPrefix(l.msg); err == nil && q[0] == '"' {
		msg, _ := strconv.Unquote(q) // valid: QuotedPrefix checked it
		l.msg, l.structured, l.kvs = msg, true, l.msg[len(q):]
	}
	return l, true
}

// value is the value of key in a structured line's pairs: a quoted string
// unquoted, a JSON list or object as its text, anything else up to the next
// space (a multi-line value's "<").
func (l klogLine) value(key string) (string, bool) {
	for rest := l.kvs; ; {
		k, v, ok := strings.Cut(strings.TrimLeft(rest, " "), "=")
		if !ok || k == "" || strings.Contains(k, " ") {
			return "", false
		}
		switch {
		case strings.HasPrefix(v, `"`):
			q, err := strconv.QuotedPrefix(v)
			if err != nil {
				return "", false
			}
			rest = v[len(q):]
			v, _ = strconv.Unquote(q)
		case strings.HasPrefix(v, "["), strings.HasPrefix(v, "{"):
			dec := json.NewDecoder(strings.NewReader(v))
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return "", false
			}
			n := int(dec.InputOffset())
			v, rest = v[:n], v[n:]
		default:
			v, rest, _ = strings.Cut(v, " ")
		}
		if k == key {
			return v, true
		}
	}
}

// time is when the line was logged, in year: klog omits the year.
func (l klogLine) time(year int) (time.Time, error) {
	at, err := time.ParseInLocation("2006 0102 15:04:05.000000", fmt.Sprintf("%d %s", year, l.stamp), time.Local)
	if err != nil {
		return at, fmt.Errorf("bad klog time %q: %w", l.stamp, err)
	}
	return at, nil
}

// scanKlog calls fn with each line of r in klog's text format.
func scanKlog(r io.Reader, fn func(klogLine) error) error {
	return scanLines(r, func(s string) error {
		if l, ok := parseKlogLine(s); ok {
			return fn(l)
		}
		return nil
	})
}

// scanLines calls fn with each line of r, cut at maxLogLine.
func scanLines(r io.Reader, fn func(string) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, more, err := br.ReadLine()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		line = append(line, chunk[:min(len(chunk), max(0, maxLogLine-len(line)))]...)
		if more {
			continue
		}
		if err := fn(string(line)); err != nil {
			return err
		}
		line = line[:0]
	}
}
