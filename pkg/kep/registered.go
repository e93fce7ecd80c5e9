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
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// MetricsImportPath is the package whose constructors define the metrics
// RegisteredMetrics finds.
const MetricsImportPath = "k8s.io/component-base/metrics"

// constructors maps each metric constructor of MetricsImportPath to the
// metric type it builds and whether it takes label names.
var constructors = map[string]struct {
	typ string
	vec bool
}{
	"NewCounter":            {"counter", false},
	"NewCounterVec":         {"counter", true},
	"NewGauge":              {"gauge", false},
	"NewGaugeVec":           {"gauge", true},
	"NewGaugeFunc":          {"gauge", false},
	"NewHistogram":          {"histogram", false},
	"NewHistogramVec":       {"histogram", true},
	"NewTimingHistogram":    {"histogram", false},
	"NewTimingHistogramVec": {"histogram", true},
	"NewSummary":            {"summary", false},
	"NewSummaryVec":         {"summary", true},
}

// Metric is one metric a Go file defines.
type Metric struct {
	// Name is the full name, namespace_subsystem_name without the empty
	// parts, as Prometheus exposes it.
	Name string
	// Type is counter, gauge, histogram or summary.
	Type string
	// Labels are the label names, in the order the code gives them; nil
	// for a metric without labels.
	Labels []string
	// Pos is where the constructor is called: file:line.
	Pos string
	// Registered is whether the package passes the metric to a registry's
	// Register or MustRegister: the package-level variable that holds it,
	// or the constructor call itself. A metric only defined is never
	// exposed.
	Registered bool
}

// SourceFile is one Go file of a package.
type SourceFile struct {
	// Path names the file in positions and in the filter of
	// RegisteredMetrics.
	Path string
	// Src is the file's content.
	Src []byte
}

// RegisteredMetrics finds the metrics that the files of one Go package
// define with the constructors of MetricsImportPath, in the files for which
// from returns true (all files if from is nil). String constants, and
// package-level []string variables for label names, are resolved across all
// of the package's files. A name or a label that is not a string literal or
// such a constant, or options that are not a literal, is an error: the check
// must not skip a metric it cannot read.
func RegisteredMetrics(pkg []SourceFile, from func(path string) bool) ([]Metric, error) {
	fset := token.NewFileSet()
	var files []*ast.File
	var paths []string
	for _, sf := range pkg {
		f, err := parser.ParseFile(fset, sf.Path, sf.Src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		paths = append(paths, sf.Path)
	}
	r := newResolver(files)
	registered, held := registrations(files)
	var out []Metric
	for i, f := range files {
		if from != nil && !from(paths[i]) {
			continue
		}
		local := importName(f, MetricsImportPath)
		if local == "" {
			continue
		}
		var err error
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || err != nil {
				return err == nil
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); !ok || id.Name != local {
				return true
			}
			c, ok := constructors[sel.Sel.Name]
			if !ok {
				return true
			}
			pos := fset.Position(call.Pos())
			where := fmt.Sprintf("%s:%d", pos.Filename, pos.Line)
			var m Metric
			m, err = r.metric(call, c.typ, c.vec)
			if err != nil {
				err = fmt.Errorf("%s: %s.%s: %w", where, local, sel.Sel.Name, err)
				return false
			}
			m.Pos = where
			m.Registered = registered[call] || held[call] != "" && registered[held[call]]
			out = append(out, m)
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// registerFuncs are the methods and functions that register a metric with
// a registry (k8s.io/component-base/metrics/legacyregistry's, or a
// KubeRegistry's).
var registerFuncs = map[string]bool{"Register": true, "MustRegister": true, "CustomRegister": true, "CustomMustRegister": true, "RawMustRegister": true}

// registrations finds, in the package's files, what is registered: the
// names of the identifiers passed to a registerFuncs call, and the calls
// made inside its arguments. held maps each call that is the value of a
// package-level variable to that variable's name.
func registrations(files []*ast.File) (registered map[any]bool, held map[*ast.CallExpr]string) {
	registered, held = map[any]bool{}, map[*ast.CallExpr]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, v := range vs.Values {
					if call, ok := v.(*ast.CallExpr); ok && i < len(vs.Names) {
						held[call] = vs.Names[i].Name
					}
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !registerFuncs[sel.Sel.Name] {
				return true
			}
			for _, arg := range call.Args {
				if id, ok := arg.(*ast.Ident); ok {
					registered[id.Name] = true
				}
				ast.Inspect(arg, func(n ast.Node) bool {
					if c, ok := n.(*ast.CallExpr); ok {
						registered[c] = true
					}
					return true
				})
			}
			return true
		})
	}
	return registered, held
}

// importName is the name under which f imports path, or "" if it does not.
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil || p != path {
			continue
		}
		if imp.Name != nil {
			if imp.Name.Name == "_" || imp.Name.Name == "." {
				return ""
			}
			return imp.Name.Name
		}
		return path[strings.LastIndex(path, "/")+1:]
	}
	return ""
}

// resolver resolves identifiers to the package-level constants and
// variables of one package.
type resolver struct {
	consts map[string]ast.Expr
	vars   map[string]ast.Expr
}

func newResolver(files []*ast.File) *resolver {
	r := &resolver{consts: map[string]ast.Expr{}, vars: map[string]ast.Expr{}}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					if g.Tok == token.CONST {
						r.consts[name.Name] = vs.Values[i]
					} else {
						r.vars[name.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	return r
}

// str evaluates a constant string expression: literals, the package's
// constants, parentheses and +.
func (r *resolver) str(e ast.Expr, depth int) (string, error) {
	if depth > 50 {
		return "", fmt.Errorf("constant too deeply nested")
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", fmt.Errorf("%s is not a string", e.Value)
		}
		return strconv.Unquote(e.Value)
	case *ast.Ident:
		v, ok := r.consts[e.Name]
		if !ok {
			return "", fmt.Errorf("%s is not a string constant of the package", e.Name)
		}
		return r.str(v, depth+1)
	case *ast.ParenExpr:
		return r.str(e.X, depth+1)
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			break
		}
		x, err := r.str(e.X, depth+1)
		if err != nil {
			return "", err
		}
		y, err := r.str(e.Y, depth+1)
		if err != nil {
			return "", err
		}
		return x + y, nil
	}
	return "", fmt.Errorf("cannot evaluate %T as a constant string", e)
}

// labels evaluates a []string literal, or a package-level variable holding
// one, of constant strings.
func (r *resolver) labels(e ast.Expr) ([]string, error) {
	if id, ok := e.(*ast.Ident); ok {
		if id.Name == "nil" {
			return nil, nil
		}
		v, ok := r.vars[id.Name]
		if !ok {
			return nil, fmt.Errorf("labels: %s is not a package-level []string variable", id.Name)
		}
		e = v
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, fmt.Errorf("labels: cannot evaluate %T as a []string literal", e)
	}
	if at, ok := lit.Type.(*ast.ArrayType); !ok || !isIdent(at.Elt, "string") {
		return nil, fmt.Errorf("labels: not a []string literal")
	}
	var out []string
	for _, el := range lit.Elts {
		s, err := r.str(el, 0)
		if err != nil {
			return nil, fmt.Errorf("labels: %w", err)
		}
		out = append(out, s)
	}
	return out, nil
}

// metric reads one constructor call: its options literal and, for a vector,
// its label names.
func (r *resolver) metric(call *ast.CallExpr, typ string, vec bool) (Metric, error) {
	m := Metric{Type: typ}
	if len(call.Args) == 0 {
		return m, fmt.Errorf("no options")
	}
	opts := call.Args[0]
	if u, ok := opts.(*ast.UnaryExpr); ok && u.Op == token.AND {
		opts = u.X
	}
	lit, ok := opts.(*ast.CompositeLit)
	if !ok {
		return m, fmt.Errorf("the options are not a literal (%T)", opts)
	}
	parts := map[string]string{}
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return m, fmt.Errorf("the options literal has an unkeyed field")
		}
		key, ok := kv.Key.(*ast.Ident)
		if !ok {
			continue
		}
		switch key.Name {
		case "Namespace", "Subsystem", "Name":
			s, err := r.str(kv.Value, 0)
			if err != nil {
				return m, fmt.Errorf("%s: %w", key.Name, err)
			}
			parts[key.Name] = s
		case "ConstLabels":
			return m, fmt.Errorf("ConstLabels are not read by this check")
		}
	}
	if parts["Name"] == "" {
		return m, fmt.Errorf("no Name")
	}
	m.Name = fullName(parts["Namespace"], parts["Subsystem"], parts["Name"])
	if vec {
		if len(call.Args) < 2 {
			return m, fmt.Errorf("no label names")
		}
		l, err := r.labels(call.Args[1])
		if err != nil {
			return m, err
		}
		m.Labels = l
	}
	return m, nil
}

// fullName joins the non-empty parts with "_", as prometheus.BuildFQName.
func fullName(namespace, subsystem, name string) string {
	var parts []string
	for _, p := range []string{namespace, subsystem, name} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "_")
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
