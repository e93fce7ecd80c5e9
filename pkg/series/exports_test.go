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
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func identStrings(ids []Ident) []string {
	var s []string
	for _, id := range ids {
		s = append(s, id.String())
	}
	return s
}

func TestExportedIdents(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{{
		name: "top level",
		src: `package p
func Exported() {}
func unexported() {}
type T int
type u int
var V, w = 1, 2
const (
	C = iota
	d
)
var _ = 3
`,
		want: []string{"func Exported", "type T", "var V", "const C"},
	}, {
		name: "methods count on exported types only",
		src: `package p
type T struct{}
type u struct{}
func (T) M() {}
func (*T) N() {}
func (t *T) n() {}
func (u) M() {}
type G[K comparable] struct{}
func (g *G[K]) Get() {}
`,
		want: []string{"type T", "method T.M", "method T.N", "type G", "method G.Get"},
	}, {
		name: "fields and interface methods",
		src: `package p
import "sync"
type S struct {
	A, b int
	C    string
	sync.Mutex
	*Inner
	inner
}
type I interface {
	Do()
	do()
	Other
}
type hidden struct{ X int }
`,
		want: []string{"type S", "field S.A", "field S.C", "field S.Mutex", "field S.Inner", "type I", "method I.Do", "method I.Other"},
	}, {
		name: "nothing exported",
		src:  "package p\n\nfunc f() {}\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			ids, err := ExportedIdents("p.go", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if got := identStrings(ids); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestExports(t *testing.T) {
	r := newTestRepo(t)
	r.write("up/up.go", "package up", "", "func Old() {}", "", "type Iface interface{ A() }")
	r.write("up/other.go", "package up", "", "var Kept = 1")
	r.commit("Release")
	r.git("tag", "v1.0.0")

	// Upstream's file gains a func and an interface method, keeps the rest.
	r.write("up/up.go", "package up", "", "func Old() {}", "", "func Added() {}", "", "type Iface interface{ A(); B() }")
	// A new file, a new test file and new test data.
	r.write("up/new.go", "package up", "", "type T struct{ X, y int }", "", "func (T) M() {}", "", "const c = 1")
	r.write("up/new_test.go", "package up", "", "func TestX() {}")
	r.write("up/testdata/gen.go", "package gen", "", "func Gen() {}")
	r.commit("one: add")
	// Moving upstream's file is not adding what it declares.
	r.move("up/other.go", "up/moved.go")
	r.commit("two: move")

	rep, err := Exports(r.dir, "v1.0.0", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(rep.New), 1; got != want || rep.New[0].Path != "up/new.go" {
		t.Fatalf("new files = %+v, want only up/new.go", rep.New)
	}
	if got, want := identStrings(rep.New[0].Idents), []string{"type T", "field T.X", "method T.M"}; !reflect.DeepEqual(got, want) {
		t.Errorf("new file's identifiers = %q, want %q", got, want)
	}
	if len(rep.Upstream) != 1 || rep.Upstream[0].Path != "up/up.go" {
		t.Fatalf("upstream files = %+v, want only up/up.go", rep.Upstream)
	}
	if got, want := identStrings(rep.Upstream[0].Idents), []string{"func Added", "method Iface.B"}; !reflect.DeepEqual(got, want) {
		t.Errorf("upstream file's added identifiers = %q, want %q", got, want)
	}

	var out bytes.Buffer
	WriteExports(&out, rep, 5)
	for _, want := range []string{
		"exported identifiers in the series' new non-test Go files: 3 (1 type, 1 method, 1 field) in 1 file",
		"exported identifiers the series adds to upstream's non-test Go files: 2 (1 func, 1 method) in 1 file",
		"up/up.go: Added, Iface.B",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
