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
	"time"

	"sigs.k8s.io/yaml"
)

// Metadata is a KEP's kep.yaml, with the fields of kubernetes/enhancements'
// template (keps/NNNN-kep-template/kep.yaml).
type Metadata struct {
	Title             string        `json:"title"`
	KEPNumber         string        `json:"kep-number"`
	Authors           []string      `json:"authors"`
	OwningSIG         string        `json:"owning-sig"`
	ParticipatingSIGs []string      `json:"participating-sigs,omitempty"`
	Status            string        `json:"status"`
	CreationDate      string        `json:"creation-date"`
	LastUpdated       string        `json:"last-updated,omitempty"`
	Reviewers         []string      `json:"reviewers"`
	Approvers         []string      `json:"approvers"`
	PRRApprovers      []string      `json:"prr-approvers,omitempty"`
	SeeAlso           []string      `json:"see-also,omitempty"`
	Replaces          []string      `json:"replaces,omitempty"`
	Stage             string        `json:"stage"`
	LatestMilestone   string        `json:"latest-milestone"`
	Milestone         Milestones    `json:"milestone"`
	FeatureGates      []FeatureGate `json:"feature-gates"`
	DisableSupported  *bool         `json:"disable-supported"`
	Metrics           []string      `json:"metrics"`
}

// Milestones are the releases at which a KEP reaches each stage.
type Milestones struct {
	Alpha  string `json:"alpha,omitempty"`
	Beta   string `json:"beta,omitempty"`
	Stable string `json:"stable,omitempty"`
}

// FeatureGate is one feature gate of a KEP and the components that read it.
type FeatureGate struct {
	Name       string   `json:"name"`
	Components []string `json:"components"`
}

// ParseMetadata parses kep.yaml strictly: a field the template does not
// have is an error.
func ParseMetadata(data []byte) (*Metadata, error) {
	var m Metadata
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		return nil, fmt.Errorf("kep.yaml does not parse: %w", err)
	}
	return &m, nil
}

var (
	statuses = []string{"provisional", "implementable", "implemented", "deferred", "rejected", "withdrawn", "replaced"}
	stages   = []string{"alpha", "beta", "stable"}
)

// Check reports what kep.yaml lacks: the required fields, a known status and
// stage with its milestone, dates as yyyy-mm-dd, and the feature gate gate
// read by component.
func (m *Metadata) Check(gate, component string) []string {
	var p []string
	for _, f := range []struct{ name, value string }{
		{"title", m.Title}, {"kep-number", m.KEPNumber}, {"owning-sig", m.OwningSIG},
		{"creation-date", m.CreationDate}, {"latest-milestone", m.LatestMilestone},
	} {
		if f.value == "" {
			p = append(p, fmt.Sprintf("kep.yaml has no %s", f.name))
		}
	}
	for _, f := range []struct {
		name  string
		value []string
	}{{"authors", m.Authors}, {"reviewers", m.Reviewers}, {"approvers", m.Approvers}} {
		if len(f.value) == 0 {
			p = append(p, fmt.Sprintf("kep.yaml has no %s (TBD until they are named)", f.name))
		}
	}
	if !slices.Contains(statuses, m.Status) {
		p = append(p, fmt.Sprintf("kep.yaml's status %q is not one of %v", m.Status, statuses))
	}
	if !slices.Contains(stages, m.Stage) {
		p = append(p, fmt.Sprintf("kep.yaml's stage %q is not one of %v", m.Stage, stages))
	} else if ms := map[string]string{"alpha": m.Milestone.Alpha, "beta": m.Milestone.Beta, "stable": m.Milestone.Stable}[m.Stage]; ms == "" {
		p = append(p, fmt.Sprintf("kep.yaml has no milestone for its stage %s", m.Stage))
	}
	for _, d := range []struct{ name, value string }{{"creation-date", m.CreationDate}, {"last-updated", m.LastUpdated}} {
		if d.value == "" {
			continue
		}
		if _, err := time.Parse(time.DateOnly, d.value); err != nil {
			p = append(p, fmt.Sprintf("kep.yaml's %s %q is not a date (yyyy-mm-dd)", d.name, d.value))
		}
	}
	if m.DisableSupported == nil {
		p = append(p, "kep.yaml does not say whether disabling is supported (disable-supported)")
	}
	found := false
	for _, g := range m.FeatureGates {
		if g.Name != gate {
			continue
		}
		found = true
		if !slices.Contains(g.Components, component) {
			p = append(p, fmt.Sprintf("kep.yaml's feature gate %s does not list the component %s", gate, component))
		}
	}
	if !found {
		p = append(p, fmt.Sprintf("kep.yaml's feature-gates do not name %s", gate))
	}
	return p
}
