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
	"flag"
	"os"
	"os/exec"
	"path"
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

// TestCheck runs the check on a package, a scrape, kep.yaml and KEP.md: it
// fails when a metric is defined, registered or documented alone.
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

var (
	tree = flag.String("tree", "", "compare with the metrics the series defines in this tree (make verify passes it)")
	base = flag.String("base", "", "with -tree, the release the series applies to")
	head = flag.String("head", "HEAD", "with -tree, the series' last commit")
)

// TestRepositoryKEP compares kep.yaml's metrics with KEP.md's table and,
// with -tree, with the metrics that the packages of the Go files the series
// adds or changes define and register (but did not define at -base).
func TestRepositoryKEP(t *testing.T) {
	sets, _, err := Documented("../..")
	if err != nil {
		t.Fatal(err)
	}
	if *tree == "" {
		t.Log("no -tree: kep.yaml and KEP.md only (make verify compares them with the series' Go files)")
	} else {
		defined, registered := seriesMetrics(t, *head)
		upstream, _ := seriesMetrics(t, *base)
		isUpstream := func(m string) bool { return slices.Contains(upstream, m) }
		sets["the series' Go files"] = slices.DeleteFunc(defined, isUpstream)
		sets["their Register calls"] = slices.DeleteFunc(registered, isUpstream)
		t.Logf("the series defines %d metrics: %s", len(sets["the series' Go files"]), strings.Join(sets["the series' Go files"], ", "))
	}
	if err := Compare(sets); err != nil {
		t.Error(err)
	}
}

// seriesMetrics returns the metrics that the packages with a Go file the
// series adds or changes define and register at rev.
func seriesMetrics(t *testing.T, rev string) (defined, registered []string) {
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", *tree}, args...)...).Output()
		var exit *exec.ExitError
		if err != nil && !(args[0] == "grep" && errors.As(err, &exit) && exit.ExitCode() == 1) {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	pathspecs := []string{":(exclude,glob)**/*_test.go"}
	for _, f := range strings.Fields(git("diff", "--name-only", "--diff-filter=ACMR", *base+".."+*head, "--", "*.go")) {
		pathspecs = append(pathspecs, ":(glob)"+path.Dir(f)+"/*.go")
	}
	pkgs := map[string]map[string][]byte{}
	for _, f := range strings.Fields(git(append([]string{"grep", "-l", "-F", `"k8s.io/component-base/metrics`, rev, "--"}, pathspecs...)...)) {
		f = strings.TrimPrefix(f, rev+":")
		if pkgs[path.Dir(f)] == nil {
			pkgs[path.Dir(f)] = map[string][]byte{}
		}
		pkgs[path.Dir(f)][f] = []byte(git("show", rev+":"+f))
	}
	for _, pkg := range pkgs {
		d, r, err := Defined(pkg)
		if err != nil {
			t.Fatalf("at %s: %v", rev, err)
		}
		defined, registered = append(defined, d...), append(registered, r...)
	}
	slices.Sort(defined)
	slices.Sort(registered)
	return defined, registered
}
