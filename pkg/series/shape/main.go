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

// Command shape checks the shape of a patch series kept as the commits
// BASE..HEAD of a git repository:
//
//	shape churn   -repo DIR -base REV [-head REV]
//	    lines one commit adds and a later one deletes or changes; exits 1
//	    if there are any
//	shape exports -repo DIR -base REV [-head REV]
//	    the exported identifiers the series adds; never fails
//	shape commits -repo DIR -base REV [-head REV] -worktree DIR [-build PKG]...
//	    builds and vets each commit in a worktree; exits 1 if one fails
//
// Exit status 2 means the check itself could not run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	"evented-volume-manager/pkg/series"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet("shape "+cmd, flag.ExitOnError)
	repo := fs.String("repo", ".", "the repository that holds the series")
	base := fs.String("base", "", "the release the series applies to (required)")
	head := fs.String("head", "HEAD", "the series' last commit")
	top := fs.Int("top", 3, "files to name per line")
	worktree := fs.String("worktree", "", "commits: the worktree to check each commit out in (added and removed if it does not exist)")
	var build, buildFlags, env listFlag
	fs.Var(&build, "build", "commits: a package to build in each commit (repeatable; default ./cmd/kubelet)")
	fs.Var(&buildFlags, "buildflag", "commits: a flag for go build and go vet (repeatable, e.g. -trimpath)")
	fs.Var(&env, "env", "commits: NAME=VALUE for go build and go vet (repeatable, e.g. CGO_ENABLED=0)")
	_ = fs.Parse(os.Args[2:])
	if *base == "" {
		fail("-base is required")
	}
	headSHA, err := series.ResolveCommit(*repo, *head)
	if err != nil {
		fail("%v", err)
	}

	switch cmd {
	case "churn":
		start := time.Now()
		r, err := series.Churn(*repo, *base, headSHA)
		if err != nil {
			fail("%v", err)
		}
		series.WriteChurn(os.Stdout, r, *top)
		fmt.Printf("checked in %s\n", time.Since(start).Round(100*time.Millisecond))
		if r.Lines > 0 {
			os.Exit(1)
		}
	case "exports":
		r, err := series.Exports(*repo, *base, headSHA)
		if err != nil {
			fail("%v", err)
		}
		series.WriteExports(os.Stdout, r, *top)
	case "commits":
		if *worktree == "" {
			fail("-worktree is required")
		}
		if len(build) == 0 {
			build = listFlag{"./cmd/kubelet"}
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		start := time.Now()
		results, err := series.BuildEach(ctx, series.BuildOptions{
			Repo: *repo, Worktree: *worktree, Base: *base, Head: headSHA,
			Build: build, BuildFlags: buildFlags, Env: env, Progress: os.Stdout,
		})
		if err != nil {
			fail("%v", err)
		}
		var failed []string
		for _, r := range results {
			if r.OK() {
				continue
			}
			failed = append(failed, r.Commit.Short())
			fmt.Printf("\n%s %s:\n", r.Commit.Short(), r.Commit.Subject)
			for _, e := range []error{r.BuildErr, r.VetErr} {
				if e != nil {
					fmt.Println(tail(e.Error(), 30))
				}
			}
		}
		fmt.Printf("%d of %d commits build and vet, in %s\n", len(results)-len(failed), len(results), time.Since(start).Round(time.Second))
		if len(failed) > 0 {
			fmt.Printf("failing: %s\n", strings.Join(failed, ", "))
			os.Exit(1)
		}
	default:
		usage()
	}
}

// tail is the last n lines of s, indented.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[%d lines cut]", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return "    " + strings.Join(lines, "\n    ")
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: shape churn|exports|commits -repo DIR -base REV [-head REV] [flags]")
	os.Exit(2)
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "shape: "+format+"\n", args...)
	os.Exit(2)
}
