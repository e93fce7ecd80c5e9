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

package kep

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const metricsFile = `package metrics

import (
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const (
	prefix   = "volume_manager_"
	loopKey  = prefix + "loop_iterations_total"
	loopLabel = "loop"
)

var kindLabels = []string{loopLabel, "kind"}

var (
	Iterations = metrics.NewCounterVec(
		&metrics.CounterOpts{Name: loopKey, StabilityLevel: metrics.ALPHA},
		[]string{loopLabel, "trigger"},
	)
	Passes = metrics.NewCounterVec(&metrics.CounterOpts{Name: "volume_manager_loop_passes_total"}, kindLabels)
	Connected = metrics.NewGauge(&metrics.GaugeOpts{Subsystem: "kubelet", Name: "stream_connected"})
	Duration = metrics.NewHistogramVec(&metrics.HistogramOpts{Namespace: "ns", Subsystem: "sub", Name: ("d" + "_seconds")}, []string{"loop"})
)

func Register() { legacyregistry.MustRegister(Iterations, Passes, Connected, Duration) }
`

func TestRegisteredMetrics(t *testing.T) {
	tests := []struct {
		name    string
		files   []SourceFile
		from    func(string) bool
		want    []Metric
		wantErr string
	}{
		{
			name:  "constants, concatenation, label variables, namespace and subsystem",
			files: []SourceFile{{"m/metrics.go", []byte(metricsFile)}},
			want: []Metric{
				{Name: "kubelet_stream_connected", Type: "gauge", Registered: true},
				{Name: "ns_sub_d_seconds", Type: "histogram", Labels: []string{"loop"}, Registered: true},
				{Name: "volume_manager_loop_iterations_total", Type: "counter", Labels: []string{"loop", "trigger"}, Registered: true},
				{Name: "volume_manager_loop_passes_total", Type: "counter", Labels: []string{"loop", "kind"}, Registered: true},
			},
		},
		{
			name: "registered through its variable, registered inline, or only defined",
			files: []SourceFile{{"m/m.go", []byte(`package m
import (
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)
var (
	A = metrics.NewCounter(&metrics.CounterOpts{Name: "a_total"})
	B = metrics.NewCounter(&metrics.CounterOpts{Name: "b_total"})
)
func init() {
	legacyregistry.MustRegister(A)
	legacyregistry.MustRegister(metrics.NewGauge(&metrics.GaugeOpts{Name: "c"}))
}
`)}},
			want: []Metric{
				{Name: "a_total", Type: "counter", Registered: true},
				{Name: "b_total", Type: "counter"},
				{Name: "c", Type: "gauge", Registered: true},
			},
		},
		{
			name: "constants from another file of the package; an import alias",
			files: []SourceFile{
				{"m/keys.go", []byte("package m\nconst key = \"events_total\"\nconst typeLabel = \"type\"\n")},
				{"m/m.go", []byte("package m\nimport cbm \"k8s.io/component-base/metrics\"\nvar E = cbm.NewCounterVec(&cbm.CounterOpts{Name: key}, []string{typeLabel})\n")},
			},
			want: []Metric{{Name: "events_total", Type: "counter", Labels: []string{"type"}}},
		},
		{
			name: "a subsystem constant from another file, as pkg/kubelet/metrics's KubeletSubsystem",
			files: []SourceFile{
				{"m/metrics.go", []byte("package m\nconst KubeletSubsystem = \"kubelet\"\n")},
				{"m/stream.go", []byte("package m\nimport \"k8s.io/component-base/metrics\"\nvar C = metrics.NewGauge(&metrics.GaugeOpts{Subsystem: KubeletSubsystem, Name: \"container_event_stream_connected\"})\n")},
			},
			from: func(p string) bool { return p == "m/stream.go" },
			want: []Metric{{Name: "kubelet_container_event_stream_connected", Type: "gauge"}},
		},
		{
			name: "only the files from accepts",
			files: []SourceFile{
				{"m/upstream.go", []byte("package m\nimport \"k8s.io/component-base/metrics\"\nvar U = metrics.NewGauge(&metrics.GaugeOpts{Name: \"upstream\"})\n")},
				{"m/series.go", []byte("package m\nimport \"k8s.io/component-base/metrics\"\nvar S = metrics.NewCounter(&metrics.CounterOpts{Name: \"series_total\"})\n")},
			},
			from: func(p string) bool { return p == "m/series.go" },
			want: []Metric{{Name: "series_total", Type: "counter"}},
		},
		{
			name:  "another package's metrics are not these",
			files: []SourceFile{{"m/m.go", []byte("package m\nimport \"github.com/prometheus/client_golang/prometheus\"\nvar P = prometheus.NewCounter(prometheus.CounterOpts{Name: \"p\"})\n")}},
		},
		{
			name:    "a name that is not a constant is an error",
			files:   []SourceFile{{"m/m.go", []byte("package m\nimport \"k8s.io/component-base/metrics\"\nvar name string\nvar G = metrics.NewGauge(&metrics.GaugeOpts{Name: name})\n")}},
			wantErr: "name is not a string constant",
		},
		{
			name:    "options that are not a literal are an error",
			files:   []SourceFile{{"m/m.go", []byte("package m\nimport \"k8s.io/component-base/metrics\"\nvar o = &metrics.GaugeOpts{Name: \"g\"}\nvar G = metrics.NewGauge(o)\n")}},
			wantErr: "not a literal",
		},
		{
			name:    "labels built at run time are an error",
			files:   []SourceFile{{"m/m.go", []byte("package m\nimport \"k8s.io/component-base/metrics\"\nfunc labels() []string { return nil }\nvar G = metrics.NewGaugeVec(&metrics.GaugeOpts{Name: \"g\"}, labels())\n")}},
			wantErr: "labels",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RegisteredMetrics(tt.files, tt.from)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i].Pos == "" {
					t.Errorf("%s has no position", got[i].Name)
				}
				got[i].Pos = ""
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

const kepTable = "# KEP\n\n" +
	"### Metrics\n\n" +
	"Some text with `not_a_metric`.\n\n" +
	"| figure | value |\n|---|---|\n| `x` | 1 |\n\n" +
	"| name | type | labels | meaning |\n" +
	"|---|---|---|---|\n" +
	"| `a_total` | counter | `loop`, `trigger` (`start`, `timer`) | a |\n" +
	"| `b` | Gauge | none | b |\n" +
	"| `c_seconds` | histogram | `loop` (`reconciler` or `desired_state_of_world_populator`) | c, with a \\| bar |\n" +
	"\nAfter the table.\n\n" +
	"| name | type | labels |\n|---|---|---|\n| `later` | counter | none |\n\n" +
	"## Next\n"

func TestMetricsTable(t *testing.T) {
	tests := []struct {
		name    string
		md      string
		want    []TableRow
		wantErr string
	}{
		{
			name: "labels outside parentheses, none, the first matching table only",
			md:   kepTable,
			want: []TableRow{
				{Name: "a_total", Type: "counter", Labels: []string{"loop", "trigger"}, Line: 13},
				{Name: "b", Type: "gauge", Line: 14},
				{Name: "c_seconds", Type: "histogram", Labels: []string{"loop"}, Line: 15},
			},
		},
		{
			name:    "no Metrics heading",
			md:      "# KEP\n\n| name | type | labels |\n|---|---|---|\n| `a` | counter | none |\n",
			wantErr: "no heading",
		},
		{
			name:    "no table in the section",
			md:      "### Metrics\n\n```\n| name | type | labels |\n```\n\n## Next\n\n| name | type | labels |\n|---|---|---|\n| `a` | counter | none |\n",
			wantErr: "no table",
		},
		{
			name:    "a row without a name",
			md:      "### Metrics\n\n| name | type | labels |\n|---|---|---|\n| a | counter | none |\n",
			wantErr: "KEP.md:5",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MetricsTable([]byte(tt.md))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	registered := []Metric{
		{Name: "a_total", Type: "counter", Labels: []string{"loop", "trigger"}, Pos: "a.go:1"},
		{Name: "b", Type: "gauge", Pos: "b.go:2"},
	}
	table := []TableRow{
		{Name: "a_total", Type: "counter", Labels: []string{"trigger", "loop"}, Line: 10},
		{Name: "b", Type: "gauge", Line: 11},
	}
	listed := []string{"b", "a_total"}
	tests := []struct {
		name       string
		registered []Metric
		table      []TableRow
		listed     []string
		want       []string // substrings, one per problem, in order
	}{
		{name: "agree (label order does not matter)", registered: registered, table: table, listed: listed},
		{
			name:       "a row missing from KEP.md",
			registered: registered, table: table[1:], listed: listed,
			want: []string{"the series registers a_total (counter, labels loop,trigger, a.go:1), which KEP.md's metrics table does not list; add a row"},
		},
		{
			name:       "KEP.md lists a metric the series does not register",
			registered: registered[:1], table: table, listed: []string{"a_total"},
			want: []string{"KEP.md:11: the metrics table lists b, which the series does not register"},
		},
		{
			name:       "labels and type differ",
			registered: registered,
			table: []TableRow{
				{Name: "a_total", Type: "gauge", Labels: []string{"loop"}, Line: 10},
				{Name: "b", Type: "gauge", Labels: []string{"reason"}, Line: 11},
			},
			listed: listed,
			want: []string{
				`KEP.md:10: the metrics table gives a_total the type "gauge"; the series registers a counter`,
				"KEP.md:10: the metrics table gives a_total the labels loop; the series registers it with loop,trigger",
				"KEP.md:11: the metrics table gives b the labels reason; the series registers it with none",
			},
		},
		{
			name:       "kep.yaml lists too few and too many",
			registered: registered, table: table, listed: []string{"a_total", "c", "a_total"},
			want: []string{
				"kep.yaml's metrics list c, which the series does not register",
				"kep.yaml's metrics list a_total twice",
				"the series registers b (b.go:2), which kep.yaml's metrics do not list; add it",
			},
		},
		{
			name:       "named twice",
			registered: append(slices.Clone(registered), Metric{Name: "b", Type: "gauge", Pos: "c.go:3"}),
			table:      append(slices.Clone(table), TableRow{Name: "b", Type: "gauge", Line: 12}),
			listed:     listed,
			want: []string{
				"the series defines b twice (b.go:2 and c.go:3)",
				"KEP.md:12: the metrics table lists b again (first at line 11)",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compare(tt.registered, tt.table, tt.listed)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %d:\n  %s\nwant it to contain\n  %s", i, got[i], tt.want[i])
				}
			}
		})
	}
}

const validYAML = `title: T
kep-number: "TBD"
authors:
  - TBD
owning-sig: sig-node
participating-sigs:
  - sig-storage
status: implementable
creation-date: 2026-11-21
last-updated: 2026-11-25
reviewers:
  - TBD
approvers:
  - TBD
stage: alpha
latest-milestone: "v1.37"
milestone:
  alpha: "v1.37"
feature-gates:
  - name: EventedVolumeManager
    components:
      - kubelet
disable-supported: true
metrics:
  - a_total
`

func TestMetadata(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		parseErr string
		want     []string // substrings, one per problem
	}{
		{name: "valid", yaml: validYAML},
		{name: "not YAML", yaml: "title: [", parseErr: "does not parse"},
		{name: "a field the template does not have", yaml: validYAML + "metric:\n  - x\n", parseErr: "unknown field"},
		{
			name: "another gate, another component",
			yaml: strings.Replace(strings.Replace(validYAML, "EventedVolumeManager", "EventedPLEG", 1), "kubelet", "kube-apiserver", 1),
			want: []string{"feature-gates do not name EventedVolumeManager"},
		},
		{
			name: "the gate without the kubelet",
			yaml: strings.Replace(validYAML, "      - kubelet", "      - kube-apiserver", 1),
			want: []string{"does not list the component kubelet"},
		},
		{
			name: "status, stage, milestone and dates",
			yaml: strings.NewReplacer("status: implementable", "status: done", "stage: alpha", "stage: beta",
				"last-updated: 2026-11-25", "last-updated: today").Replace(validYAML),
			want: []string{"status \"done\"", "no milestone for its stage beta", "last-updated \"today\""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMetadata([]byte(tt.yaml))
			if tt.parseErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.parseErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.parseErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := m.Check("EventedVolumeManager", "kubelet")
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tt.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %d:\n  %s\nwant it to contain\n  %s", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestRepositoryKEP checks the project's own KEP.md and kep.yaml against
// each other (the series' side needs the assembled tree: make verify).
func TestRepositoryKEP(t *testing.T) {
	md, err := os.ReadFile("../../KEP.md")
	if err != nil {
		t.Fatal(err)
	}
	table, err := MetricsTable(md)
	if err != nil {
		t.Fatal(err)
	}
	y, err := os.ReadFile("../../kep.yaml")
	if err != nil {
		t.Fatal(err)
	}
	meta, err := ParseMetadata(y)
	if err != nil {
		t.Fatal(err)
	}
	if p := meta.Check("EventedVolumeManager", "kubelet"); len(p) > 0 {
		t.Errorf("kep.yaml:\n%s", strings.Join(p, "\n"))
	}
	// The table as the registered side: kep.yaml must list exactly its rows.
	var asRegistered []Metric
	for _, r := range table {
		asRegistered = append(asRegistered, Metric{Name: r.Name, Type: r.Type, Labels: r.Labels, Pos: "KEP.md"})
	}
	if p := Compare(asRegistered, table, meta.Metrics); len(p) > 0 {
		t.Errorf("KEP.md and kep.yaml differ:\n%s", strings.Join(p, "\n"))
	}
}
