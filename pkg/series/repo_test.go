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
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// testRepo is a throwaway git repository in a test's temporary directory.
type testRepo struct {
	t   *testing.T
	dir string
}

// newTestRepo makes an empty repository, with git's global and system
// configuration out of the way and fixed identities.
func newTestRepo(t *testing.T) *testRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.invalid",
		"GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.invalid",
	} {
		t.Setenv(k, v)
	}
	r := &testRepo{t: t, dir: filepath.Join(t.TempDir(), "repo")}
	r.git("init", "-q", "-b", "main", r.dir)
	return r
}

func (r *testRepo) git(args ...string) string {
	r.t.Helper()
	if len(args) == 0 || args[0] != "init" {
		args = append([]string{"-C", r.dir}, args...)
	}
	out, err := exec.Command("git", args...).CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// write writes a file, its lines joined with newlines.
func (r *testRepo) write(path string, lines ...string) {
	r.t.Helper()
	p := filepath.Join(r.dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	content := strings.Join(lines, "\n")
	if len(lines) > 0 {
		content += "\n"
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *testRepo) remove(path string) { r.t.Helper(); r.git("rm", "-q", path) }

// move moves a file with git mv, making the directory it moves to.
func (r *testRepo) move(from, to string) {
	r.t.Helper()
	if err := os.MkdirAll(filepath.Dir(filepath.Join(r.dir, filepath.FromSlash(to))), 0o755); err != nil {
		r.t.Fatal(err)
	}
	r.git("mv", from, to)
}

// commit commits everything and returns the commit's hash.
func (r *testRepo) commit(subject string) string {
	r.t.Helper()
	r.git("add", "-A")
	r.git("commit", "-q", "--allow-empty", "-m", subject)
	return r.git("rev-parse", "HEAD")
}

// numbered returns n distinct lines "prefix 1" ... "prefix n".
func numbered(prefix string, n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = prefix + " " + strconv.Itoa(i+1)
	}
	return lines
}
