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

package kep

import (
	"errors"
	"fmt"
	"os/exec"
	"path"
	"slices"
	"strings"
)

// SeriesMetrics returns the metrics that the packages with a Go file the
// series (base..head in the git tree at dir) adds or changes define and
// register at rev, sorted.
func SeriesMetrics(dir, base, head, rev string) (defined, registered []string, err error) {
	git := func(args ...string) (string, error) {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
		var exit *exec.ExitError
		if err != nil && !(args[0] == "grep" && errors.As(err, &exit) && exit.ExitCode() == 1) {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return string(out), nil
	}
	changed, err := git("diff", "--name-only", "--diff-filter=ACMR", base+".."+head, "--", "*.go")
	if err != nil {
		return nil, nil, err
	}
	pathspecs := []string{":(exclude,glob)**/*_test.go"}
	for _, f := range strings.Fields(changed) {
		pathspecs = append(pathspecs, ":(glob)"+path.Dir(f)+"/*.go")
	}
	files, err := git(append([]string{"grep", "-l", "-F", `"k8s.io/component-base/metrics`, rev, "--"}, pathspecs...)...)
	if err != nil {
		return nil, nil, err
	}
	pkgs := map[string]map[string][]byte{}
	for _, f := range strings.Fields(files) {
		f = strings.TrimPrefix(f, rev+":")
		content, err := git("show", rev+":"+f)
		if err != nil {
			return nil, nil, err
		}
		if pkgs[path.Dir(f)] == nil {
			pkgs[path.Dir(f)] = map[string][]byte{}
		}
		pkgs[path.Dir(f)][f] = []byte(content)
	}
	for _, pkg := range pkgs {
		d, r, err := Defined(pkg)
		if err != nil {
			return nil, nil, fmt.Errorf("at %s: %w", rev, err)
		}
		defined, registered = append(defined, d...), append(registered, r...)
	}
	slices.Sort(defined)
	slices.Sort(registered)
	return defined, registered, nil
}
