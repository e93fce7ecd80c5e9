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
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// TableRow is one row of KEP.md's metrics table.
type TableRow struct {
	// Name is the metric's full name, the first `code` span of the name
	// column.
	Name string
	// Type is the type column's text, lower case.
	Type string
	// Labels are the `code` spans of the labels column outside
	// parentheses (inside them are the labels' values); nil for "none".
	Labels []string
	// Line is the row's line number in KEP.md.
	Line int
}

var (
	metricsHeading = regexp.MustCompile(`^#{2,6}\s+Metrics\s*$`)
	anyHeading     = regexp.MustCompile(`^#{1,6}\s`)
	codeSpan       = regexp.MustCompile("`([^`]+)`")
)

// MetricsTable reads the metrics table of a KEP: the first Markdown table
// under a heading "Metrics" whose header has the columns name, type and
// labels.
func MetricsTable(md []byte) ([]TableRow, error) {
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	var (
		line       int
		inSection  bool
		inTable    bool
		inFence    bool
		skipping   bool
		cols       map[string]int
		rows       []TableRow
		sawHeading bool
	)
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(text), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if anyHeading.MatchString(text) {
			if inTable {
				break
			}
			inSection = metricsHeading.MatchString(text)
			sawHeading = sawHeading || inSection
			continue
		}
		if !inSection {
			continue
		}
		trimmed := strings.TrimSpace(text)
		if skipping {
			if strings.HasPrefix(trimmed, "|") {
				continue
			}
			skipping = false
		}
		if !strings.HasPrefix(trimmed, "|") {
			if inTable {
				break
			}
			continue
		}
		cells := splitRow(trimmed)
		if !inTable {
			cols = map[string]int{}
			for i, c := range cells {
				cols[strings.ToLower(c)] = i
			}
			_, hasName := cols["name"]
			_, hasType := cols["type"]
			_, hasLabels := cols["labels"]
			if !hasName || !hasType || !hasLabels {
				// Another table in the section: skip it, keep looking.
				skipping = true
				continue
			}
			inTable = true
			continue
		}
		if isSeparator(cells) {
			continue
		}
		cell := func(col string) string {
			if i := cols[col]; i < len(cells) {
				return cells[i]
			}
			return ""
		}
		name := codeSpan.FindStringSubmatch(cell("name"))
		if name == nil {
			return nil, fmt.Errorf("KEP.md:%d: the metrics table's name column has no `name`", line)
		}
		rows = append(rows, TableRow{
			Name:   name[1],
			Type:   strings.ToLower(strings.Trim(cell("type"), "` ")),
			Labels: labelNames(cell("labels")),
			Line:   line,
		})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !sawHeading {
		return nil, fmt.Errorf("KEP.md has no heading \"Metrics\"")
	}
	if !inTable {
		return nil, fmt.Errorf("KEP.md's Metrics section has no table with the columns name, type and labels")
	}
	return rows, nil
}

// splitRow splits a Markdown table row into its trimmed cells; "\|" is a
// literal bar.
func splitRow(row string) []string {
	row = strings.ReplaceAll(row, `\|`, "\x00")
	row = strings.TrimPrefix(row, "|")
	row = strings.TrimSuffix(row, "|")
	cells := strings.Split(row, "|")
	for i, c := range cells {
		cells[i] = strings.TrimSpace(strings.ReplaceAll(c, "\x00", "|"))
	}
	return cells
}

func isSeparator(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, ":- ") != "" {
			return false
		}
	}
	return true
}

// labelNames reads a labels cell: the `code` spans outside parentheses.
func labelNames(cell string) []string {
	var outside strings.Builder
	depth := 0
	for _, r := range cell {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0:
			outside.WriteRune(r)
		}
	}
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(outside.String(), -1) {
		out = append(out, m[1])
	}
	return out
}
