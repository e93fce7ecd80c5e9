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

// Package kep checks that the metrics the series defines, those a kubelet
// with the gate on exposes, kep.yaml's metrics and KEP.md's metrics table
// are the same.
package kep

import (
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/yaml"
)

// Compare returns an error naming every metric that some of sets (a
// description of each set and the metric names it holds) have and others
// lack, or that a set lists twice.
func Compare(sets map[string][]string) error {
	var problems []string
	in := map[string][]string{}
	for _, set := range slices.Sorted(maps.Keys(sets)) {
		for _, m := range sets[set] {
			if slices.Contains(in[m], set) {
				problems = append(problems, fmt.Sprintf("%s is twice in %s", m, set))
			} else {
				in[m] = append(in[m], set)
			}
		}
	}
	for _, m := range slices.Sorted(maps.Keys(in)) {
		if len(in[m]) < len(sets) {
			problems = append(problems, fmt.Sprintf("%s is only in %s", m, strings.Join(in[m], " and ")))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the metrics differ:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// Metric is a row of KEP.md's metrics table.
type Metric struct {
	Name, Type string
	Labels     []string
}

var (
	section = regexp.MustCompile(`(?m)^#+ Metrics\n(?:[^#].*\n|\n)*`)
	code    = regexp.MustCompile("`([^`]+)`")
	parens  = regexp.MustCompile(`\([^)]*\)`)
	opts    = regexp.MustCompile(`^(Counter|Gauge|Histogram|Summary|TimingHistogram)Opts$`)
)

// Documented reads the KEP in dir: kep.yaml's metrics and the names in
// KEP.md's metrics table as sets for Compare, and the table (the rows of
// the section "Metrics" whose first three columns are `name`, type and
// `labels`, with values in parentheses). It fails when kep.yaml does not
// parse or its feature-gates do not name EventedVolumeManager for the
// kubelet.
func Documented(dir string) (map[string][]string, []Metric, error) {
	y, err := os.ReadFile(filepath.Join(dir, "kep.yaml"))
	md, mdErr := os.ReadFile(filepath.Join(dir, "KEP.md"))
	if err := errors.Join(err, mdErr); err != nil {
		return nil, nil, err
	}
	var kep struct {
		FeatureGates []struct {
			Name       string
			Components []string
		} `json:"feature-gates"`
		Metrics []string
	}
	if err := yaml.Unmarshal(y, &kep); err != nil {
		return nil, nil, fmt.Errorf("kep.yaml does not parse: %w", err)
	}
	named := false
	for _, g := range kep.FeatureGates {
		named = named || g.Name == "EventedVolumeManager" && slices.Contains(g.Components, "kubelet")
	}
	if !named {
		return nil, nil, fmt.Errorf("kep.yaml's feature-gates do not name EventedVolumeManager for the kubelet")
	}
	sets := map[string][]string{"kep.yaml's metrics": kep.Metrics}
	var table []Metric
	for _, line := range strings.Split(section.FindString(string(md)), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !code.MatchString(cells[1]) {
			continue
		}
		m := Metric{Name: code.FindStringSubmatch(cells[1])[1], Type: strings.TrimSpace(cells[2])}
		for _, l := range code.FindAllStringSubmatch(parens.ReplaceAllString(cells[3], ""), -1) {
			m.Labels = append(m.Labels, l[1])
		}
		table = append(table, m)
		sets["KEP.md's metrics table"] = append(sets["KEP.md's metrics table"], m.Name)
	}
	if len(table) == 0 {
		return nil, nil, fmt.Errorf("KEP.md has no metrics table (| `name` | type | `labels` | under a heading Metrics)")
	}
	return sets, table, nil
}

// Defined returns the names of the metrics that the Go files of one package
// (path to source) define with an options literal (CounterOpts, GaugeOpts,
// ...): its Namespace, Subsystem and Name, which must be constants, joined
// with "_". Registered are those whose literal is in, or in the value of a
// variable passed to, a call of a function named *Register*.
func Defined(pkg map[string][]byte) (defined, registered []string, err error) {
	fset := token.NewFileSet()
	var files []*ast.File
	for path, src := range pkg {
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
	}
	// With no importer the imports do not resolve, but the checker still
	// computes the values of the package's constant expressions.
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	_, _ = (&types.Config{Error: func(error) {}}).Check("", fset, files, info)
	passed := map[string]bool{}             // the arguments of the Register calls
	inVar := map[*ast.CompositeLit]string{} // the variable or argument whose value holds a literal
	owner := map[string]string{}            // a metric's variable or argument
	mark := func(value ast.Expr, owner string) {
		ast.Inspect(value, func(n ast.Node) bool {
			if lit, ok := n.(*ast.CompositeLit); ok {
				inVar[lit] = owner
			}
			return true
		})
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && strings.Contains(sel.Sel.Name, "Register") {
					for _, a := range n.Args {
						passed[types.ExprString(a)] = true
						mark(a, types.ExprString(a))
					}
				}
			case *ast.ValueSpec:
				for i, v := range n.Values {
					mark(v, n.Names[i].Name)
				}
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); !ok || !opts.MatchString(sel.Sel.Name) {
					return true
				}
				parts := map[string]string{}
				for _, e := range n.Elts {
					kv, ok := e.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					if v := info.Types[kv.Value].Value; v != nil && v.Kind() == constant.String {
						parts[types.ExprString(kv.Key)] = constant.StringVal(v)
					} else if k := types.ExprString(kv.Key); k == "Namespace" || k == "Subsystem" || k == "Name" {
						err = fmt.Errorf("%s: the metric's %s is not a string constant", fset.Position(kv.Pos()), k)
					}
				}
				name := strings.Join(slices.DeleteFunc([]string{parts["Namespace"], parts["Subsystem"], parts["Name"]}, func(s string) bool { return s == "" }), "_")
				defined = append(defined, name)
				owner[name] = inVar[n]
			}
			return true
		})
	}
	for _, name := range defined {
		if passed[owner[name]] {
			registered = append(registered, name)
		}
	}
	return defined, registered, err
}

// Exposed returns the series' metrics in families, a scrape of a kubelet's
// /metrics: those whose names begin with the first three words of one of
// table's. A metric with labels has no family before its first value: those
// of table's that the scrape lacks are returned too, as unseen. The error
// names each family whose type or label names are not table's.
func Exposed(families map[string]*dto.MetricFamily, table []Metric) (exposed, unseen []string, err error) {
	// The first three words ("__" gives a shorter name three).
	prefix := func(name string) string { return strings.Join(strings.SplitN(name+"__", "_", 4)[:3], "_") }
	prefixes := map[string]bool{}
	for _, m := range table {
		prefixes[prefix(m.Name)] = true
	}
	var problems []string
	for name, f := range families {
		if !prefixes[prefix(name)] || len(f.GetMetric()) == 0 {
			continue
		}
		exposed = append(exposed, name)
		var labels []string
		for _, l := range f.GetMetric()[0].GetLabel() {
			labels = append(labels, l.GetName())
		}
		slices.Sort(labels)
		i := slices.IndexFunc(table, func(m Metric) bool { return m.Name == name })
		if typ := strings.ToLower(f.GetType().String()); i >= 0 && (typ != table[i].Type || !slices.Equal(labels, slices.Sorted(slices.Values(table[i].Labels)))) {
			problems = append(problems, fmt.Sprintf("KEP.md gives %s the type %s and labels %v; the kubelet exposes a %s with labels %v", name, table[i].Type, table[i].Labels, typ, labels))
		}
	}
	for _, m := range table {
		if families[m.Name] == nil && len(m.Labels) > 0 {
			unseen = append(unseen, m.Name)
		}
	}
	if len(problems) > 0 {
		err = fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return append(exposed, unseen...), unseen, err
}
