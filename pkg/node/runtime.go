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
	"path/filepath"
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
	switch Runtime(s) {
	case "", Containerd:
		return Containerd, nil
	case CRIO:
		return CRIO, nil
	}
	return "", fmt.Errorf("unknown container runtime %q: want %s or %s", s, Containerd, CRIO)
}

// RuntimeLabel names the runtime for reports: containerd, or CRI-O with its
// enable_pod_events setting.
func (o Options) RuntimeLabel() string {
	switch {
	case o.Runtime == CRIO && o.PodEventsOff:
		return "CRI-O (enable_pod_events=false)"
	case o.Runtime == CRIO:
		return "CRI-O (enable_pod_events=true)"
	}
	return "containerd"
}

// runtimeDriver is what differs between the runtimes a Node runs.
type runtimeDriver interface {
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

func driverFor(rt Runtime) runtimeDriver {
	if rt == CRIO {
		return crio{}
	}
	return containerd{}
}

// containerd is containerd 2 with runc: images are imported with ctr.
type containerd struct{}

func (containerd) processName() string { return "containerd" }

func (containerd) binaries() []string {
	return []string{"containerd", "containerd-shim-runc-v2", "ctr", "runc", "crictl"}
}

func (containerd) hostBinaries() []string { return nil }

func (containerd) monitors(bin string) []string {
	return []string{filepath.Join(bin, "containerd-shim-runc-v2")}
}

func (containerd) socket(work string) string { return filepath.Join(work, "containerd.sock") }

func (containerd) command(n *Node) (string, []string) {
	return filepath.Join(n.bin, "containerd"), []string{"--config", filepath.Join(n.work, "containerd", "config.toml")}
}

func (containerd) answers(ctx context.Context, n *Node) bool {
	_, err := n.run(ctx, filepath.Join(n.bin, "ctr"), "--address", n.Socket(), "version")
	return err == nil
}

func (containerd) importImage(ctx context.Context, n *Node, archive, ref string) error {
	_, err := n.run(ctx, filepath.Join(n.bin, "ctr"), "--address", n.Socket(), "-n", "k8s.io",
		"images", "import", "--platform", "linux/amd64", archive)
	return err
}

func (containerd) tagImage(ctx context.Context, n *Node, ref, name string) error {
	_, err := n.run(ctx, filepath.Join(n.bin, "ctr"), "--address", n.Socket(), "-n", "k8s.io", "images", "tag", "--force", ref, name)
	return err
}

// untagImage removes the name only: containerd's CRI RemoveImage would
// remove every name of the image.
func (containerd) untagImage(ctx context.Context, n *Node, name string) error {
	_, err := n.run(ctx, filepath.Join(n.bin, "ctr"), "--address", n.Socket(), "-n", "k8s.io", "images", "rm", name)
	return err
}

func (containerd) importsOffline() bool { return false }

func (containerd) configs(n *Node) map[string]string {
	w := n.work
	q := strconv.Quote
	return map[string]string{filepath.Join(w, "containerd", "config.toml"): fmt.Sprintf(`version = 3
root = %s
state = %s
[grpc]
  address = %s
[ttrpc]
  address = %s
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = %s
[plugins.'io.containerd.cri.v1.runtime']
  enable_selinux = false
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = %s
        SystemdCgroup = false
        Root = %s
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = [%s]
    conf_dir = %s
[plugins.'io.containerd.nri.v1.nri']
  disable = true
`, q(filepath.Join(w, "containerd", "root")), q(filepath.Join(w, "containerd", "state")),
		q(n.Socket()), q(n.Socket()+".ttrpc"), q(Images["pause.tar"]),
		q(filepath.Join(n.bin, "runc")), q(filepath.Join(w, "runc-root")),
		q(filepath.Join(w, "cni", "bin")), q(filepath.Join(w, "cni", "net.d")))}
}
