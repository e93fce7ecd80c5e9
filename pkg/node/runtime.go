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
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
)

// Runtime names a container runtime a Node can run.
type Runtime string

const (
	// Containerd is containerd with runc, from make node-deps: the default.
	Containerd Runtime = "containerd"
	// CRIO is CRI-O with conmon and runc, from make node-deps.
	CRIO Runtime = "crio"
)

// Runtimes are the runtimes a Node can run.
var Runtimes = []Runtime{Containerd, CRIO}

// RuntimeEnv and PodEventsEnv are the environment variables RuntimeFromEnv
// reads: NODE_RUNTIME=containerd|crio, and NODE_CRIO_POD_EVENTS=true|false,
// CRI-O's enable_pod_events (true unless set).
const (
	RuntimeEnv   = "NODE_RUNTIME"
	PodEventsEnv = "NODE_CRIO_POD_EVENTS"
)

// RuntimeFromEnv returns the runtime NODE_RUNTIME names (containerd if it is
// empty), and whether NODE_CRIO_POD_EVENTS turns CRI-O's container events off.
func RuntimeFromEnv() (rt Runtime, podEventsOff bool, err error) {
	rt, err = ParseRuntime(os.Getenv(RuntimeEnv))
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", RuntimeEnv, err)
	}
	if v := os.Getenv(PodEventsEnv); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return "", false, fmt.Errorf("%s=%q: want true or false", PodEventsEnv, v)
		}
		podEventsOff = !on
	}
	return rt, podEventsOff, nil
}

// RuntimeFlags registers -runtime and -crio-pod-events on fs, their
// defaults from NODE_RUNTIME and NODE_CRIO_POD_EVENTS. After fs is parsed,
// the returned function gives the runtime and whether CRI-O's events are
// off.
func RuntimeFlags(fs *flag.FlagSet) func() (Runtime, bool, error) {
	rt, eventsOff, envErr := RuntimeFromEnv()
	name := fs.String("runtime", string(rt), "the container runtime: containerd or crio (default from $"+RuntimeEnv+")")
	podEvents := fs.Bool("crio-pod-events", !eventsOff, "CRI-O's enable_pod_events (default from $"+PodEventsEnv+")")
	return func() (Runtime, bool, error) {
		if envErr != nil {
			return "", false, envErr
		}
		rt, err := ParseRuntime(*name)
		return rt, !*podEvents, err
	}
}

// ParseRuntime parses a runtime's name; empty means Containerd.
func ParseRuntime(s string) (Runtime, error) {
	if s == "" {
		return Containerd, nil
	}
	if _, ok := drivers[Runtime(s)]; !ok {
		return "", fmt.Errorf("unknown container runtime %q: want one of %v", s, Runtimes)
	}
	return Runtime(s), nil
}

// RuntimeLabel names the runtime for reports, with its options: containerd,
// or CRI-O with its enable_pod_events setting.
func (o Options) RuntimeLabel() string { return driverFor(o.Runtime, o.PodEventsOff).label() }

// RuntimeNameOf is the short name (containerd, CRI-O) of the runtime a
// RuntimeLabel names, or label itself if no runtime has it.
func RuntimeNameOf(label string) string {
	for _, rt := range Runtimes {
		for _, eventsOff := range []bool{false, true} {
			if d := driverFor(rt, eventsOff); d.label() == label {
				return d.name()
			}
		}
	}
	return label
}

// runtimeDriver is what differs between the runtimes a Node runs; each
// runtime's driver is in a file of its own.
type runtimeDriver interface {
	// name is its short name for reports; label adds its options.
	name() string
	label() string
	// streamsEvents reports whether it serves CRI container events.
	streamsEvents() bool
	// ports are the host ports it listens on, with what for.
	ports() map[int]string
	// prepareHost changes what it needs of the host, recording it in h,
	// which restores it.
	prepareHost(h *hostState, logf func(string, ...any)) error
	// droppedEventsMetric is the metric, served at metricsURL, that counts
	// the container events it dropped; both are empty if it has none.
	metricsURL() string
	droppedEventsMetric() string
	// processName is the daemon's command name, as the kubelet's
	// --container-runtime-process-name takes it.
	processName() string
	// binaries are the programs it needs in Out/bin.
	binaries() []string
	// hostBinaries are the programs it needs from Debian's packages.
	hostBinaries() []string
	// monitors are the per-container processes it leaves running when it
	// dies (shims, conmon), by executable.
	monitors(bin string) []string
	// socket is its CRI socket in the work directory.
	socket(work string) string
	// configs are the files to write before it starts, by path.
	configs(n *Node) map[string]string
	// command is how it starts.
	command(n *Node) (binary string, args []string)
	// answers reports whether it serves requests.
	answers(ctx context.Context, n *Node) bool
	// importImage stores an image archive as ref; tagImage adds a name;
	// untagImage removes one of an image's names, and leaves the image.
	importImage(ctx context.Context, n *Node, archive, ref string) error
	tagImage(ctx context.Context, n *Node, ref, name string) error
	untagImage(ctx context.Context, n *Node, name string) error
	// importsOffline is set if images are imported before the daemon
	// starts (into its store on disk) rather than through it.
	importsOffline() bool
}

// drivers are the runtimes' drivers, by runtime, given whether CRI-O's
// container events are off.
var drivers = map[Runtime]func(podEventsOff bool) runtimeDriver{
	Containerd: func(bool) runtimeDriver { return containerd{} },
	CRIO:       func(podEventsOff bool) runtimeDriver { return crio{podEvents: !podEventsOff} },
}

// driverFor returns the driver of rt with its options; an unknown rt gets
// the default's.
func driverFor(rt Runtime, podEventsOff bool) runtimeDriver {
	if d, ok := drivers[rt]; ok {
		return d(podEventsOff)
	}
	return containerd{}
}
