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

// Package junit reads and compares node e2e runs' JUnit reports.
package junit

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Spec is one spec's outcome, and why it was skipped if it was at run time.
type Spec struct {
	Status, Skipped string
}

// Read reads the outcomes of the specs a run in dir selected, by name.
func Read(dir string) (map[string]Spec, error) {
	files, err := filepath.Glob(filepath.Join(dir, "report", "junit_*.xml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no JUnit report under %s (%v)", filepath.Join(dir, "report"), err)
	}
	specs := map[string]Spec{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var suites struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Status  string `xml:"status,attr"`
				Skipped struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testsuite>testcase"`
		}
		if err := xml.Unmarshal(data, &suites); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, c := range suites.Cases {
			name, ok := strings.CutPrefix(c.Name, "[It] ")
			if !ok {
				continue // the suite's setup and teardown nodes
			}
			s := Spec{Status: c.Status}
			if c.Status == "skipped" {
				reason := strings.TrimSpace(strings.TrimPrefix(c.Skipped.Message, "skipped"))
				if reason == "" {
					continue // left out by focus or skip
				}
				s.Skipped = strings.TrimSpace(strings.TrimPrefix(reason, "-"))
			}
			specs[name] = s
		}
	}
	return specs, nil
}

// Compare writes the Markdown table of runs (name=DIR each, the first the
// reference), and reports whether the reference's passes all passed.
func Compare(w io.Writer, runs []string) (bool, error) {
	var names []string
	var reports []map[string]Spec
	for _, run := range runs {
		name, dir, ok := strings.Cut(run, "=")
		if !ok {
			return false, fmt.Errorf("want name=DIR, got %q", run)
		}
		report, err := Read(dir)
		if err != nil {
			return false, err
		}
		names, reports = append(names, name), append(reports, report)
	}
	fmt.Fprint(w, "| configuration | specs selected | passed | failed | skipped at run time |\n|---|---|---|---|---|\n")
	failed, skipped := map[string][]string{}, map[string][]string{}
	for i, report := range reports {
		count := map[string]int{}
		for name, s := range report {
			count[s.Status]++
			switch s.Status {
			case "passed":
			case "skipped":
				skipped[name+": "+s.Skipped] = append(skipped[name+": "+s.Skipped], names[i])
			default:
				failed[name] = append(failed[name], names[i])
			}
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d |\n", names[i], len(report), count["passed"],
			len(report)-count["passed"]-count["skipped"], count["skipped"])
	}
	ok := true
	for i := 1; i < len(reports); i++ {
		var lines []string
		for name, s := range reports[0] {
			if got, ran := reports[i][name]; !ran || got.Status != s.Status {
				ok = ok && s.Status != "passed"
				lines = append(lines, fmt.Sprintf("- %s: %s on %s, %s on %s", name, s.Status, names[0], cmp.Or(got.Status, "not run"), names[i]))
			}
		}
		for name, s := range reports[i] {
			if _, ran := reports[0][name]; !ran {
				lines = append(lines, fmt.Sprintf("- %s: not run on %s, %s on %s", name, names[0], s.Status, names[i]))
			}
		}
		fmt.Fprintf(w, "\nSpecs whose outcome on %s differs from %s's: %d\n\n", names[i], names[0], len(lines))
		slices.Sort(lines)
		for _, l := range lines {
			fmt.Fprintln(w, l)
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
