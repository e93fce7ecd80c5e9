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

// Package kep checks the series' metrics against the KEP's, and measures
// what the series costs a reviewer.
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
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/yaml"
)

// Compare returns an error naming each metric that not all sets list once.
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

// Documented reads kep.yaml's metrics and KEP.md's metrics table in dir, as
// sets for Compare and as the table, and checks kep.yaml's feature-gates.
func Documented(dir string) (map[string][]string, []Metric, error) {
	y, err := os.ReadFile(filepath.Join(dir, "kep.yaml"))
	md, mdErr := os.ReadFile(filepath.Join(dir, "KEP.md"))
	if err := errors.Join(err, mdErr); err != nil {
		return nil, nil, err
	}
	type gate struct {
		Name       string
		Components []string
	}
	var kep struct {
		FeatureGates []gate `json:"feature-gates"`
		Metrics      []string
	}
	if err := yaml.Unmarshal(y, &kep); err != nil {
		return nil, nil, fmt.Errorf("kep.yaml does not parse: %w", err)
	}
	if !slices.ContainsFunc(kep.FeatureGates, func(g gate) bool {
		return g.Name == "EventedVolumeManager" && slices.Contains(g.Components, "kubelet")
	}) {
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

// Defined returns the metrics that one package's files define in *Opts
// literals, and those it passes (or their variables) to a *Register* call.
func Defined(pkg map[string][]byte) (defined, registered []string, err error) {
	fset := token.NewFileSet()
	var files []*ast.File
	for name, src := range pkg {
		f, err := parser.ParseFile(fset, name, src, 0)
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

// Exposed returns the series' metrics in a kubelet's scrape and, also as
// unseen, table's with labels, which have no family before a first value;
// the error names each family whose type or labels are not table's.
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

// SeriesMetrics returns, sorted, the metrics base..head adds in the tree at dir.
func SeriesMetrics(dir, base, head string) (defined, registered []string, err error) {
	changed, err := git(dir, "diff", "--name-only", "--diff-filter=ACMR", base+".."+head, "--", "*.go")
	if err != nil {
		return nil, nil, err
	}
	pathspecs := []string{":(exclude,glob)**/*_test.go"}
	for _, f := range strings.Fields(changed) {
		pathspecs = append(pathspecs, ":(glob)"+path.Dir(f)+"/*.go")
	}
	upstream, _, err := metricsAt(dir, base, pathspecs)
	if err != nil {
		return nil, nil, err
	}
	if defined, registered, err = metricsAt(dir, head, pathspecs); err != nil {
		return nil, nil, err
	}
	isUpstream := func(m string) bool { return slices.Contains(upstream, m) }
	return slices.DeleteFunc(defined, isUpstream), slices.DeleteFunc(registered, isUpstream), nil
}

// metricsAt returns, sorted, the metrics pathspecs' files define at rev.
func metricsAt(dir, rev string, pathspecs []string) (defined, registered []string, err error) {
	files, err := git(dir, append([]string{"grep", "-l", "-F", `"k8s.io/component-base/metrics`, rev, "--"}, pathspecs...)...)
	if err != nil {
		return nil, nil, err
	}
	pkgs := map[string]map[string][]byte{}
	for _, f := range strings.Fields(files) {
		f = strings.TrimPrefix(f, rev+":")
		content, err := git(dir, "show", rev+":"+f)
		if err != nil {
			return nil, nil, err
		}
		if pkgs[path.Dir(f)] == nil {
			pkgs[path.Dir(f)] = map[string][]byte{}
		}
		pkgs[path.Dir(f)][f] = []byte(content)
	}
	for _, pkg := range pkgs {
		d, r, err := Defined(pkg)
		if err != nil {
			return nil, nil, fmt.Errorf("at %s: %w", rev, err)
		}
		defined, registered = append(defined, d...), append(registered, r...)
	}
	slices.Sort(defined)
	slices.Sort(registered)
	return defined, registered, nil
}

// git runs git in dir; git grep finding nothing (exit status 1) is no error.
func git(dir string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	var exit *exec.ExitError
	if err != nil && !(args[0] == "grep" && errors.As(err, &exit) && exit.ExitCode() == 1) {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}

// Commits returns the commits of base..head in the git tree at dir, oldest first.
func Commits(dir, base, head string) ([]string, error) {
	out, err := git(dir, "rev-list", "--reverse", base+".."+head)
	return strings.Fields(out), err
}

// goSource reports whether name is a non-test Go file outside test trees.
func goSource(name string) bool {
	return strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") &&
		!strings.HasPrefix(name, "test/") && !strings.Contains(name, "/testing/")
}

// AddedLines returns the non-test Go lines (git diff --numstat) from..to adds.
func AddedLines(dir, from, to string) (int, error) {
	out, err := git(dir, "diff", "--numstat", "--no-renames", from, to)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 || !goSource(f[2]) {
			continue
		}
		added, err := strconv.Atoi(f[0])
		if err != nil {
			return 0, fmt.Errorf("numstat line %q: %w", line, err)
		}
		n += added
	}
	return n, nil
}

// ExportedIdentifiers returns, as "file: kind name", what base..head exports.
func ExportedIdentifiers(dir, base, head string) ([]string, error) {
	out, err := git(dir, "diff", "--name-only", "--diff-filter=AM", base, head)
	if err != nil {
		return nil, err
	}
	var added []string
	for _, name := range strings.Fields(out) {
		if !goSource(name) {
			continue
		}
		now, err := exportedAt(dir, head, name)
		if err != nil {
			return nil, err
		}
		before := map[string]bool{}
		if _, err := git(dir, "cat-file", "-e", base+":"+name); err == nil {
			if before, err = exportedAt(dir, base, name); err != nil {
				return nil, err
			}
		}
		for id := range now {
			if !before[id] {
				added = append(added, name+": "+id)
			}
		}
	}
	slices.Sort(added)
	return added, nil
}

func exportedAt(dir, rev, name string) (map[string]bool, error) {
	src, err := git(dir, "show", rev+":"+name)
	if err != nil {
		return nil, err
	}
	f, err := parser.ParseFile(token.NewFileSet(), path.Base(name), src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	add := func(name *ast.Ident, id string) {
		if name.IsExported() {
			ids[id] = true
		}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				add(d.Name, "func "+d.Name.Name)
			} else if recv := strings.TrimLeft(strings.SplitN(types.ExprString(d.Recv.List[0].Type), "[", 2)[0], "*"); ast.IsExported(recv) {
				add(d.Name, "method "+recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						add(n, d.Tok.String()+" "+n.Name)
					}
				case *ast.TypeSpec:
					add(s.Name, "type "+s.Name.Name)
					if it, ok := s.Type.(*ast.InterfaceType); ok && s.Name.IsExported() {
						for _, m := range it.Methods.List {
							for _, n := range m.Names {
								add(n, "method "+s.Name.Name+"."+n.Name)
							}
						}
					}
				}
			}
		}
	}
	return ids, nil
}
