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

package cluster

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"
)

func TestAuditCounts(t *testing.T) {
	const kubelet = "system:node:evm-node"
	event := func(id, user, verb, objectRef, at string) string {
		return fmt.Sprintf(`{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":%q,"stage":"ResponseComplete","requestURI":"/x","verb":%q,"user":{"username":%q,"groups":["system:nodes"]},%s"requestReceivedTimestamp":"2026-11-25T10:00:%sZ","stageTimestamp":"2026-11-25T10:00:%sZ"}`,
			id, verb, user, objectRef, at, at)
	}
	node := `"objectRef":{"resource":"nodes","name":"evm-node","apiVersion":"v1"},`
	status := `"objectRef":{"resource":"nodes","subresource":"status","name":"evm-node","apiVersion":"v1"},`
	log := strings.Join([]string{
		event("1", kubelet, "get", node, "00.500000"), // before the window
		event("2", kubelet, "get", node, "01.000000"),
		event("3", kubelet, "patch", status, "01.100000"),
		event("4", kubelet, "patch", status, "01.900000"),
		event("5", kubelet, "patch", status, "02.050000"), // 3 within 1 s
		event("6", kubelet, "patch", status, "03.000000"), // 0.95 s after the last
		event("6", kubelet, "patch", status, "03.000000"), // its second stage
		event("7", "admin", "patch", status, "03.200000"), // not the kubelet
		event("8", kubelet, "get", "", "04.000000"),       // /healthz, say
		event("9", kubelet, "get", node, "10.000000"),     // at the window's end
	}, "\n")
	reqs, err := ParseAuditLog(strings.NewReader(log), kubelet)
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) != 8 {
		t.Errorf("%d requests, want 8 (one per audit ID, the kubelet's only): %v", len(reqs), reqs)
	}
	from := time.Date(2026, 11, 25, 10, 0, 1, 0, time.UTC)
	c := CountAPIRequests(reqs, from, from.Add(9*time.Second))
	if c.Seconds != 9 {
		t.Errorf("seconds %v, want 9", c.Seconds)
	}
	if want := map[string]int{"get nodes": 1, "patch nodes/status": 4, "get (non-resource)": 1}; !maps.Equal(c.Count, want) {
		t.Errorf("counts %v, want %v", c.Count, want)
	}
	if want := map[string]int{"get nodes": 1, "patch nodes/status": 3, "get (non-resource)": 1}; !maps.Equal(c.MaxInSecond, want) {
		t.Errorf("most in 1 s %v, want %v", c.MaxInSecond, want)
	}
	if _, err := ParseAuditLog(strings.NewReader("not json\n"), kubelet); err == nil {
		t.Errorf("a line that is not JSON parsed")
	}
}
