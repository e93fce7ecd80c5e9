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

// Package series checks that the patches in patches/ keep the rules that
// make them reviewable upstream. hack/verify.sh runs it.
package series

import (
	"bufio"
	"cmp"
	"fmt"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readSeries reads the patches in patches/, in name order, as git am does.
func readSeries(t *testing.T) []*patch {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("..", "..", "patches", "*.patch"))
	if err != nil || len(names) == 0 {
		t.Fatalf("patches/ holds no patch (%v)", err)
	}
	var patches []*patch
	for _, name := range names {
		text, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := parse(filepath.Base(name), string(text))
		if err != nil {
			t.Fatal(err)
		}
		patches = append(patches, p)
	}
	return patches
}

func TestSeriesFollowsTheRules(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// Paths that exist only on the machine running the test.
	paths := []string{root, os.Getenv("HOME"), os.Getenv("GOPATH")}
	if out, err := exec.Command("go", "env", "GOMODCACHE", "GOPATH", "GOCACHE").Output(); err == nil {
		paths = append(paths, strings.Split(strings.TrimSpace(string(out)), "\n")...)
	}
	patterns := forbidden(paths...)
	for _, p := range readSeries(t) {
		for _, problem := range check(p, patterns) {
			t.Error(problem)
		}
	}
}

// TestSeriesDeclaresTheGateFirst checks that the first patch naming the gate declares it.
func TestSeriesDeclaresTheGateFirst(t *testing.T) {
	adds := func(p *patch, match func(string) bool) bool {
		return slices.ContainsFunc(p.Added, func(l addedLine) bool { return match(l.Text) })
	}
	patches := readSeries(t)
	i := slices.IndexFunc(patches, func(p *patch) bool {
		return adds(p, func(text string) bool { return strings.Contains(text, "EventedVolumeManager") })
	})
	if i < 0 {
		t.Fatal("no patch adds a line naming EventedVolumeManager")
	}
	for _, want := range []string{
		`EventedVolumeManager featuregate.Feature = "EventedVolumeManager"`,
		`{Version: version.MustParse("1.37"), Default: false, PreRelease: featuregate.Alpha},`,
		`EventedVolumeManager: {},`,
		`- name: EventedVolumeManager`,
	} {
		if !adds(patches[i], func(text string) bool { return strings.TrimSpace(text) == want }) {
			t.Errorf("%s, the first patch that names the gate, does not declare it: it lacks %q", patches[i].Name, want)
		}
	}
}

// addedLine is a line a patch adds to File, or to the commit message if "".
type addedLine struct {
	File   string
	Number int
	Text   string
}

// patch is one git format-patch file; Added includes the commit message's lines.
type patch struct {
	Name, Author, Subject, Body string
	Files                       []string
	Added                       []addedLine
}

// parse reads one git format-patch file: the headers, the commit message up
// to the "---" line that starts the diffstat (or the first diff), the diffs.
func parse(name, text string) (*patch, error) {
	lines := strings.Split(text, "\n")
	end := slices.Index(lines, "")
	if end < 0 {
		return nil, fmt.Errorf("%s: not a git format-patch file: no end of headers", name)
	}
	head := strings.Join(lines[:end+1], "\n") + "\n"
	if strings.HasPrefix(head, "From ") {
		_, head, _ = strings.Cut(head, "\n") // the mbox line
	}
	hdr, err := textproto.NewReader(bufio.NewReader(strings.NewReader(head))).ReadMIMEHeader()
	p := &patch{Name: name, Author: hdr.Get("From"), Subject: hdr.Get("Subject")}
	if err != nil || p.Author == "" || p.Subject == "" {
		return nil, fmt.Errorf("%s: not a git format-patch file: no From: or Subject: header (%v)", name, err)
	}
	if _, rest, ok := strings.Cut(p.Subject, "]"); ok && strings.HasPrefix(p.Subject, "[") {
		p.Subject = strings.TrimSpace(rest)
	}
	var body []string
	file, inMessage, inHunk := "", true, false
	for i := end + 1; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "diff --git "):
			inMessage, inHunk = false, false
			file = strings.TrimPrefix(line, "diff --git ")
			if j := strings.LastIndex(file, " b/"); j >= 0 {
				file = file[j+3:]
			}
			p.Files = append(p.Files, file)
		case inMessage && line == "---":
			inMessage = false
		case inMessage:
			body = append(body, line)
			p.Added = append(p.Added, addedLine{Number: i + 1, Text: line})
		case strings.HasPrefix(line, "@@"):
			inHunk = true
		case inHunk && strings.HasPrefix(line, "+"):
			p.Added = append(p.Added, addedLine{File: file, Number: i + 1, Text: line[1:]})
		}
	}
	p.Body = strings.TrimSpace(strings.Join(body, "\n"))
	return p, nil
}

const maxSubjectLength = 76

// subjectRE is the upstream style "area: what the change does".
var subjectRE = regexp.MustCompile(`^[A-Za-z0-9_.\-/]+(, ?[A-Za-z0-9_.\-/]+)*: [a-zA-Z0-9]`)

// forbidden returns the patterns of machine-specific paths, paths' among them.
func forbidden(paths ...string) map[*regexp.Regexp]string {
	patterns := map[*regexp.Regexp]string{
		regexp.MustCompile(`(^|[^A-Za-z0-9_.~-])/(home|Users)/[A-Za-z0-9_.-]+/`): "a home directory",
		regexp.MustCompile(`(^|[\s"'=:(])/root/`):                                "root's home directory",
		regexp.MustCompile(`(^|[\s"'=:(])/work/`):                                "a workspace path",
		regexp.MustCompile(`/go/pkg/mod/|/pkg/mod/cache/`):                       "the Go module cache",
		regexp.MustCompile(`/tmp/bash_jobs|/tmp/go-build[0-9]`):                  "a temporary build path",
	}
	for _, p := range paths {
		if p = filepath.Clean(p); p != "/" && filepath.IsAbs(p) {
			patterns[regexp.MustCompile(regexp.QuoteMeta(p)+`($|[/\s"'),:;])`)] = "this machine's path " + p
		}
	}
	return patterns
}

// check returns every rule p breaks, as "patch: what" or "patch:line: what".
func check(p *patch, patterns map[*regexp.Regexp]string) []string {
	var problems []string
	add := func(line int, format string, args ...any) {
		where := p.Name
		if line > 0 {
			where = fmt.Sprintf("%s:%d", p.Name, line)
		}
		problems = append(problems, where+": "+fmt.Sprintf(format, args...))
	}
	if !subjectRE.MatchString(p.Subject) {
		add(0, "subject %q is not in the upstream style %q", p.Subject, "area: what the change does")
	}
	if len(p.Subject) > maxSubjectLength {
		add(0, "subject is %d characters long, more than %d", len(p.Subject), maxSubjectLength)
	}
	if strings.HasSuffix(p.Subject, ".") {
		add(0, "subject ends with a period")
	}
	if p.Body == "" {
		add(0, "the commit message has no body that says why")
	}
	if len(p.Files) == 0 {
		add(0, "the patch changes no file")
	}
	for _, l := range p.Added {
		for re, why := range patterns {
			if re.MatchString(l.Text) {
				add(l.Number, "%s names %s: %q", cmp.Or(l.File, "the commit message"), why, strings.TrimSpace(l.Text))
			}
		}
	}
	return problems
}

// samplePatch is a patch that breaks no rule once %s is a path.
const samplePatch = `From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: Some Developer <dev@example.invalid>
Date: Sat, 21 Nov 2026 12:00:00 +0000
Subject: [PATCH] kubelet: wake the volume manager on pod changes, a subject
 that wraps

The pod manager tells the volume manager when pods come and go.
---
 pkg/kubelet/a.go | 3 ++-
 1 file changed, 2 insertions(+), 1 deletion(-)

diff --git a/pkg/kubelet/a.go b/pkg/kubelet/a.go
index 1111111111111111111111111111111111111111..2222222222222222222222222222222222222222 100644
--- a/pkg/kubelet/a.go
+++ b/pkg/kubelet/a.go
@@ -1,3 +1,4 @@
 package kubelet
-var a = 1
+var a = 2
+var dir = "%s"
 var c = 3
diff --git a/pkg/kubelet/b_test.go b/pkg/kubelet/b_test.go
new file mode 100644
index 0000000000000000000000000000000000000000..3333333333333333333333333333333333333333
--- /dev/null
+++ b/pkg/kubelet/b_test.go
@@ -0,0 +1 @@
+package kubelet
`

func TestParse(t *testing.T) {
	p, err := parse("0001-x.patch", strings.Replace(samplePatch, "%s", "/var/lib/kubelet", 1))
	if err != nil {
		t.Fatal(err)
	}
	want := &patch{Name: "0001-x.patch", Author: "Some Developer <dev@example.invalid>",
		Subject: "kubelet: wake the volume manager on pod changes, a subject that wraps",
		Body:    "The pod manager tells the volume manager when pods come and go.",
		Files:   []string{"pkg/kubelet/a.go", "pkg/kubelet/b_test.go"},
		Added: []addedLine{{"", 7, "The pod manager tells the volume manager when pods come and go."},
			{"pkg/kubelet/a.go", 19, "var a = 2"}, {"pkg/kubelet/a.go", 20, `var dir = "/var/lib/kubelet"`},
			{"pkg/kubelet/b_test.go", 28, "package kubelet"}},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("parse = %+v\nwant %+v", p, want)
	}
	for _, in := range []string{"", "just text\n", "From: a\n\nbody\n", "From: a\nSubject: b"} {
		if _, err := parse("x", in); err == nil || !strings.Contains(err.Error(), "not a git format-patch file") {
			t.Errorf("parse(%q) error = %v, want not a git format-patch file", in, err)
		}
	}
}

// TestCheck replaces old with new in samplePatch and checks it.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		paths          []string
		want           string // "" means no problem
	}{
		{name: "clean"},
		{name: "home directory in code", old: "%s", new: "/home/alice/src/k8s", want: "a home directory"},
		{name: "root's home", old: "%s", new: "/root/go/bin/kubelet", want: "root's home directory"},
		{name: "module cache", old: "%s", new: "/x/go/pkg/mod/k8s.io/api@v0.37.0", want: "the Go module cache"},
		{name: "workspace path in the commit message", old: "come and go.", new: "come and go, see /work/x/log.",
			want: "0001-x.patch:7: the commit message names a workspace path"},
		{name: "literal checkout path", old: "%s", new: "/srv/ci/checkout/_output/bin",
			paths: []string{"/srv/ci/checkout", "/", "", "relative"}, want: "this machine's path /srv/ci/checkout"},
		{name: "literal path is a prefix of another word", old: "%s", new: "/srv/ci/checkouts",
			paths: []string{"/srv/ci/checkout"}},
		{name: "ordinary absolute paths are fine", old: "%s", new: "/var/lib/kubelet/pods /tmp/x /etc/kubernetes"},
		{name: "subject without an area", old: "[PATCH] kubelet: wake", new: "[PATCH] Wake", want: "upstream style"},
		{name: "subject too long", old: " that wraps", new: strings.Repeat(" very", 20) + " long", want: "characters long"},
		{name: "subject with a period", old: "that wraps\n", new: "that wraps.\n", want: "ends with a period"},
		{name: "no body", old: "The pod manager tells the volume manager when pods come and go.\n", want: "no body"},
		{name: "no file", old: samplePatch[strings.Index(samplePatch, "diff --git"):], want: "changes no file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.Replace(strings.Replace(samplePatch, tc.old, tc.new, 1), "%s", "/var/lib/kubelet", 1)
			p, err := parse("0001-x.patch", in)
			if err != nil {
				t.Fatal(err)
			}
			problems := check(p, forbidden(tc.paths...))
			if tc.want == "" && len(problems) != 0 || tc.want != "" && (len(problems) != 1 || !strings.Contains(problems[0], tc.want)) {
				t.Fatalf("problems = %q, want %s", problems, cmp.Or(tc.want, "none"))
			}
		})
	}
}
