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
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
)

// Runtime is a container runtime a Node runs, with its options:
// Containerd(), the zero value, or CRIO with its container events on or off.
type Runtime struct{ crio, podEvents bool }

// Containerd is containerd with runc, from make node-deps: the default.
func Containerd() Runtime { return Runtime{} }

// CRIO is CRI-O with conmon and runc, from make node-deps; podEvents is its
// enable_pod_events: without it, its GetContainerEvents ends at once.
func CRIO(podEvents bool) Runtime { return Runtime{crio: true, podEvents: podEvents} }

// Runtimes are the runtimes a Node can run.
var Runtimes = []Runtime{Containerd(), CRIO(true)}

// String is rt's name as NODE_RUNTIME takes it, its daemon's: containerd or
// crio.
func (rt Runtime) String() string { return driverFor(rt).processName }

// Label names rt for reports, with its options: containerd, or CRI-O with
// its enable_pod_events setting.
func (rt Runtime) Label() string { return driverFor(rt).label }

// RuntimeEnv and PodEventsEnv are the environment variables RuntimeFromEnv
// reads: NODE_RUNTIME=containerd|crio, and NODE_CRIO_POD_EVENTS=true|false,
// CRI-O's enable_pod_events (true unless set).
const (
	RuntimeEnv   = "NODE_RUNTIME"
	PodEventsEnv = "NODE_CRIO_POD_EVENTS"
)

// RuntimeFromEnv returns the runtime NODE_RUNTIME names (containerd if it is
// empty), CRI-O with the events NODE_CRIO_POD_EVENTS says.
func RuntimeFromEnv() (Runtime, error) {
	return RuntimeFlags(flag.NewFlagSet("", flag.ContinueOnError))()
}

// RuntimeFlags registers -runtime and -crio-pod-events on fs, their
// defaults from NODE_RUNTIME and NODE_CRIO_POD_EVENTS. After fs is parsed,
// the returned function gives the runtime they name.
func RuntimeFlags(fs *flag.FlagSet) func() (Runtime, error) {
	podEventsEnv, envErr := true, error(nil)
	if v := os.Getenv(PodEventsEnv); v != "" {
		if podEventsEnv, envErr = strconv.ParseBool(v); envErr != nil {
			envErr = fmt.Errorf("%s=%q: want true or false", PodEventsEnv, v)
		}
	}
	name := fs.String("runtime", cmp.Or(os.Getenv(RuntimeEnv), "containerd"), "the container runtime: containerd or crio (default from $"+RuntimeEnv+")")
	podEvents := fs.Bool("crio-pod-events", podEventsEnv, "CRI-O's enable_pod_events (default from $"+PodEventsEnv+")")
	return func() (Runtime, error) {
		switch {
		case envErr != nil:
			return Runtime{}, envErr
		case *name == "containerd":
			return Containerd(), nil
		case *name == "crio":
			return CRIO(*podEvents), nil
		}
		return Runtime{}, fmt.Errorf("unknown container runtime %q (-runtime, $%s): want one of %v", *name, RuntimeEnv, Runtimes)
	}
}

// RuntimeNameOf is the short name (containerd, CRI-O) of the runtime a
// Label names, or label itself if no runtime has it.
func RuntimeNameOf(label string) string {
	for _, rt := range []Runtime{Containerd(), CRIO(true), CRIO(false)} {
		if d := driverFor(rt); d.label == label {
			return d.name
		}
	}
	return label
}

// runtimeDriver is what differs between the runtimes a Node runs: its
// traits here, its behaviour in runtimeOps. Each runtime's driver is in a
// file of its own.
type runtimeDriver struct {
	runtimeOps
	// name is its short name for reports; label adds its options.
	name, label string
	// processName is the daemon's command name, as the kubelet's
	// --container-runtime-process-name and NODE_RUNTIME take it.
	processName string
	// streamsEvents is set if it serves CRI container events.
	streamsEvents bool
	// importsOffline is set if images are imported before the daemon
	// starts (into its store on disk) rather than through it.
	importsOffline bool
	// ports are the host ports it listens on, with what for.
	ports map[int]string
	// droppedEventsMetric, served at metricsURL, counts the container
	// events it dropped; both are empty if it has none.
	metricsURL, droppedEventsMetric string
	// binaries are the programs it needs in Out/bin; hostBinaries those
	// from Debian's packages.
	binaries, hostBinaries []string
	// monitors are the per-container processes it leaves running when it
	// dies (shims, conmon), by executable, given Out/bin.
	monitors func(bin string) []string
	// socket is its CRI socket's name in the work directory.
	socket string
}

// runtimeOps is how a runtime is set up, started and given images.
type runtimeOps interface {
	// prepareHost changes what it needs of the host, recording it in h,
	// which restores it.
	prepareHost(h *hostState, logf func(string, ...any)) error
	// configs are the files to write before it starts, by path.
	configs(n *Node) map[string]string
	command(n *Node) (binary string, args []string)
	// answers reports whether it serves requests.
	answers(ctx context.Context, n *Node) bool
	// importImage stores an image archive as ref; tagImage adds a name;
	// untagImage removes one of an image's names, and leaves the image.
	importImage(ctx context.Context, n *Node, archive, ref string) error
	tagImage(ctx context.Context, n *Node, ref, name string) error
	untagImage(ctx context.Context, n *Node, name string) error
}

// driverFor returns the driver of rt with its options.
func driverFor(rt Runtime) runtimeDriver {
	if rt.crio {
		return crioDriver(rt.podEvents)
	}
	return containerdDriver()
}
