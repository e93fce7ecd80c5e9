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

// Command junit-compare writes the Markdown table of node e2e runs' JUnit
// reports for make node-conformance: each run given as name=DIR (DIR holding
// report/junit_*.xml), the first the reference. It exits 1 if a spec that
// passed in the first run did not pass in another.
//
//	junit-compare stock=DIR on=DIR
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"evented-volume-manager/pkg/junit"
)

func main() {
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: junit-compare NAME=DIR NAME=DIR...")
	}
	flag.Parse()
	ok, err := compare(os.Stdout, flag.Args())
	if err == nil && !ok {
		err = errors.New("a spec that passed in the first run did not pass in another (listed above)")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "junit-compare:", err)
		os.Exit(1)
	}
}

// compare writes the Markdown table of runs (name=DIR each, the first the
// reference) and lists every spec whose outcome differs from the
// reference's. It reports whether every spec that passed in the reference
// passed in every other run.
func compare(w io.Writer, runs []string) (bool, error) {
	var names []string
	var reports []map[string]junit.Spec
	for _, r := range runs {
		name, dir, ok := strings.Cut(r, "=")
		if !ok {
			return false, fmt.Errorf("want name=DIR, got %q", r)
		}
		report, err := junit.Read(dir)
		if err != nil {
			return false, err
		}
		names, reports = append(names, name), append(reports, report)
	}
	fmt.Fprintln(w, "| configuration | specs selected | passed | failed | skipped at run time |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for i, report := range reports {
		count := map[string]int{}
		for _, s := range report {
			count[s.Status]++
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d |\n", names[i], len(report), count["passed"],
			len(report)-count["passed"]-count["skipped"], count["skipped"])
	}

	ok := true
	ref := reports[0]
	for i, report := range reports[1:] {
		var lines []string
		for name, s := range ref {
			got, ran := report[name]
			if ran && got.Status == s.Status {
				continue
			}
			if s.Status == "passed" {
				ok = false
			}
			lines = append(lines, fmt.Sprintf("- %s: %s on %s, %s on %s", name, s.Status, names[0], cmp.Or(got.Status, "not run"), names[i+1]))
		}
		for name, s := range report {
			if _, ran := ref[name]; !ran {
				lines = append(lines, fmt.Sprintf("- %s: not run on %s, %s on %s", name, names[0], s.Status, names[i+1]))
			}
		}
		slices.Sort(lines)
		fmt.Fprintf(w, "\nSpecs whose outcome on %s differs from %s's: %d\n\n", names[i+1], names[0], len(lines))
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}

	failed, skipped := map[string][]string{}, map[string][]string{}
	for i, report := range reports {
		for name, s := range report {
			switch s.Status {
			case "passed":
			case "skipped":
				skipped[name+": "+s.Skipped] = append(skipped[name+": "+s.Skipped], names[i])
			default:
				failed[name] = append(failed[name], names[i])
			}
		}
	}
	for _, l := range []struct {
		title string
		set   map[string][]string
	}{{"Specs that failed, and where", failed}, {"Specs skipped at run time, why, and where", skipped}} {
		fmt.Fprintf(w, "\n%s: %d\n\n", l.title, len(l.set))
		for _, name := range slices.Sorted(maps.Keys(l.set)) {
			fmt.Fprintf(w, "- %s (%s)\n", name, strings.Join(l.set[name], ", "))
		}
	}
	return ok, nil
}
