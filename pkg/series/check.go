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
	"path/filepath"
	"regexp"
	"strings"
)

// Problem is one broken rule.
type Problem struct {
	// Patch is the patch's file name.
	Patch string
	// Line is the 1-based line in the patch file, or 0 for the whole patch.
	Line int
	// Message says what is wrong.
	Message string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.Patch, p.Line, p.Message)
	}
	return fmt.Sprintf("%s: %s", p.Patch, p.Message)
}

// Rules are the checks Check applies.
type Rules struct {
	// MaxSubjectLength bounds a subject's length.
	MaxSubjectLength int
	// ForbiddenPatterns must not match any added line or the commit message.
	// The map's values say why.
	ForbiddenPatterns map[*regexp.Regexp]string
}

// subjectRE is the upstream style "area: what the change does", where area
// names one or more components ("kubelet", "volumemanager/reconciler").
var subjectRE = regexp.MustCompile(`^[A-Za-z0-9_.\-/]+(, ?[A-Za-z0-9_.\-/]+)*: [a-zA-Z0-9]`)

// DefaultRules are the rules every patch of the series keeps: paths that
// only exist on a developer's machine must not leak into the product.
func DefaultRules() Rules {
	return Rules{
		MaxSubjectLength: 76,
		ForbiddenPatterns: map[*regexp.Regexp]string{
			regexp.MustCompile(`(^|[^A-Za-z0-9_.~-])/(home|Users)/[A-Za-z0-9_.-]+/`): "a home directory",
			regexp.MustCompile(`(^|[\s"'=:(])/root/`):                                "root's home directory",
			regexp.MustCompile(`(^|[\s"'=:(])/work/`):                                "a workspace path",
			regexp.MustCompile(`/go/pkg/mod/|/pkg/mod/cache/`):                       "the Go module cache",
			regexp.MustCompile(`/tmp/bash_jobs|/tmp/go-build[0-9]`):                  "a temporary build path",
		},
	}
}

// WithLiteralPaths returns a copy of r that also forbids each of paths (for
// example the checkout's own directory, $HOME or GOMODCACHE on the machine
// running the check). Empty paths and "/" are ignored.
func (r Rules) WithLiteralPaths(paths ...string) Rules {
	out := Rules{MaxSubjectLength: r.MaxSubjectLength, ForbiddenPatterns: map[*regexp.Regexp]string{}}
	for re, why := range r.ForbiddenPatterns {
		out.ForbiddenPatterns[re] = why
	}
	for _, p := range paths {
		p = filepath.Clean(p)
		if p == "" || p == "." || p == "/" || !filepath.IsAbs(p) {
			continue
		}
		re := regexp.MustCompile(regexp.QuoteMeta(p) + `($|[/\s"'),:;])`)
		out.ForbiddenPatterns[re] = "this machine's path " + p
	}
	return out
}

// Check returns every rule p breaks.
func Check(p *Patch, r Rules) []Problem {
	var problems []Problem
	add := func(line int, format string, args ...any) {
		problems = append(problems, Problem{Patch: p.Name, Line: line, Message: fmt.Sprintf(format, args...)})
	}
	if !subjectRE.MatchString(p.Subject) {
		add(0, "subject %q is not in the upstream style %q", p.Subject, "area: what the change does")
	}
	if r.MaxSubjectLength > 0 && len(p.Subject) > r.MaxSubjectLength {
		add(0, "subject is %d characters long, more than %d", len(p.Subject), r.MaxSubjectLength)
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
		for re, why := range r.ForbiddenPatterns {
			if re.MatchString(l.Text) {
				where := "the commit message"
				if l.File != "" {
					where = l.File
				}
				add(l.Number, "%s names %s: %q", where, why, strings.TrimSpace(l.Text))
			}
		}
	}
	return problems
}

// CheckAll checks every patch.
func CheckAll(patches []*Patch, r Rules) []Problem {
	var problems []Problem
	for _, p := range patches {
		problems = append(problems, Check(p, r)...)
	}
	return problems
}
