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
	"fmt"
	"slices"
	"strings"
)

// Compare reports every difference between the metrics the series registers
// and those KEP.md's metrics table and kep.yaml's metrics list name: a metric
// one side names and the other does not, a metric named twice, and a row
// whose type or label names differ from the code's. Label names compare as
// sets. No difference gives nil.
func Compare(registered []Metric, table []TableRow, listed []string) []string {
	var p []string
	reg := map[string]Metric{}
	for _, m := range registered {
		if prev, ok := reg[m.Name]; ok {
			p = append(p, fmt.Sprintf("the series defines %s twice (%s and %s)", m.Name, prev.Pos, m.Pos))
			continue
		}
		reg[m.Name] = m
	}

	rows := map[string]TableRow{}
	for _, r := range table {
		if prev, ok := rows[r.Name]; ok {
			p = append(p, fmt.Sprintf("KEP.md:%d: the metrics table lists %s again (first at line %d); keep one row", r.Line, r.Name, prev.Line))
			continue
		}
		rows[r.Name] = r
		m, ok := reg[r.Name]
		if !ok {
			p = append(p, fmt.Sprintf("KEP.md:%d: the metrics table lists %s, which the series does not register; remove the row or fix its name", r.Line, r.Name))
			continue
		}
		if r.Type != m.Type {
			p = append(p, fmt.Sprintf("KEP.md:%d: the metrics table gives %s the type %q; the series registers a %s (%s)", r.Line, r.Name, r.Type, m.Type, m.Pos))
		}
		if !sameSet(r.Labels, m.Labels) {
			p = append(p, fmt.Sprintf("KEP.md:%d: the metrics table gives %s the labels %s; the series registers it with %s (%s)", r.Line, r.Name, labelList(r.Labels), labelList(m.Labels), m.Pos))
		}
	}

	inYAML := map[string]bool{}
	for _, name := range listed {
		if inYAML[name] {
			p = append(p, fmt.Sprintf("kep.yaml's metrics list %s twice; keep one", name))
			continue
		}
		inYAML[name] = true
		if _, ok := reg[name]; !ok {
			p = append(p, fmt.Sprintf("kep.yaml's metrics list %s, which the series does not register; remove it or fix its name", name))
		}
	}

	for _, m := range registered {
		if reg[m.Name].Pos != m.Pos {
			continue // a duplicate, reported above
		}
		if _, ok := rows[m.Name]; !ok {
			p = append(p, fmt.Sprintf("the series registers %s (%s, labels %s, %s), which KEP.md's metrics table does not list; add a row", m.Name, m.Type, labelList(m.Labels), m.Pos))
		}
		if !inYAML[m.Name] {
			p = append(p, fmt.Sprintf("the series registers %s (%s), which kep.yaml's metrics do not list; add it", m.Name, m.Pos))
		}
	}
	return p
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b)) && len(a) == len(b)
}

func labelList(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ",")
}
