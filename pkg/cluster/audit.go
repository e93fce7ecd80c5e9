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
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// A cluster node's kube-apiserver writes an audit log of the kubelet's
// requests (user system:node:<name>) at level Metadata, and of nothing else:
// apiserver_request_total has no client label.

// KubeletUser is the kubelet's user name on a cluster node.
func (c *Cluster) KubeletUser() string { return "system:node:" + c.node.Name() }

// AuditLog is the API server's audit log on a cluster node.
func (c *Cluster) AuditLog() string { return filepath.Join(c.node.Work(), "logs", "audit.log") }

// auditPolicy logs user's requests at level Metadata, one event a request
// (a watch has a second, at its end, with the same auditID).
func auditPolicy(user string) string {
	return fmt.Sprintf(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: [%q]
- level: None
`, user)
}

// APIRequest is one request in an audit log: Key is "verb resource" or
// "verb resource/subresource" ("patch nodes/status"), or "verb
// (non-resource)".
type APIRequest struct {
	Key string
	At  time.Time
}

// auditEvent is the part of an audit.k8s.io/v1 Event the counts read.
type auditEvent struct {
	AuditID string `json:"auditID"`
	Verb    string `json:"verb"`
	User    struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
}

// ParseAuditLog reads an audit log in JSON lines and returns user's
// requests, each once, at the time the API server received it.
func ParseAuditLog(r io.Reader, user string) ([]APIRequest, error) {
	var reqs []APIRequest
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("audit log: %w", err)
		}
		if e.User.Username != user || seen[e.AuditID] {
			continue
		}
		seen[e.AuditID] = true
		key := e.Verb + " (non-resource)"
		if o := e.ObjectRef; o != nil {
			key = e.Verb + " " + o.Resource
			if o.Subresource != "" {
				key += "/" + o.Subresource
			}
		}
		reqs = append(reqs, APIRequest{Key: key, At: e.RequestReceivedTimestamp})
	}
	return reqs, sc.Err()
}

// KubeletAPIRequests are the kubelet's requests in the node's audit log.
func (c *Cluster) KubeletAPIRequests() ([]APIRequest, error) {
	f, err := os.Open(c.AuditLog())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseAuditLog(f, c.KubeletUser())
}

// APIRequests count requests by key over a phase of Seconds.
type APIRequests struct {
	Seconds float64        `json:"seconds"`
	Count   map[string]int `json:"count"`
	// MaxInSecond is the most requests of a key received within any 1 s.
	MaxInSecond map[string]int `json:"maxInSecond"`
}

// CountAPIRequests counts the requests received from from until to.
func CountAPIRequests(reqs []APIRequest, from, to time.Time) APIRequests {
	c := APIRequests{Seconds: to.Sub(from).Seconds(), Count: map[string]int{}, MaxInSecond: map[string]int{}}
	times := map[string][]time.Time{}
	for _, r := range reqs {
		if !r.At.Before(from) && r.At.Before(to) {
			c.Count[r.Key]++
			times[r.Key] = append(times[r.Key], r.At)
		}
	}
	for key, ts := range times {
		slices.SortFunc(ts, time.Time.Compare)
		first := 0
		for last, t := range ts {
			for t.Sub(ts[first]) >= time.Second {
				first++
			}
			c.MaxInSecond[key] = max(c.MaxInSecond[key], last-first+1)
		}
	}
	return c
}
