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

package series

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"sort"
	"strings"
)

// Ident kinds.
const (
	KindFunc   = "func"
	KindType   = "type"
	KindVar    = "var"
	KindConst  = "const"
	KindMethod = "method"
	KindField  = "field"
)

// Ident is one exported identifier a Go file declares.
type Ident struct {
	// Kind is one of the Kind constants.
	Kind string
	// Name is the identifier, qualified by its type for a method or a
	// field: "Foo", "T.Method", "T.Field".
	Name string
}

func (i Ident) String() string { return i.Kind + " " + i.Name }

// ExportedIdents lists the exported identifiers a Go file declares: its
// exported top-level funcs, types, vars and consts, the exported methods of
// its exported types, and the exported fields and interface methods of its
// exported types (embedded fields count under their type's name).
func ExportedIdents(filename string, src []byte) ([]Ident, error) {
	f, err := parser.ParseFile(token.NewFileSet(), filename, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var ids []Ident
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil || len(d.Recv.List) == 0 {
				ids = append(ids, Ident{KindFunc, d.Name.Name})
				continue
			}
			recv := receiverType(d.Recv.List[0].Type)
			if ast.IsExported(recv) {
				ids = append(ids, Ident{KindMethod, recv + "." + d.Name.Name})
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					ids = append(ids, Ident{KindType, s.Name.Name})
					ids = append(ids, members(s.Name.Name, s.Type)...)
				case *ast.ValueSpec:
					kind := KindVar
					if d.Tok == token.CONST {
						kind = KindConst
					}
					for _, n := range s.Names {
						if n.IsExported() {
							ids = append(ids, Ident{kind, n.Name})
						}
					}
				}
			}
		}
	}
	return ids, nil
}

// receiverType is the name of a method's receiver type: T for T, *T, T[K]
// and *T[K].
func receiverType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// members are the exported fields of a struct type and the exported methods
// of an interface type.
func members(typeName string, e ast.Expr) []Ident {
	var ids []Ident
	add := func(kind string, fields *ast.FieldList) {
		if fields == nil {
			return
		}
		for _, f := range fields.List {
			if len(f.Names) == 0 { // embedded
				if n := receiverType(embeddedType(f.Type)); ast.IsExported(n) {
					ids = append(ids, Ident{kind, typeName + "." + n})
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					ids = append(ids, Ident{kind, typeName + "." + n.Name})
				}
			}
		}
	}
	switch t := e.(type) {
	case *ast.StructType:
		add(KindField, t.Fields)
	case *ast.InterfaceType:
		add(KindMethod, t.Methods)
	}
	return ids
}

// embeddedType strips a package qualifier from an embedded field's type.
func embeddedType(e ast.Expr) ast.Expr {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if s, ok := e.(*ast.SelectorExpr); ok {
		return s.Sel
	}
	return e
}

// FileIdents are the exported identifiers of one file.
type FileIdents struct {
	Path   string
	Idents []Ident
}

// ExportsReport counts the exported identifiers a series adds.
type ExportsReport struct {
	// New are the non-test Go files the series adds, with every exported
	// identifier they declare.
	New []FileIdents
	// Upstream are the non-test Go files of the release the series
	// modifies, with the exported identifiers the series adds to them.
	Upstream []FileIdents
}

// Count is the number of identifiers in files.
func Count(files []FileIdents) int {
	n := 0
	for _, f := range files {
		n += len(f.Idents)
	}
	return n
}

// CountByKind is "3 funcs, 2 types, ..." for files.
func CountByKind(files []FileIdents) string {
	counts := map[string]int{}
	for _, f := range files {
		for _, id := range f.Idents {
			counts[id.Kind]++
		}
	}
	var parts []string
	for _, k := range []string{KindFunc, KindType, KindVar, KindConst, KindMethod, KindField} {
		if counts[k] > 0 {
			parts = append(parts, plural(counts[k], k))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// isCountedGo says whether path is a Go file whose identifiers count: not a
// test, not test data.
func isCountedGo(path string) bool {
	return strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") &&
		!strings.Contains("/"+path, "/testdata/")
}

// Exports counts the exported identifiers that base..head adds: every one
// in a non-test Go file the series adds, and in the release's own files the
// ones head declares and base does not.
func Exports(repo, base, head string) (*ExportsReport, error) {
	lines, err := gitLines(repo, "diff", "--name-status", "-M", "--no-color", base, head, "--", "*.go")
	if err != nil {
		return nil, err
	}
	show := func(rev, path string) ([]Ident, error) {
		src, err := git(repo, "show", rev+":"+path)
		if err != nil {
			return nil, err
		}
		return ExportedIdents(path, src)
	}
	rep := &ExportsReport{}
	for _, l := range lines {
		f := strings.Split(l, "\t")
		status := f[0]
		oldPath, newPath := unquotePath(f[len(f)-1]), unquotePath(f[len(f)-1])
		if len(f) == 3 {
			oldPath = unquotePath(f[1])
		}
		if !isCountedGo(newPath) {
			continue
		}
		switch status[0] {
		case 'A', 'C':
			ids, err := show(head, newPath)
			if err != nil {
				return nil, err
			}
			if len(ids) > 0 {
				rep.New = append(rep.New, FileIdents{Path: newPath, Idents: ids})
			}
		case 'M', 'R':
			after, err := show(head, newPath)
			if err != nil {
				return nil, err
			}
			before, err := show(base, oldPath)
			if err != nil {
				return nil, err
			}
			had := map[Ident]bool{}
			for _, id := range before {
				had[id] = true
			}
			var ids []Ident
			for _, id := range after {
				if !had[id] {
					ids = append(ids, id)
				}
			}
			if len(ids) > 0 {
				rep.Upstream = append(rep.Upstream, FileIdents{Path: newPath, Idents: ids})
			}
		}
	}
	return rep, nil
}

// WriteExports prints r: per file the number of exported identifiers, the
// most first (at most topFiles files per group), and the totals.
func WriteExports(w io.Writer, r *ExportsReport, topFiles int) {
	group := func(title string, files []FileIdents, listNames bool) {
		fmt.Fprintf(w, "%s: %d (%s) in %s\n", title, Count(files), CountByKind(files), plural(len(files), "file"))
		sorted := append([]FileIdents(nil), files...)
		sort.SliceStable(sorted, func(a, b int) bool { return len(sorted[a].Idents) > len(sorted[b].Idents) })
		for i, f := range sorted {
			if topFiles > 0 && i == topFiles {
				fmt.Fprintf(w, "  and %s\n", plural(len(sorted)-topFiles, "more file"))
				break
			}
			fmt.Fprintf(w, "  %4d  %s", len(f.Idents), f.Path)
			if listNames {
				names := make([]string, len(f.Idents))
				for j, id := range f.Idents {
					names[j] = id.Name
				}
				fmt.Fprintf(w, ": %s", strings.Join(names, ", "))
			}
			fmt.Fprintln(w)
		}
	}
	group("exported identifiers in the series' new non-test Go files", r.New, false)
	group("exported identifiers the series adds to upstream's non-test Go files", r.Upstream, true)
}
