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
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The series' side of TestCheck's cases; each case adds to some of them.
const (
	source = `package m

import km "k8s.io/component-base/metrics"

const prefix = "volume_manager_loop_"

var (
	A = km.NewCounterVec(&km.CounterOpts{Name: prefix + "passes_total"}, []string{"loop"})
	B = km.NewGauge(&km.GaugeOpts{Namespace: "kubelet", Subsystem: "event_stream", Name: "connected"})
)

func register(r km.KubeRegistry) { r.MustRegister(A, B) }
`
	scrape = "# TYPE volume_manager_loop_passes_total counter\nvolume_manager_loop_passes_total{loop=\"reconciler\"} 3\n" +
		"# TYPE kubelet_event_stream_connected gauge\nkubelet_event_stream_connected 1\n# TYPE volume_manager_total_volumes gauge\nvolume_manager_total_volumes 2\n"
	kepYAML = "feature-gates: [{name: EventedVolumeManager, components: [kubelet]}]\nmetrics: [volume_manager_loop_passes_total, kubelet_event_stream_connected"
	kepMD   = "## Metrics\n\n| name | type | labels |\n|---|---|---|\n| `volume_manager_loop_passes_total` | counter | `loop` (`reconciler`) |\n" +
		"| `kubelet_event_stream_connected` | gauge | none |\n"
)

// TestCheck runs the check on a package, a scrape, kep.yaml and KEP.md.
func TestCheck(t *testing.T) {
	const (
		x        = "volume_manager_loop_x_total"
		defineX  = "var X = km.NewCounter(&km.CounterOpts{Name: prefix + \"x_total\"})\n"
		register = "func init() { legacyregistry.MustRegister(X) }\n"
		exposeX  = "# TYPE " + x + " counter\n" + x + " 1\n"
		listX    = ", " + x
		rowX     = "| `" + x + "` | counter | none |"
	)
	for _, tt := range []struct {
		name, source, scrape, kepYAML, kepMD, want string
	}{
		{name: "agree"},
		{name: "agree, registered where defined", source: "func init() { legacyregistry.MustRegister(km.NewCounter(&km.CounterOpts{Name: prefix + \"x_total\"})) }",
			scrape: exposeX, kepYAML: listX, kepMD: rowX},
		{name: "defined alone", source: defineX, want: x + " is only in defined\n"},
		{name: "exposed alone", scrape: exposeX, want: x + " is only in exposed\n"},
		{name: "registered, not documented", source: defineX + register, scrape: exposeX, want: x + " is only in defined and exposed and registered\n"},
		{name: "documented alone", kepYAML: listX, kepMD: rowX, want: x + " is only in KEP.md's metrics table and kep.yaml's metrics\n"},
		{name: "in KEP.md alone", kepMD: rowX, want: x + " is only in KEP.md's metrics table\n"},
		{name: "not registered", source: defineX, kepYAML: listX, kepMD: rowX, want: x + " is only in KEP.md's metrics table and defined and kep.yaml's metrics\n"},
		{name: "listed twice", source: defineX + register, scrape: exposeX, kepYAML: listX + listX, kepMD: rowX, want: x + " is twice in kep.yaml's metrics\n"},
		{name: "labels and no value yet: not checked", source: strings.Replace(defineX, "Counter(", "CounterVec(", 1) + register,
			kepYAML: listX, kepMD: "| `" + x + "` | counter | `reason` |"},
		{name: "type", source: defineX + register, scrape: strings.Replace(exposeX, "counter", "gauge", 1), kepYAML: listX, kepMD: rowX, want: "exposes a gauge"},
		{name: "name not a constant", source: "var Y = km.NewGauge(&km.GaugeOpts{Name: name()})", want: "Name is not a string constant"},
		{name: "no gate", kepYAML: "]\nfeature-gates: []\n#", want: "do not name EventedVolumeManager for the kubelet"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := check(t, source+tt.source, scrape+tt.scrape, kepYAML+tt.kepYAML+"]\n", kepMD+tt.kepMD+"\n")
			if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error()+"\n", tt.want) {
				t.Errorf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
}

func check(t *testing.T, source, scrape, kepYAML, kepMD string) error {
	dir := t.TempDir()
	if err := errors.Join(os.WriteFile(filepath.Join(dir, "kep.yaml"), []byte(kepYAML), 0o644),
		os.WriteFile(filepath.Join(dir, "KEP.md"), []byte(kepMD), 0o644)); err != nil {
		t.Fatal(err)
	}
	sets, table, err := Documented(dir)
	if err != nil {
		return err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(scrape))
	if err != nil {
		t.Fatal(err)
	}
	if sets["exposed"], _, err = Exposed(families, table); err != nil {
		return err
	}
	if sets["defined"], sets["registered"], err = Defined(map[string][]byte{"m.go": []byte(source)}); err != nil {
		return err
	}
	return Compare(sets)
}

// repo makes a git repository with the commits (and tags) base and head.
func repo(t *testing.T, base, head map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	for i, files := range []map[string]string{base, head} {
		for name, src := range files {
			p := filepath.Join(dir, name)
			if err := errors.Join(os.MkdirAll(filepath.Dir(p), 0o755), os.WriteFile(p, []byte(src), 0o644)); err != nil {
				t.Fatal(err)
			}
		}
		run("add", "-A")
		run("commit", "-q", "--allow-empty", "-m", []string{"base", "head"}[i])
		run("tag", []string{"base", "head"}[i])
	}
	return dir
}

// TestSeries checks the metrics, identifiers, commits and lines a series adds.
func TestSeries(t *testing.T) {
	metrics := func(names ...string) string {
		s := "package m\n\nimport km \"k8s.io/component-base/metrics\"\n\n"
		for i, n := range names {
			s += fmt.Sprintf("var M%d = km.NewCounter(&km.CounterOpts{Name: %q})\n\nfunc init() { legacyregistry.MustRegister(M%d) }\n", i, n, i)
		}
		return s
	}
	dir := repo(t,
		map[string]string{"a/old.go": "package a\n\ntype I interface {\n\tOld()\n}\n\nfunc Old() {}\n", "m/m.go": metrics("m_total"), "n/n.go": metrics("n_total")},
		map[string]string{
			"a/old.go":       "package a\n\ntype I interface {\n\tOld()\n\tNew()\n}\n\nfunc Old() {}\n",
			"a/new.go":       "package a\n\nconst (\n\tC = 1\n\tc = 2\n)\n\nvar V, w int\n\ntype T struct{}\n\nfunc (*T) M()  {}\nfunc (T) m()   {}\nfunc (u) M()   {}\n\ntype u int\n\nfunc F() {}\n",
			"a/new_test.go":  "package a\n\nfunc TestX() {}\n",
			"test/e2e/x.go":  "package e2e\n\nfunc E() {}\n",
			"a/testing/f.go": "package testing\n\nfunc Fake() {}\n",
			"m/m.go":         metrics("m_total", "m_new_total"),
			"m/m_test.go":    metrics("m_test_total"),
		})
	defined, registered, err := SeriesMetrics(dir, "base", "head")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"m_new_total"}; !slices.Equal(defined, want) || !slices.Equal(registered, want) {
		t.Errorf("SeriesMetrics: defined %v, registered %v; want %v", defined, registered, want)
	}
	ids, idsErr := ExportedIdentifiers(dir, "base", "head")
	commits, commitsErr := Commits(dir, "base", "head")
	lines, linesErr := AddedLines(dir, "base", "head")
	if err := errors.Join(idsErr, commitsErr, linesErr); err != nil {
		t.Fatal(err)
	}
	want := []string{"a/new.go: const C", "a/new.go: func F", "a/new.go: method T.M", "a/new.go: type T", "a/new.go: var V", "a/old.go: method I.New", "m/m.go: var M1"}
	if !slices.Equal(ids, want) {
		t.Errorf("ExportedIdentifiers = %q, want %q", ids, want)
	}
	if len(commits) != 1 || lines != 1+18+3 {
		t.Errorf("%d commits, AddedLines = %d; want 1 and %d (one in old.go, all of new.go, three in m.go)", len(commits), lines, 1+18+3)
	}
}
