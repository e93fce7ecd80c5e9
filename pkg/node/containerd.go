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
	"fmt"
	"path/filepath"
	"strconv"
)

// containerd is containerd 2 with runc: images are imported with ctr. It
// serves container events always, and no metrics here.
type containerd struct{}

func containerdDriver() runtimeDriver {
	return runtimeDriver{
		runtimeOps:    containerd{},
		name:          "containerd",
		label:         "containerd",
		processName:   "containerd",
		streamsEvents: true,
		binaries:      []string{"containerd", "containerd-shim-runc-v2", "ctr", "runc", "crictl"},
		monitors:      func(bin string) []string { return []string{filepath.Join(bin, "containerd-shim-runc-v2")} },
		socket:        "containerd.sock",
	}
}

func (containerd) prepareHost(*hostState, func(string, ...any)) error { return nil }

func (containerd) command(n *Node) (string, []string) {
	return filepath.Join(n.bin, "containerd"), []string{"--config", filepath.Join(n.work, "containerd", "config.toml")}
}

// ctr runs ctr against the node's containerd, in the CRI's namespace.
func ctr(ctx context.Context, n *Node, args ...string) error {
	_, err := n.run(ctx, filepath.Join(n.bin, "ctr"), append([]string{"--address", n.Socket(), "-n", "k8s.io"}, args...)...)
	return err
}

func (containerd) answers(ctx context.Context, n *Node) bool { return ctr(ctx, n, "version") == nil }

func (containerd) importImage(ctx context.Context, n *Node, archive, _ string) error {
	return ctr(ctx, n, "images", "import", "--platform", "linux/amd64", archive)
}

func (containerd) tagImage(ctx context.Context, n *Node, ref, name string) error {
	return ctr(ctx, n, "images", "tag", "--force", ref, name)
}

// untagImage removes the name only: containerd's CRI RemoveImage would
// remove every name of the image.
func (containerd) untagImage(ctx context.Context, n *Node, name string) error {
	return ctr(ctx, n, "images", "rm", name)
}

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
