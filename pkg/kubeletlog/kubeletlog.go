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

// The kubelet's V(3) lines around WaitForAttachAndMount and WaitForUnmount
// (pkg/kubelet/volumemanager/volume_manager.go), which time the volume
// manager without patching it, and the start of the line of a volume's mount
// succeeding (V(1) for a first mount, V(4) for a remount).
const (
	MountWaitLine   = "Waiting for volumes to attach and mount for pod"
	MountDoneLine   = "All volumes are attached and mounted for pod"
	UnmountWaitLine = "Waiting for volumes to unmount for pod"
	UnmountDoneLine = "All volumes are unmounted for pod"
	SetUpDoneLine   = "MountVolume.SetUp succeeded for volume"
)

// VolumeWaits are the volume manager's first wait of each kind per pod
// ("namespace/name") in a kubelet log, from its "Waiting" line to its "All
// volumes" line, and when each wait ended.
type VolumeWaits struct {
	Mount, Unmount         map[string]time.Duration
	MountedAt, UnmountedAt map[string]time.Time
	// LastSetUp is, per ended mount wait, the time from the pod's last
	// SetUpDoneLine before the wait's end (or from the wait's start, if
	// later) to the end: how long the volume manager took to notice that
	// the last volume was mounted.
	LastSetUp map[string]time.Duration
}

// ParseRemounts reads a kubelet log and returns, for each pod sync from
// from until to (its MountWaitLine, which every sync of a running pod logs
// before ReprocessPod asks for the remount of its configMap, secret,
// projected and downwardAPI volumes), the time to the pod's last
// SetUpDoneLine before its next sync; missed counts the syncs without one.
// The remounts' lines need --v=4.
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
				// From the later of the last mount and the wait's start.
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

// DeletionPhase is a step of a pod's deletion that the kubelet logs, in
// the order the kubelet takes them, at the --v given with each.
type DeletionPhase int

const (
	// RemovalSeen is the config source's removal of the pod reaching the
	// sync loop (V(2)).
	RemovalSeen DeletionPhase = iota
	// ContainersKilled is the end of SyncTerminatingPod: no container runs
	// (V(4)).
	ContainersKilled
	// TerminationComplete is the pod worker recording the termination (V(4)).
	TerminationComplete
	// SyncTerminatedEnter is the start of SyncTerminatedPod, once a PLEG
	// relist has given the pod worker a status newer than the termination
	// (V(4)).
	SyncTerminatedEnter
	// UnmountStarted is the reconciler starting the pod's first unmount.
	UnmountStarted
	// TearDownDone is the pod's last volume torn down.
	TearDownDone
	// VolumesUnmounted is the end of WaitForUnmount (V(3)).
	VolumesUnmounted
	// SyncTerminatedExit is the end of SyncTerminatedPod (V(4)).
	SyncTerminatedExit
	// PodDirRemoved is the housekeeping removing the pod's directory (V(3)).
	PodDirRemoved
)

// NumDeletionPhases is how many DeletionPhases there are.
const NumDeletionPhases = int(PodDirRemoved) + 1

// deletionPhases describe each phase: a stable key for JSON, a name for
// reports, and the kubelet's log message.
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

// DeletionTimeline is when the kubelet logged each phase of a pod's
// deletion.
type DeletionTimeline struct {
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
	pods  []string
	uid   string
}

// ParseDeletionTimeline reads a kubelet log in klog's text format and
// returns, for each pod ("namespace/name") whose removal the sync loop saw,
// when the kubelet logged each phase of its deletion: the first line of
// each phase after the removal, but the last TearDown, and the pod
// directory's removal that did not fail. Lines that give only the pod's UID
// are matched to the pod through any line that gives both, wherever it is
// in the log. Phases the kubelet did not log at its --v are missing.
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

// deletionEventOf classifies a line, and records in podOf the pod of a UID
// if the line gives both.
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
	default:
		// The other phases' messages are whole.
		i := slices.IndexFunc(DeletionPhases(), func(p DeletionPhase) bool { return p.Message() == l.msg })
		if i < 0 {
			return ev, false
		}
		ev.phase = DeletionPhase(i)
	}
	return ev, len(ev.pods) > 0 || ev.uid != ""
}

// collect returns the events that of finds in the lines of r, a kubelet log
// in klog's text format, and the times of their lines.
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

// exitMessages are the kubelet's log messages of the phases, or their start.
var exitMessages = [NumExitPhases]string{
	ExitEventSeen:        "Evented PLEG: requested pod relist after container termination",
	ExitRelisted:         "SyncLoop (PLEG): event for pod",
	ExitPodTerminal:      "Pod is terminal",
	ExitTerminatingEnter: "SyncTerminatingPod enter",
	ExitTerminated:       TerminationComplete.Message(),
	ExitTearDownDone:     TearDownDone.Message(),
}

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

// exitEvent is a line of a phase of a pod's exit.
type exitEvent struct {
	phase ExitPhase
	uid   string
}

// ParseExitTimelines reads a kubelet log in klog's text format and returns,
// by pod UID, when the kubelet logged each phase: the first line of each
// phase, but the last TearDown. Only pods whose PLEG reported a dead
// container have a timeline; the caller picks the pods whose containers
// exited on their own.
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

// exitEventOf classifies a line.
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

// maxLogLine is how much of a log line the parsers look at. The lines they
// match are short; longer lines, such as a pod's status at a high
// verbosity, are cut rather than failing the parse.
const maxLogLine = 1 << 20

// klogPrefix is klog's header, "Lmmdd hh:mm:ss.uuuuuu threadid file:line] ",
// as both klog and its textlogger (the kubelet's --logging-format=text)
// write it.
var klogPrefix = regexp.MustCompile(`^[IWEF](\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ [^\]\s]+\] `)

// klogLine is one line of a log in klog's text format.
type klogLine struct {
	// stamp is the header's time, "mmdd hh:mm:ss.uuuuuu", without the year.
	stamp string
	// msg is the message, unquoted when structured: klog.InfoS and a
	// logr.Logger quote it with strconv.Quote and follow it with kvs, the
	// key=value pairs; klog.Infof writes it as is, without pairs.
	msg        string
	structured bool
	kvs        string
}

// parseKlogLine parses a line in klog's text format, or reports false. A
// structured message may hold escaped quotes, as messages built with %q do.
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
// unquoted, a JSON list or object (klog.KObjSlice, for one) as its text,
// anything else up to the next space. A multi-line value ("key=<") has no
// value on the line itself.
func (l klogLine) value(key string) (string, bool) {
	rest := l.kvs
	for {
		rest = strings.TrimLeft(rest, " ")
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 || strings.ContainsRune(rest[:eq], ' ') {
			return "", false
		}
		k := rest[:eq]
		rest = rest[eq+1:]
		var v string
		switch {
		case strings.HasPrefix(rest, `"`):
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return "", false
			}
			v, _ = strconv.Unquote(q)
			rest = rest[len(q):]
		case strings.HasPrefix(rest, "["), strings.HasPrefix(rest, "{"):
			dec := json.NewDecoder(strings.NewReader(rest))
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return "", false
			}
			n := int(dec.InputOffset())
			v, rest = rest[:n], rest[n:]
		default:
			end := strings.IndexByte(rest, ' ')
			if end < 0 {
				end = len(rest)
			}
			v, rest = rest[:end], rest[end:]
		}
		if k == key {
			return v, true
		}
	}
}

// time is when the line was logged, in year. klog writes local time
// without the year.
func (l klogLine) time(year int) (time.Time, error) {
	at, err := time.ParseInLocation("2006 0102 15:04:05.000000", fmt.Sprintf("%d %s", year, l.stamp), time.Local)
	if err != nil {
		return at, fmt.Errorf("bad klog time %q: %w", l.stamp, err)
	}
	return at, nil
}

// scanKlog calls fn with each line of r in klog's text format, in order, and
// skips other lines (a multi-line value's continuation, for one). It stops
// at fn's first error.
func scanKlog(r io.Reader, fn func(klogLine) error) error {
	return scanLines(r, func(s string) error {
		if l, ok := parseKlogLine(s); ok {
			return fn(l)
		}
		return nil
	})
}

// scanLines calls fn with each line of r, cut at maxLogLine, in order. It
// stops at fn's first error.
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
