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
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// A series is bisectable only if every commit builds: BuildEach checks out
// each commit of a series in a worktree of its own and builds and vets it.

// BuildOptions say what BuildEach builds.
type BuildOptions struct {
	// Repo is the repository that holds the series.
	Repo string
	// Worktree is a worktree of Repo to check each commit out in. If it
	// does not exist, BuildEach adds it (detached) and removes it when done.
	Worktree string
	// Base and Head delimit the series, Base..Head.
	Base, Head string
	// Build are the packages to build in each commit, relative to the
	// worktree: one main package is linked to /dev/null; several are
	// compiled only.
	Build []string
	// BuildFlags go to both go build and go vet, e.g. -trimpath, which
	// keys the build cache by module rather than by directory so that
	// builds in the worktree reuse the ones in the tree.
	BuildFlags []string
	// Env is added to the environment of go build and go vet.
	Env []string
	// Progress, if set, gets a line per commit as it finishes.
	Progress io.Writer
}

// CommitBuild is how one commit fared.
type CommitBuild struct {
	Commit Commit
	// VetPackages are the packages the commit changes Go files of, which
	// go vet checked.
	VetPackages []string
	// BuildErr and VetErr are the failures, with the tool's output.
	BuildErr, VetErr error
	// BuildTime and VetTime are how long each took.
	BuildTime, VetTime time.Duration
}

// OK says whether the commit built and vetted.
func (c CommitBuild) OK() bool { return c.BuildErr == nil && c.VetErr == nil }

// String is one line: "0003 55278105ce82 ok: build 12s, vet 3s (2 packages)  subject",
// or "FAIL (build, vet)" in place of "ok".
func (c CommitBuild) String() string {
	state := "ok"
	if !c.OK() {
		var failed []string
		if c.BuildErr != nil {
			failed = append(failed, "build")
		}
		if c.VetErr != nil {
			failed = append(failed, "vet")
		}
		state = "FAIL (" + strings.Join(failed, ", ") + ")"
	}
	return fmt.Sprintf("%s %s: build %s, vet %s (%s)  %s", c.Commit.Short(), state,
		c.BuildTime.Round(time.Second), c.VetTime.Round(time.Second), plural(len(c.VetPackages), "package"), c.Commit.Subject)
}

// vetPackages are ./dir for every directory with a .go file that commit
// adds, modifies or renames and that still holds Go files in the worktree.
func vetPackages(repo, worktree, commit string) ([]string, error) {
	names, err := gitLines(repo, "diff", "--name-only", "--diff-filter=ACMR", "-M", commit+"^", commit, "--", "*.go")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var pkgs []string
	for _, n := range names {
		dir := path.Dir(unquotePath(n))
		if seen[dir] || strings.Contains("/"+dir+"/", "/testdata/") {
			continue
		}
		seen[dir] = true
		if m, _ := filepath.Glob(filepath.Join(worktree, filepath.FromSlash(dir), "*.go")); len(m) == 0 {
			continue
		}
		if dir == "." {
			pkgs = append(pkgs, ".")
		} else {
			pkgs = append(pkgs, "./"+dir)
		}
	}
	sort.Strings(pkgs)
	return pkgs, nil
}

// goCmd runs the go command in dir; a failure's error carries its output.
func goCmd(ctx context.Context, dir string, env []string, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, strings.TrimRight(out.String(), "\n"))
	}
	return nil
}

// BuildEach checks out every commit of Base..Head in the worktree, in
// order, builds opts.Build and vets the packages the commit changes. It
// returns an error only when it cannot check a commit; a commit that does
// not build is a CommitBuild that is not OK.
func BuildEach(ctx context.Context, opts BuildOptions) ([]CommitBuild, error) {
	commits, err := Commits(opts.Repo, opts.Base, opts.Head)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(opts.Worktree); os.IsNotExist(err) {
		if _, err := git(opts.Repo, "worktree", "add", "-q", "--detach", opts.Worktree, opts.Head); err != nil {
			return nil, err
		}
		defer func() {
			_, _ = git(opts.Repo, "worktree", "remove", "--force", opts.Worktree)
			_, _ = git(opts.Repo, "worktree", "prune")
		}()
	}
	var results []CommitBuild
	for _, c := range commits {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		if _, err := git(opts.Worktree, "checkout", "-q", "--detach", "--force", c.SHA); err != nil {
			return results, err
		}
		r := CommitBuild{Commit: c}
		if r.VetPackages, err = vetPackages(opts.Repo, opts.Worktree, c.SHA); err != nil {
			return results, err
		}
		start := time.Now()
		args := append([]string{"build"}, opts.BuildFlags...)
		if len(opts.Build) == 1 {
			args = append(args, "-o", os.DevNull)
		}
		r.BuildErr = goCmd(ctx, opts.Worktree, opts.Env, append(args, opts.Build...)...)
		r.BuildTime = time.Since(start)
		if len(r.VetPackages) > 0 {
			start = time.Now()
			args := append(append([]string{"vet"}, opts.BuildFlags...), r.VetPackages...)
			r.VetErr = goCmd(ctx, opts.Worktree, opts.Env, args...)
			r.VetTime = time.Since(start)
		}
		if opts.Progress != nil {
			fmt.Fprintln(opts.Progress, r)
		}
		results = append(results, r)
	}
	return results, nil
}
