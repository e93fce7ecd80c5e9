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

package node_test

import (
	"path/filepath"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"evented-volume-manager/pkg/kep"
)

// checkKEPMetrics checks that the series' metrics in families, a scrape of
// the kubelet's /metrics with the gate on, are kep.yaml's metrics and
// KEP.md's metrics table, with the table's types and labels.
func checkKEPMetrics(t *testing.T, families map[string]*dto.MetricFamily) {
	t.Helper()
	sets, table, err := kep.Documented(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	exposed, unseen, err := kep.Exposed(families, table)
	if err != nil {
		t.Error(err)
	}
	if len(unseen) > 0 {
		t.Logf("not checked: /metrics shows a metric with labels once it has a value, and %v have none yet", unseen)
	}
	sets["the kubelet's /metrics"] = exposed
	if err := kep.Compare(sets); err != nil {
		t.Error(err)
	}
}
