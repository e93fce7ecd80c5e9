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
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
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

var (
	klogHeader = regexp.MustCompile(`^[IWEF](\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s+\d+ [^\]]+\] "([^"]*)"(.*)$`)
	podKey     = regexp.MustCompile(`\bpod="([^"]+)"`)
)

// VolumeWaits are the volume manager's waits found in a kubelet log, keyed
// by pod ("namespace/name"): the first wait of each kind per pod, from its
// "Waiting" line to its "All volumes" line, and when that wait ended.
type VolumeWaits struct {
	Mount, Unmount         map[string]time.Duration
	MountedAt, UnmountedAt map[string]time.Time
}

// ParseVolumeWaits reads a kubelet log in klog's text format.
func ParseVolumeWaits(r io.Reader) (VolumeWaits, error) {
	w := VolumeWaits{
		Mount: map[string]time.Duration{}, Unmount: map[string]time.Duration{},
		MountedAt: map[string]time.Time{}, UnmountedAt: map[string]time.Time{},
	}
	year := time.Now().Year()
	mountStart := map[string]time.Time{}
	unmountStart := map[string]time.Time{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := klogHeader.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		msg := m[2]
		var starts, doneAt map[string]time.Time
		var done map[string]time.Duration
		var start bool
		switch msg {
		case MountWaitLine:
			starts, done, start = mountStart, w.Mount, true
		case MountDoneLine:
			starts, done, doneAt = mountStart, w.Mount, w.MountedAt
		case UnmountWaitLine:
			starts, done, start = unmountStart, w.Unmount, true
		case UnmountDoneLine:
			starts, done, doneAt = unmountStart, w.Unmount, w.UnmountedAt
		default:
			continue
		}
		p := podKey.FindStringSubmatch(m[3])
		if p == nil {
			continue
		}
		pod := p[1]
		// klog writes local time without the year.
		at, err := time.ParseInLocation("2006 0102 15:04:05.000000", fmt.Sprintf("%d %s", year, m[1]), time.Local)
		if err != nil {
			return w, fmt.Errorf("bad klog time %q: %w", m[1], err)
		}
		if _, measured := done[pod]; measured {
			continue // only the first wait of each pod
		}
		if start {
			if _, waiting := starts[pod]; !waiting {
				starts[pod] = at
			}
			continue
		}
		if s, waiting := starts[pod]; waiting {
			d := at.Sub(s)
			if d < 0 { // across New Year
				d += 365 * 24 * time.Hour
			}
			done[pod] = d
			doneAt[pod] = at
		}
	}
	return w, sc.Err()
}

// VolumeWaits parses the node's kubelet log.
func (n *Node) VolumeWaits() (VolumeWaits, error) {
	f, err := os.Open(n.KubeletLog())
	if err != nil {
		return VolumeWaits{}, err
	}
	defer f.Close()
	return ParseVolumeWaits(f)
}
