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
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// kubeletClient talks to the kubelet's secure port, whose certificate is
// self-signed in a standalone kubelet.
var kubeletClient = &http.Client{
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // a local, self-signed kubelet
}

// do sends a request and returns the body of a 200 answer.
func do(ctx context.Context, client *http.Client, method, url string, reqBody []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(reqBody))
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, bytes.TrimSpace(body))
	}
	return body, nil
}

// kubeletURL is the kubelet's secure port, where it serves /metrics, /pods
// and the debugging handlers.
var kubeletURL = fmt.Sprintf("https://127.0.0.1:%d", kubeletPort)

func (n *Node) kubeletGet(ctx context.Context, path string) ([]byte, error) {
	return do(ctx, kubeletClient, http.MethodGet, kubeletURL+path, nil)
}

// SetVerbosity changes the running kubelet's --v, as the PUT /debug/flags/v
// handler of its debugging handlers does (enableDebuggingHandlers and
// enableDebugFlagsHandler, both on by default): it sets klog's verbosity and
// the text logger's that contextual logging uses. The node's Verbosity
// option is what the kubelet starts with again after a restart.
func (n *Node) SetVerbosity(ctx context.Context, level int) error {
	return setVerbosity(ctx, kubeletClient, kubeletURL, level)
}

func setVerbosity(ctx context.Context, client *http.Client, base string, level int) error {
	if level < 0 {
		return fmt.Errorf("verbosity %d is negative", level)
	}
	if _, err := do(ctx, client, http.MethodPut, base+"/debug/flags/v", []byte(strconv.Itoa(level))); err != nil {
		return fmt.Errorf("setting the kubelet's verbosity to %d: %w", level, err)
	}
	return nil
}

// Metrics are a scrape of the kubelet's /metrics.
type Metrics map[string]*dto.MetricFamily

// Metrics scrapes the kubelet's /metrics.
func (n *Node) Metrics(ctx context.Context) (Metrics, error) {
	body, err := n.kubeletGet(ctx, "/metrics")
	if err != nil {
		return nil, err
	}
	return ParseMetrics(body)
}

// ParseMetrics parses the Prometheus text format.
func ParseMetrics(text []byte) (Metrics, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("parsing metrics: %w", err)
	}
	return Metrics(families), nil
}

// Has reports whether the scrape has the metric family.
func (m Metrics) Has(name string) bool {
	_, ok := m[name]
	return ok
}

// Sum adds up the values of a counter or gauge family's series (for a
// histogram, its observation counts) whose labels include every pair of
// labels (given as name, value, name, value...).
func (m Metrics) Sum(name string, labels ...string) float64 {
	var sum float64
	for _, s := range m[name].GetMetric() {
		if hasLabels(s, labels) {
			sum += value(s)
		}
	}
	return sum
}

// ByLabel returns a family's values, as Sum adds them, keyed by one label's
// value and summed over its other labels.
func (m Metrics) ByLabel(name, label string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range m[name].GetMetric() {
		var key string
		for _, l := range s.GetLabel() {
			if l.GetName() == label {
				key = l.GetValue()
			}
		}
		out[key] += value(s)
	}
	return out
}

// value is a series' value; a histogram's is how many observations it has.
func value(s *dto.Metric) float64 {
	switch {
	case s.Counter != nil:
		return s.GetCounter().GetValue()
	case s.Gauge != nil:
		return s.GetGauge().GetValue()
	case s.Untyped != nil:
		return s.GetUntyped().GetValue()
	case s.Histogram != nil:
		return float64(s.GetHistogram().GetSampleCount())
	}
	return 0
}

func hasLabels(s *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		if !slices.ContainsFunc(s.GetLabel(), func(l *dto.LabelPair) bool {
			return l.GetName() == labels[i] && l.GetValue() == labels[i+1]
		}) {
			return false
		}
	}
	return true
}

// VolumeManagerPackage is the import path prefix of the volume manager's
// code in a kubelet profile.
const VolumeManagerPackage = "k8s.io/kubernetes/pkg/kubelet/volumemanager"

// Profile takes a CPU profile of the kubelet over d.
func (n *Node) Profile(ctx context.Context, d time.Duration) (*profile.Profile, error) {
	body, err := n.kubeletGet(ctx, fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(d.Seconds())))
	if err != nil {
		return nil, err
	}
	return profile.ParseData(body)
}

// LiveHeap is the kubelet's live Go heap in bytes: it asks the kubelet for a
// heap profile with gc=1, which collects garbage first, and then reads
// go_memstats_heap_alloc_bytes, which a collection leaves at the live heap
// (plus what the scrape itself allocates). Unlike the heap in use at a
// random moment, it does not depend on where the collector is in its cycle.
func (n *Node) LiveHeap(ctx context.Context) (float64, error) {
	if _, err := n.kubeletGet(ctx, "/debug/pprof/heap?gc=1"); err != nil {
		return 0, fmt.Errorf("collecting the kubelet's garbage: %w", err)
	}
	m, err := n.Metrics(ctx)
	if err != nil {
		return 0, err
	}
	return m.Sum("go_memstats_heap_alloc_bytes"), nil
}

// CPUShare is a profile's CPU time, and the part of it whose stack holds a
// function of any package with one of prefixes.
type CPUShare struct {
	Total, Matched time.Duration
	// Top are the matched leaf functions with the most CPU, most first.
	Top []FunctionCPU
}

// FunctionCPU is a function's CPU in a profile.
type FunctionCPU struct {
	Function string
	CPU      time.Duration
}

// Fraction is Matched/Total, or 0.
func (s CPUShare) Fraction() float64 {
	if s.Total == 0 {
		return 0
	}
	return float64(s.Matched) / float64(s.Total)
}

// ShareOf measures the CPU in p spent with a function of prefix on the
// stack: a sample counts once however many such frames it has.
func ShareOf(p *profile.Profile, prefix string) (CPUShare, error) {
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			idx = i
		}
	}
	if idx < 0 {
		return CPUShare{}, fmt.Errorf("the profile has no cpu/nanoseconds samples")
	}
	var share CPUShare
	leaves := map[string]time.Duration{}
	for _, s := range p.Sample {
		v := time.Duration(s.Value[idx])
		share.Total += v
		var leaf string
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if leaf == "" && line.Function != nil && strings.HasPrefix(line.Function.Name, prefix) {
					leaf = line.Function.Name
				}
			}
		}
		if leaf != "" {
			share.Matched += v
			leaves[leaf] += v
		}
	}
	for f, v := range leaves {
		share.Top = append(share.Top, FunctionCPU{Function: f, CPU: v})
	}
	slices.SortFunc(share.Top, func(a, b FunctionCPU) int { return cmp.Compare(b.CPU, a.CPU) })
	if len(share.Top) > 5 {
		share.Top = share.Top[:5]
	}
	return share, nil
}

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
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
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
	cs, err := n.RunningContainers(ctx, container)
	return cs[podName].ID, err
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
