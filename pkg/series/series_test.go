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
	"errors"
	"strings"
	"testing"
)

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
	p, err := Parse("0001-x.patch", strings.NewReader(strings.Replace(samplePatch, "%s", "/var/lib/kubelet", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if want := "kubelet: wake the volume manager on pod changes, a subject that wraps"; p.Subject != want {
		t.Errorf("Subject = %q, want %q", p.Subject, want)
	}
	if want := "Some Developer <dev@example.invalid>"; p.Author != want {
		t.Errorf("Author = %q, want %q", p.Author, want)
	}
	if want := "The pod manager tells the volume manager when pods come and go."; p.Body != want {
		t.Errorf("Body = %q, want %q", p.Body, want)
	}
	if got, want := strings.Join(p.Files, ","), "pkg/kubelet/a.go,pkg/kubelet/b_test.go"; got != want {
		t.Errorf("Files = %q, want %q", got, want)
	}
	var added []string
	for _, l := range p.Added {
		if l.File != "" {
			added = append(added, l.File+"|"+l.Text)
		}
	}
	want := []string{
		"pkg/kubelet/a.go|var a = 2",
		`pkg/kubelet/a.go|var dir = "/var/lib/kubelet"`,
		"pkg/kubelet/b_test.go|package kubelet",
	}
	if strings.Join(added, "\n") != strings.Join(want, "\n") {
		t.Errorf("added lines:\n%s\nwant:\n%s", strings.Join(added, "\n"), strings.Join(want, "\n"))
	}
	if len(DefaultRules().ForbiddenPatterns) == 0 {
		t.Fatal("no default rules")
	}
	if problems := Check(p, DefaultRules()); len(problems) != 0 {
		t.Errorf("unexpected problems: %v", problems)
	}
}

func TestParseRejectsNonPatch(t *testing.T) {
	for _, in := range []string{"", "just text\n", "From: a\n\nbody\n"} {
		if _, err := Parse("x", strings.NewReader(in)); !errors.Is(err, ErrNotAPatch) {
			t.Errorf("Parse(%q) error = %v, want ErrNotAPatch", in, err)
		}
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(string) string
		rules   Rules
		wantMsg string // "" means no problem
	}{
		{name: "clean", mutate: func(s string) string { return s }},
		{
			name:    "home directory in code",
			mutate:  func(s string) string { return strings.Replace(s, "%s", "/home/alice/src/k8s", 1) },
			wantMsg: "a home directory",
		},
		{
			name:    "root's home",
			mutate:  func(s string) string { return strings.Replace(s, "%s", "/root/go/bin/kubelet", 1) },
			wantMsg: "root's home directory",
		},
		{
			name:    "module cache",
			mutate:  func(s string) string { return strings.Replace(s, "%s", "/x/go/pkg/mod/k8s.io/api@v0.37.0", 1) },
			wantMsg: "the Go module cache",
		},
		{
			name:    "workspace path in the commit message",
			mutate:  func(s string) string { return strings.Replace(s, "come and go.", "come and go, see /work/x/log.", 1) },
			wantMsg: "the commit message names a workspace path",
		},
		{
			name:    "literal checkout path",
			mutate:  func(s string) string { return strings.Replace(s, "%s", "/srv/ci/checkout/_output/bin", 1) },
			rules:   DefaultRules().WithLiteralPaths("/srv/ci/checkout", "/", ""),
			wantMsg: "this machine's path /srv/ci/checkout",
		},
		{
			name:   "literal path is a prefix of another word",
			mutate: func(s string) string { return strings.Replace(s, "%s", "/srv/ci/checkouts", 1) },
			rules:  DefaultRules().WithLiteralPaths("/srv/ci/checkout"),
		},
		{
			name: "ordinary absolute paths are fine",
			mutate: func(s string) string {
				return strings.Replace(s, "%s", "/var/lib/kubelet/pods /tmp/x /etc/kubernetes", 1)
			},
		},
		{
			name:    "subject without an area",
			mutate:  func(s string) string { return strings.Replace(s, "[PATCH] kubelet: wake", "[PATCH] Wake", 1) },
			wantMsg: "upstream style",
		},
		{
			name: "subject too long",
			mutate: func(s string) string {
				return strings.Replace(s, " that wraps", strings.Repeat(" very", 20)+" long", 1)
			},
			wantMsg: "characters long",
		},
		{
			name:    "subject with a period",
			mutate:  func(s string) string { return strings.Replace(s, "that wraps\n", "that wraps.\n", 1) },
			wantMsg: "ends with a period",
		},
		{
			name: "no body",
			mutate: func(s string) string {
				return strings.Replace(s, "The pod manager tells the volume manager when pods come and go.\n", "", 1)
			},
			wantMsg: "no body",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.mutate(samplePatch)
			in = strings.Replace(in, "%s", "/var/lib/kubelet", 1)
			p, err := Parse("0001-x.patch", strings.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			rules := tc.rules
			if rules.ForbiddenPatterns == nil {
				rules = DefaultRules()
			}
			problems := Check(p, rules)
			if tc.wantMsg == "" {
				if len(problems) != 0 {
					t.Fatalf("unexpected problems: %v", problems)
				}
				return
			}
			if len(problems) != 1 || !strings.Contains(problems[0].String(), tc.wantMsg) {
				t.Fatalf("problems = %v, want one containing %q", problems, tc.wantMsg)
			}
		})
	}
}
