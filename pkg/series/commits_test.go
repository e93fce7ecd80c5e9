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
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestBuildEach(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module per commit")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not in PATH")
	}
	r := newTestRepo(t)
	r.write("go.mod", "module example.com/m", "", "go 1.22")
	r.write("main.go", "package main", "", `import "example.com/m/p"`, "", "func main() { p.F() }")
	r.write("p/p.go", "package p", "", "func F() {}")
	r.commit("Release")
	r.git("tag", "v1.0.0")

	r.write("p/q.go", "package p", "", "func G() int { return 1 }")
	r.commit("one: builds")
	r.write("p/q.go", "package p", "", `func G() int { return "not an int" }`)
	r.commit("two: does not build")
	r.write("p/q.go", "package p", "", "func G() int { return 2 }")
	r.commit("three: builds again")
	r.write("p/q.go", "package p", "", `import "fmt"`, "", `func G() int { fmt.Printf("%d\n", "s"); return 2 }`)
	r.commit("four: builds, vet fails")
	r.write("README", "docs")
	r.commit("five: no Go file")
	r.write("tools/t.go", "package tools", "", "func T() {}")
	r.write("p/q.go", "package p", "", "func G() int { return 2 }")
	r.commit("six: two packages")

	for _, existing := range []bool{false, true} {
		name := "adds the worktree"
		if existing {
			name = "reuses a worktree"
		}
		t.Run(name, func(t *testing.T) {
			wt := filepath.Join(t.TempDir(), "wt")
			if existing {
				r.git("worktree", "add", "-q", "--detach", wt, "v1.0.0")
				defer r.git("worktree", "remove", "--force", wt)
			}
			var progress bytes.Buffer
			results, err := BuildEach(context.Background(), BuildOptions{
				Repo: r.dir, Worktree: wt, Base: "v1.0.0", Head: "HEAD",
				Build: []string{"."}, Env: []string{"CGO_ENABLED=0", "GOFLAGS=-mod=mod -buildvcs=false", "GOWORK=off"},
				BuildFlags: []string{"-trimpath"}, Progress: &progress,
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range results {
				s := c.Commit.Subject + ":"
				if c.BuildErr != nil {
					s += " build"
				}
				if c.VetErr != nil {
					s += " vet"
				}
				got = append(got, s+" "+strings.Join(c.VetPackages, ","))
			}
			want := []string{
				"one: builds: ./p",
				"two: does not build: build vet ./p",
				"three: builds again: ./p",
				"four: builds, vet fails: vet ./p",
				"five: no Go file: ",
				"six: two packages: ./p,./tools",
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %q\nwant %q", got, want)
			}
			if n := strings.Count(progress.String(), "\n"); n != len(want) {
				t.Errorf("progress has %d lines, want %d:\n%s", n, len(want), progress.String())
			}
			if !strings.Contains(progress.String(), "0002 ") || !strings.Contains(progress.String(), "FAIL (build, vet)") {
				t.Errorf("progress does not report the failing commit:\n%s", progress.String())
			}
			if err := results[1].BuildErr; err == nil || !strings.Contains(err.Error(), "not an int") {
				t.Errorf("build error %v does not carry the compiler's message", err)
			}
			_, statErr := os.Stat(wt)
			if existing && statErr != nil {
				t.Errorf("the given worktree is gone: %v", statErr)
			}
			if !existing && !os.IsNotExist(statErr) {
				t.Errorf("the worktree BuildEach added is still there (%v)", statErr)
			}
		})
	}
}
