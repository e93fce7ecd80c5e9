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

// Package junit reads the specs' outcomes from a node e2e run's JUnit report.
package junit

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Spec is one spec's outcome in a run's JUnit report.
type Spec struct {
	// Status is the spec's status: passed, failed, skipped, timedout, ...
	Status string
	// Skipped is why a spec that ran was skipped (e2eskipper's message).
	Skipped string
}

// Read reads the outcomes, by spec name, of the specs a run in dir
// selected, from its JUnit report. Ginkgo's report also lists the specs
// that focus and skip left out, as "skipped" with no reason: those are left
// out here.
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
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testsuite>testcase"`
		}
		if err := xml.Unmarshal(data, &suites); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, c := range suites.Cases {
			if !strings.HasPrefix(c.Name, "[It] ") {
				continue // the suite's setup and teardown nodes
			}
			s := Spec{Status: c.Status}
			if c.Status == "skipped" {
				reason := ""
				if c.Skipped != nil {
					reason = strings.TrimSpace(strings.TrimPrefix(c.Skipped.Message, "skipped"))
				}
				if reason == "" {
					continue // left out by focus or skip
				}
				s.Skipped = strings.TrimSpace(strings.TrimPrefix(reason, "-"))
			}
			specs[strings.TrimPrefix(c.Name, "[It] ")] = s
		}
	}
	return specs, nil
}
