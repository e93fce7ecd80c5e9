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
// manager without patching it.
const (
	MountWaitLine   = "Waiting for volumes to attach and mount for pod"
	MountDoneLine   = "All volumes are attached and mounted for pod"
	UnmountWaitLine = "Waiting for volumes to unmount for pod"
	UnmountDoneLine = "All volumes are unmounted for pod"
)

// VolumeWaits are the volume manager's waits found in a kubelet log, keyed
// by pod ("namespace/name"): the first wait of each kind per pod, from its
// "Waiting" line to its "All volumes" line, and when that wait ended.
type VolumeWaits struct {
	Mount, Unmount         map[string]time.Duration
	MountedAt, UnmountedAt map[string]time.Time
	// LastSetUp is, for each mount wait that ended, the time from the
	// pod's last "MountVolume.SetUp succeeded" line before the wait's end,
	// or from the wait's start if that was later, to the wait's end: how
	// long the volume manager took to notice that the last volume was
	// mounted.
	LastSetUp map[string]time.Duration
}

// SetUpDoneLine starts the line of a volume's mount succeeding (V(1) for a
// first mount, V(4) for a remount).
const SetUpDoneLine = "MountVolume.SetUp succeeded for volume"

// ParseRemounts reads a kubelet log and returns, for each pod sync that
// reached the volume manager from from until to (its MountWaitLine, which
// every sync of a running pod logs before ReprocessPod asks for the remount
// of its configMap, secret, projected and downwardAPI volumes), the time to
// the pod's last SetUpDoneLine before its next sync. missed counts the
// syncs with no such line. The remounts' lines need --v=4 from from until
// the last remount is done.
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
	w := VolumeWaits{
		Mount: map[string]time.Duration{}, Unmount: map[string]time.Duration{},
		MountedAt: map[string]time.Time{}, UnmountedAt: map[string]time.Time{},
		LastSetUp: map[string]time.Duration{},
	}
	lastSetUp := map[string]time.Time{}
	year := time.Now().Year()
	mountStart := map[string]time.Time{}
	unmountStart := map[string]time.Time{}
	err := scanKlog(r, func(l klogLine) error {
		var starts, doneAt map[string]time.Time
		var done map[string]time.Duration
		var start bool
		switch l.msg {
		case MountWaitLine:
			starts, done, start = mountStart, w.Mount, true
		case MountDoneLine:
			starts, done, doneAt = mountStart, w.Mount, w.MountedAt
		case UnmountWaitLine:
			starts, done, start = unmountStart, w.Unmount, true
		case UnmountDoneLine:
			starts, done, doneAt = unmountStart, w.Unmount, w.UnmountedAt
		default:
			if strings.HasPrefix(l.msg, SetUpDoneLine) {
				if pod, ok := l.value("pod"); ok {
					if at, err := l.time(year); err == nil {
						lastSetUp[pod] = at
					}
				}
			}
			return nil
		}
		pod, ok := l.value("pod")
		if !ok {
			return nil
		}
		at, err := l.time(year)
		if err != nil {
			return err
		}
		if _, measured := done[pod]; measured {
			return nil // only the first wait of each pod
		}
		if start {
			if _, waiting := starts[pod]; !waiting {
				starts[pod] = at
			}
			return nil
		}
		if s, waiting := starts[pod]; waiting {
			d := at.Sub(s)
			if d < 0 { // across New Year
				d += 365 * 24 * time.Hour
			}
			done[pod] = d
			doneAt[pod] = at
			if set, ok := lastSetUp[pod]; ok && l.msg == MountDoneLine && !set.After(at) {
				// From the later of the last mount and the wait's start.
				w.LastSetUp[pod] = at.Sub(set)
				if s.After(set) {
					w.LastSetUp[pod] = d
				}
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
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), maxLogLine)
	for sc.Scan() {
		if strings.Contains(sc.Text(), substr) {
			lines = append(lines, sc.Text())
		}
	}
	return lines, sc.Err()
}

// maxLogLine is how much of a log line the parsers look at. The lines they
// match are short; longer lines, such as a pod's status at a high
// verbosity, are cut rather than failing the parse.
const maxLogLine = 1 << 20

// klogPrefix is klog's header, "Lmmdd hh:mm:ss.uuuuuu threadid file:line] ",
// as both klog and its textlogger (the kubelet's --logging-format=text)
// write it.
var klogPrefix = regexp.MustCompile(`^([IWEF])(\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ [^\]\s]+\] `)

// klogLine is one line of a log in klog's text format.
type klogLine struct {
	// severity is I, W, E or F.
	severity byte
	// stamp is the header's time, "mmdd hh:mm:ss.uuuuuu", without the year.
	stamp string
	// msg is the message, unquoted when structured.
	msg string
	// structured tells a structured line (klog.InfoS or a logr.Logger),
	// whose message klog quotes with strconv.Quote and follows with
	// key=value pairs, from a printf-style one (klog.Infof), whose text is
	// written as is and has no pairs.
	structured bool
	// kvs are the key=value pairs of a structured line.
	kvs string
}

// parseKlogLine parses a line in klog's text format, or reports false. A
// structured message may hold escaped quotes, as messages built with %q do.
func parseKlogLine(s string) (klogLine, bool) {
	m := klogPrefix.FindStringSubmatchIndex(s)
	if m == nil {
		return klogLine{}, false
	}
	l := klogLine{severity: s[m[2]], stamp: s[m[4]:m[5]]}
	rest := s[m[1]:]
	if strings.HasPrefix(rest, `"`) {
		if q, err := strconv.QuotedPrefix(rest); err == nil {
			if msg, err := strconv.Unquote(q); err == nil {
				l.msg, l.structured, l.kvs = msg, true, rest[len(q):]
				return l, true
			}
		}
	}
	l.msg = rest
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
		if l, ok := parseKlogLine(string(line)); ok {
			if err := fn(l); err != nil {
				return err
			}
		}
		line = line[:0]
	}
}
