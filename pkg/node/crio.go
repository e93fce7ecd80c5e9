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
	"strings"
)

// CRIOMetricsPort is where CRI-O serves its Prometheus metrics, on
// 127.0.0.1.
const CRIOMetricsPort = 9537

// conmonPath is Debian's conmon (package conmon), CRI-O's container monitor.
const conmonPath = "/usr/bin/conmon"

// crio is CRI-O with conmon and runc. Everything it keeps lives under
// work/crio: its storage (overlay), its run state, pinned namespaces, exit
// files and pod logs. Images are copied into its storage with crio-copyimg
// (CRI-O's own test/copyimg, built from the same source) before it starts,
// since CRI-O pulls only from registries. podEvents is its
// enable_pod_events: without it, its GetContainerEvents ends at once.
type crio struct{ podEvents bool }

func crioDriver(podEvents bool) runtimeDriver {
	return runtimeDriver{
		runtimeOps:          crio{podEvents: podEvents},
		name:                "CRI-O",
		label:               fmt.Sprintf("CRI-O (enable_pod_events=%t)", podEvents),
		processName:         "crio",
		streamsEvents:       podEvents,
		importsOffline:      true,
		ports:               map[int]string{CRIOMetricsPort: "CRI-O's metrics"},
		metricsURL:          fmt.Sprintf("http://127.0.0.1:%d/metrics", CRIOMetricsPort),
		droppedEventsMetric: "container_runtime_crio_containers_events_dropped_total",
		binaries:            []string{"crio", "pinns", "crio-copyimg", "runc", "crictl"},
		hostBinaries:        []string{conmonPath},
		monitors:            func(string) []string { return []string{conmonPath} },
		socket:              "crio.sock",
	}
}

// prepareHost gives the hugetlb controller a cgroup v1 hierarchy (see
// mountHugetlb).
func (crio) prepareHost(h *hostState, logf func(string, ...any)) error {
	return h.mountHugetlb(hugetlbCgroupDir, logf)
}

func (crio) command(n *Node) (string, []string) {
	return filepath.Join(n.bin, "crio"), []string{"--config", filepath.Join(n.work, "crio", "crio.conf")}
}

func (crio) answers(ctx context.Context, n *Node) bool {
	_, err := n.Crictl(ctx, "--timeout", "2s", "version")
	return err == nil
}

// copyimg runs crio-copyimg on CRI-O's storage.
func copyimg(ctx context.Context, n *Node, args ...string) error {
	d := filepath.Join(n.work, "crio")
	_, err := n.run(ctx, filepath.Join(n.bin, "crio-copyimg"), append([]string{"--root", filepath.Join(d, "storage"),
		"--runroot", filepath.Join(d, "run"), "--storage-driver", "overlay", "--signature-policy", filepath.Join(d, "policy.json")}, args...)...)
	return err
}

func (crio) importImage(ctx context.Context, n *Node, archive, ref string) error {
	return copyimg(ctx, n, "--image-name", ref, "--import-from", "docker-archive:"+archive)
}

func (crio) tagImage(ctx context.Context, n *Node, ref, name string) error {
	return copyimg(ctx, n, "--image-name", ref, "--add-name", name)
}

// untagImage removes the name through the CRI: CRI-O's RemoveImage of a
// name that an image shares with others untags it.
func (crio) untagImage(ctx context.Context, n *Node, name string) error {
	_, err := n.Crictl(ctx, "rmi", name)
	return err
}

func (c crio) configs(n *Node) map[string]string {
	w := n.work
	d := filepath.Join(w, "crio")
	q := strconv.Quote
	list := func(paths ...string) string {
		for i, p := range paths {
			paths[i] = q(p)
		}
		return "[" + strings.Join(paths, ", ") + "]"
	}
	conf := fmt.Sprintf(`# Written by pkg/node: CRI-O for a test node, everything under the work directory.
[crio]
root = %s
runroot = %s
storage_driver = "overlay"
log_dir = %s
version_file = %s
version_file_persist = %s
clean_shutdown_file = %s

[crio.api]
listen = %s

[crio.runtime]
default_runtime = "runc"
cgroup_manager = "cgroupfs"
conmon_cgroup = "pod"
selinux = false
apparmor_profile = ""
pinns_path = %s
namespaces_dir = %s
container_exits_dir = %s
container_attach_socket_dir = %s
hooks_dir = %s
cdi_spec_dirs = %s
decryption_keys_path = %s
irqbalance_config_file = %s
irqbalance_config_restore_file = "disable"
enable_criu_support = false
enable_pod_events = %t

[crio.runtime.runtimes.runc]
runtime_path = %s
runtime_type = "oci"
runtime_root = %s
monitor_path = %s
monitor_cgroup = "pod"

[crio.image]
pause_image = %s
pinned_images = [%s]
signature_policy = %s
signature_policy_dir = %s

[crio.network]
network_dir = %s
plugin_dirs = %s

[crio.metrics]
enable_metrics = true
metrics_host = "127.0.0.1"
metrics_port = %d

[crio.nri]
enable_nri = false
`, q(filepath.Join(d, "storage")), q(filepath.Join(d, "run")), q(filepath.Join(d, "pod-logs")),
		q(filepath.Join(d, "run", "version")), q(filepath.Join(d, "version")), q(filepath.Join(d, "clean.shutdown")),
		q(n.Socket()),
		q(filepath.Join(n.bin, "pinns")), q(filepath.Join(d, "ns")), q(filepath.Join(d, "exits")), q(filepath.Join(d, "attach")),
		list(filepath.Join(d, "hooks.d")), list(filepath.Join(d, "cdi")), q(filepath.Join(d, "keys")),
		q(filepath.Join(d, "irqbalance")), c.podEvents,
		q(filepath.Join(n.bin, "runc")), q(filepath.Join(w, "runc-root")), q(conmonPath),
		q(Images["pause.tar"]), q(Images["pause.tar"]), q(filepath.Join(d, "policy.json")), q(filepath.Join(d, "policies")),
		q(filepath.Join(w, "cni", "net.d")), list(filepath.Join(w, "cni", "bin")), CRIOMetricsPort)
	return map[string]string{
		filepath.Join(d, "crio.conf"): conf,
		// Images come from local archives only; nothing is pulled.
		filepath.Join(d, "policy.json"): `{"default": [{"type": "insecureAcceptAnything"}]}` + "\n",
	}
}
