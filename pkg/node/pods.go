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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// PodManifest is a static pod's manifest with the four volumes of the
// benchmark workload: an emptyDir the container writes to (/data), a hostPath
// of the node's HostPathDir (/host), and two downwardAPI volumes with the
// pod's labels (/etc/podinfo) and annotations (/etc/podmeta). Its one
// container, "bb", runs busybox and exits at once on SIGTERM;
// terminationGracePeriodSeconds is 0. Annotations change the pod's UID.
func PodManifest(name, hostPathDir string, annotations map[string]string) string {
	return podManifest(name, hostPathDir, annotations, "", "bb",
		"trap 'exit 0' TERM; echo written-by-container > /data/hello; sleep 3600 & wait")
}

// ExitContainer is the one container of an ExitingPodManifest pod.
const ExitContainer = "exit"

// ExitingPodManifest is a PodManifest pod with restartPolicy Never whose one
// container, ExitContainer, writes to its emptyDir, sleeps for after and
// exits 0 on its own. Nothing deletes it: the kubelet must notice the exit,
// finish the pod and unmount its volumes.
func ExitingPodManifest(name, hostPathDir string, after time.Duration) string {
	return podManifest(name, hostPathDir, nil, "Never", ExitContainer,
		fmt.Sprintf("echo written-by-container > /data/hello; sleep %.3f", after.Seconds()))
}

// CrashLoopPodManifest is a PodManifest pod with restartPolicy Always whose
// one container, ExitContainer, sleeps for after and exits 1: the kubelet
// restarts it after its crash-loop back-off, again and again.
func CrashLoopPodManifest(name, hostPathDir string, after time.Duration) string {
	return podManifest(name, hostPathDir, nil, "Always", ExitContainer, fmt.Sprintf("sleep %.3f; exit 1", after.Seconds()))
}

// podManifest is the manifest of PodManifest and ExitingPodManifest, with an
// optional restartPolicy.
func podManifest(name, hostPathDir string, annotations map[string]string, restartPolicy, container, command string) string {
	var ann strings.Builder
	keys := make([]string, 0, len(annotations))
	for k := range annotations {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&ann, "\n    %q: %q", k, annotations[k])
	}
	if ann.Len() == 0 {
		ann.WriteString(" {}")
	}
	if restartPolicy != "" {
		restartPolicy = "\n  restartPolicy: " + restartPolicy
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %q
  namespace: default
  labels:
    app: evm
  annotations:%s
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 0%s
  containers:
  - name: %s
    image: %q
    imagePullPolicy: Never
    command: ["sh", "-c", %q]
    volumeMounts:
    - {name: scratch, mountPath: /data}
    - {name: host, mountPath: /host}
    - {name: labels, mountPath: /etc/podinfo}
    - {name: annotations, mountPath: /etc/podmeta}
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: host, hostPath: {path: %q, type: Directory}}
  - name: labels
    downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}
  - name: annotations
    downwardAPI: {items: [{path: annotations, fieldRef: {fieldPath: metadata.annotations}}]}
`, name, ann.String(), restartPolicy, container, BusyboxImage, command, hostPathDir)
}

// VolumesPerPod is how many volumes a PodManifest pod has.
const VolumesPerPod = 4

// AddPod writes a static pod manifest, atomically, so that the kubelet never
// reads half of it.
func (n *Node) AddPod(name, manifest string) error {
	dir := filepath.Join(n.work, "kubelet", "manifests")
	tmp := filepath.Join(dir, "."+name+".yaml")
	if err := os.WriteFile(tmp, []byte(manifest), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name+".yaml"))
}

// RemovePod removes a static pod's manifest.
func (n *Node) RemovePod(name string) error {
	return os.Remove(filepath.Join(n.work, "kubelet", "manifests", name+".yaml"))
}

// PodName is the name the kubelet gives the static pod of a manifest name.
func (n *Node) PodName(name string) string { return name + "-" + n.opts.Name }

// Pod is a pod as the kubelet reports it.
type Pod struct {
	Name      string
	Namespace string
	UID       string
	Phase     string
}

// Pods lists the kubelet's pods, from its /pods endpoint.
func (n *Node) Pods(ctx context.Context) ([]Pod, error) {
	body, err := n.kubeletGet(ctx, "/pods")
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []struct {
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
				UID       string `json:"uid"`
			} `json:"metadata"`
			Status struct {
				Phase string `json:"phase"`
			} `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("the kubelet's /pods: %w", err)
	}
	pods := make([]Pod, 0, len(list.Items))
	for _, it := range list.Items {
		pods = append(pods, Pod{Name: it.Metadata.Name, Namespace: it.Metadata.Namespace, UID: it.Metadata.UID, Phase: it.Status.Phase})
	}
	return pods, nil
}

// PodUID is the UID of the kubelet's pod named podName, or "".
func (n *Node) PodUID(ctx context.Context, podName string) (string, error) {
	pods, err := n.Pods(ctx)
	if err != nil {
		return "", err
	}
	for _, p := range pods {
		if p.Name == podName {
			return p.UID, nil
		}
	}
	return "", nil
}

// PodDir is the kubelet's directory of a pod.
func (n *Node) PodDir(uid string) string { return filepath.Join(n.KubeletRoot(), "pods", uid) }

// Crictl runs crictl against the node's containerd.
func (n *Node) Crictl(ctx context.Context, args ...string) (string, error) {
	return n.run(ctx, filepath.Join(n.bin, "crictl"), append([]string{"--config", filepath.Join(n.work, "crictl.yaml")}, args...)...)
}

// RunningContainer is the ID of the running container named container in
// the pod named podName, or "".
func (n *Node) RunningContainer(ctx context.Context, podName, container string) (string, error) {
	out, err := n.Crictl(ctx, "ps", "--quiet", "--state", "running", "--name", "^"+container+"$",
		"--label", "io.kubernetes.pod.name="+podName)
	if err != nil {
		return "", err
	}
	ids := strings.Fields(out)
	if len(ids) == 0 {
		return "", nil
	}
	return ids[0], nil
}

// Container is a running container as the runtime reports it.
type Container struct {
	// ID is the container's ID.
	ID string
	// PodName is its pod's name.
	PodName string
	// Attempt counts the container's restarts in its sandbox.
	Attempt uint32
}

// RunningContainers lists the running containers named container, by their
// pods' names, in one call to the runtime.
func (n *Node) RunningContainers(ctx context.Context, container string) (map[string]Container, error) {
	out, err := n.Crictl(ctx, "ps", "--state", "running", "--name", "^"+container+"$", "--output", "json")
	if err != nil {
		return nil, err
	}
	var list struct {
		Containers []struct {
			ID       string `json:"id"`
			Metadata struct {
				Attempt uint32 `json:"attempt"`
			} `json:"metadata"`
			Labels map[string]string `json:"labels"`
		} `json:"containers"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, fmt.Errorf("crictl ps: %w", err)
	}
	cs := map[string]Container{}
	for _, c := range list.Containers {
		pod := c.Labels["io.kubernetes.pod.name"]
		cs[pod] = Container{ID: c.ID, PodName: pod, Attempt: c.Metadata.Attempt}
	}
	return cs, nil
}

// Exec runs a command in a container and returns its output, trimmed.
func (n *Node) Exec(ctx context.Context, containerID string, cmd ...string) (string, error) {
	out, err := n.Crictl(ctx, append([]string{"exec", containerID}, cmd...)...)
	return strings.TrimSpace(out), err
}
