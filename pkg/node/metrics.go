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
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"sort"
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

func get(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	return do(ctx, client, http.MethodGet, url, nil)
}

// do sends a request and returns the body of a 200 answer.
func do(ctx context.Context, client *http.Client, method, url string, reqBody []byte) ([]byte, error) {
	var r io.Reader
	if reqBody != nil {
		r = bytes.NewReader(reqBody)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
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
	return get(ctx, kubeletClient, kubeletURL+path)
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
	f, ok := m[name]
	if !ok {
		return 0
	}
	var sum float64
	for _, s := range f.GetMetric() {
		if !hasLabels(s, labels) {
			continue
		}
		switch {
		case s.Counter != nil:
			sum += s.GetCounter().GetValue()
		case s.Gauge != nil:
			sum += s.GetGauge().GetValue()
		case s.Untyped != nil:
			sum += s.GetUntyped().GetValue()
		case s.Histogram != nil:
			// A histogram's value is how many observations it has.
			sum += float64(s.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

// ByLabel returns a family's values keyed by one label's value, summed over
// its other labels.
func (m Metrics) ByLabel(name, label string) map[string]float64 {
	out := map[string]float64{}
	f, ok := m[name]
	if !ok {
		return out
	}
	for _, s := range f.GetMetric() {
		var key string
		for _, l := range s.GetLabel() {
			if l.GetName() == label {
				key = l.GetValue()
			}
		}
		switch {
		case s.Counter != nil:
			out[key] += s.GetCounter().GetValue()
		case s.Gauge != nil:
			out[key] += s.GetGauge().GetValue()
		}
	}
	return out
}

func hasLabels(s *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, l := range s.GetLabel() {
			if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
				found = true
				break
			}
		}
		if !found {
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
				if line.Function != nil && strings.HasPrefix(line.Function.Name, prefix) {
					if leaf == "" {
						leaf = line.Function.Name
					}
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
	sort.Slice(share.Top, func(i, j int) bool { return share.Top[i].CPU > share.Top[j].CPU })
	if len(share.Top) > 5 {
		share.Top = share.Top[:5]
	}
	return share, nil
}
