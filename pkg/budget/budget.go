// Package budget measures what the patch series costs a reviewer: the
// non-test Go lines it adds, in all and per pull request, and the exported
// identifiers it adds to the tree's API.
package budget

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path"
	"sort"
	"strconv"
	"strings"
)

// git runs git in tree and returns its output.
func git(tree string, args ...string) ([]byte, error) {
	out, err := exec.Command("git", append([]string{"-C", tree}, args...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return out, nil
}

// goSource reports whether name is a non-test Go file outside test trees,
// the code a reviewer of the kubelet reads.
func goSource(name string) bool {
	return strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") &&
		!strings.HasPrefix(name, "test/") && !strings.Contains(name, "/testing/")
}

// AddedLines returns the non-test Go lines that from..to adds in tree
// (git diff --numstat: lines added, comments and licence headers
// included).
func AddedLines(tree, from, to string) (int, error) {
	out, err := git(tree, "diff", "--numstat", "--no-renames", from, to)
	if err != nil {
		return 0, err
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 || !goSource(f[2]) {
			continue
		}
		added, err := strconv.Atoi(f[0])
		if err != nil {
			return 0, fmt.Errorf("numstat line %q: %w", sc.Text(), err)
		}
		n += added
	}
	return n, sc.Err()
}

// Exported returns the exported identifiers that base..head adds to the
// non-test Go files of tree, as "file: kind name": package-level constants,
// variables, functions and types, methods of exported types, and methods
// of exported interfaces.
func Exported(tree, base, head string) ([]string, error) {
	out, err := git(tree, "diff", "--name-only", "--diff-filter=AM", base, head)
	if err != nil {
		return nil, err
	}
	var added []string
	for _, name := range strings.Fields(string(out)) {
		if !goSource(name) {
			continue
		}
		now, err := exportedAt(tree, head, name)
		if err != nil {
			return nil, err
		}
		before := map[string]bool{}
		if _, err := git(tree, "cat-file", "-e", base+":"+name); err == nil {
			if before, err = exportedAt(tree, base, name); err != nil {
				return nil, err
			}
		}
		for id := range now {
			if !before[id] {
				added = append(added, name+": "+id)
			}
		}
	}
	sort.Strings(added)
	return added, nil
}

// exportedAt returns the exported identifiers of the Go file name at rev.
func exportedAt(tree, rev, name string) (map[string]bool, error) {
	src, err := git(tree, "show", rev+":"+name)
	if err != nil {
		return nil, err
	}
	f, err := parser.ParseFile(token.NewFileSet(), path.Base(name), src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				if d.Name.IsExported() {
					ids["func "+d.Name.Name] = true
				}
			} else if recv := receiverType(d.Recv.List[0].Type); ast.IsExported(recv) && d.Name.IsExported() {
				ids["method "+recv+"."+d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							ids[d.Tok.String()+" "+n.Name] = true
						}
					}
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					ids["type "+s.Name.Name] = true
					if it, ok := s.Type.(*ast.InterfaceType); ok {
						for _, m := range it.Methods.List {
							for _, n := range m.Names {
								if n.IsExported() {
									ids["method "+s.Name.Name+"."+n.Name] = true
								}
							}
						}
					}
				}
			}
		}
	}
	return ids, nil
}

// receiverType is the name of a method's receiver type.
func receiverType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
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

// Words counts the words of text as wc -w does: runs of non-space.
func Words(text []byte) int {
	return len(bytes.Fields(text))
}

// Commits returns the commits of base..head in tree, oldest first.
func Commits(tree, base, head string) ([]string, error) {
	out, err := git(tree, "rev-list", "--reverse", base+".."+head)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}
