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

package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestCommand(t *testing.T) {
	dir := t.TempDir()
	testBinary := filepath.Join(dir, "e2e_node.test")
	scratch := filepath.Join(dir, "run")
	suiteArgs := []string{"--report-dir=" + filepath.Join(dir, "report"), "--kubelet-flags=--a= --b="}

	s := suite{focus: "F", skip: "S", timeout: 45 * time.Minute, procs: 1}
	cmd, err := s.command(testBinary, suiteArgs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{testBinary, suiteArgs[0], suiteArgs[1], "--ginkgo.focus=F", "--ginkgo.timeout=45m0s", "--ginkgo.v", "--ginkgo.no-color", "--ginkgo.skip=S"}
	if !reflect.DeepEqual(cmd.Args, want) || cmd.Dir != scratch {
		t.Errorf("procs 1: got %q in %s, want %q in %s", cmd.Args, cmd.Dir, want, scratch)
	}
	if _, err := os.Lstat(filepath.Join(scratch, "e2e_node.test")); err == nil {
		t.Errorf("procs 1 linked the test binary into %s", scratch)
	}

	s.procs, s.ginkgo, s.skip = 3, filepath.Join(dir, "ginkgo"), ""
	cmd, err = s.command(testBinary, suiteArgs)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(scratch, "e2e_node.test")
	want = []string{s.ginkgo, "--procs=3", "--timeout=45m0s", "--focus=F", "-v", "--no-color", link, "--", suiteArgs[0], suiteArgs[1]}
	if !reflect.DeepEqual(cmd.Args, want) || cmd.Dir != scratch {
		t.Errorf("procs 3: got %q in %s, want %q in %s", cmd.Args, cmd.Dir, want, scratch)
	}
	for name, target := range map[string]string{"e2e_node.test": testBinary, "kubelet": filepath.Join(dir, "kubelet")} {
		if got, err := os.Readlink(filepath.Join(scratch, name)); err != nil || got != target {
			t.Errorf("%s in the scratch directory: got %q (%v), want a link to %s", name, got, err, target)
		}
	}
}
