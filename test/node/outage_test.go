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
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"evented-volume-manager/pkg/cluster"
	"evented-volume-manager/pkg/node"
)

// outageWindow is how long kube-apiserver is down, and how long each of the
// request rates around the outage is measured.
const outageWindow = 30 * time.Second

// outageRates are the kubelet's API requests per second around an outage.
// Before and after it they are the requests the API server received from
// the kubelet, from its audit log (apiserver_request_total has no client
// label); during it, when there is no API server to count them, the
// attempts the kubelet's own client counted (rest_client_requests_total).
// "After" is the window that starts at the first request the returned API
// server received from the kubelet, so that its start-up is not in it.
// peakAfter is the most requests the API server received from the kubelet
// within any second after it returned.
type outageRates struct {
	before, during, after float64
	peakAfter             int
}

// TestAPIOutage stops kube-apiserver for 30 s on a cluster node, gate
// off and on, right after CSI pods were created and others deleted. While it
// is gone the kubelet must not spin, and when it returns it must not flood
// it: with the gate on, the kubelet's request rate during and after the
// outage and its busiest second after it stay within what upstream's
// kubelet does (gate off) plus a margin. Every pod created mounts its
// volume, every pod deleted has its directory removed and its volume
// detached, and nothing is left mounted.
func TestAPIOutage(t *testing.T) {
	requireCluster(t)
	rates := map[bool]outageRates{}
	for _, gate := range []bool{false, true} {
		t.Run(fmt.Sprintf("gate=%t", gate), func(t *testing.T) {
			rates[gate] = testAPIOutage(t, gate)
		})
	}
	off, on := rates[false], rates[true]
	if t.Failed() {
		return
	}
	within := func(on, off, slack float64) bool { return on <= max(1.5*off, off+slack) }
	if !within(on.during, off.during, 1) || !within(on.after, off.after, 1) || !within(float64(on.peakAfter), float64(off.peakAfter), 10) {
		t.Errorf("gate on, the kubelet's requests around the outage exceed upstream's: %+v, gate off %+v", on, off)
	}
}

func testAPIOutage(t *testing.T, gate bool) outageRates {
	c := startCluster(t, func(o *node.Options) { o.Gate = gate })
	n := c.Node()
	ctx := t.Context()
	uids := map[string]string{}
	for i := range 4 {
		name := fmt.Sprintf("kept-%d", i)
		_, uids[name] = apiPodRunning(t, c, cluster.APIPod{Name: name, CSI: true})
	}
	attempts := func() float64 { return metrics(t, n).Sum("rest_client_requests_total") }
	beforeFrom := time.Now()
	time.Sleep(outageWindow)

	// Work the API server's return must finish: two pods created and two
	// deleted just before it goes.
	created, deleted := []string{"new-0", "new-1"}, []string{"kept-0", "kept-1"}
	for _, name := range created {
		if _, err := c.CreateAPIPod(ctx, cluster.APIPod{Name: name, CSI: true}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range deleted {
		if err := c.DeleteAPIPod(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	var r outageRates
	a0 := attempts()
	c.StopAPIServer()
	time.Sleep(outageWindow)
	r.during = (attempts() - a0) / outageWindow.Seconds()
	back := time.Now()
	if err := c.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	// kubeletRequests are the requests the API server received from the
	// kubelet, all counted under one key.
	kubeletRequests := func() []cluster.APIRequest {
		reqs, err := c.KubeletAPIRequests()
		if err != nil {
			t.Fatal(err)
		}
		for i := range reqs {
			reqs[i].Key = "all"
		}
		return reqs
	}
	time.Sleep(outageWindow)
	all := kubeletRequests()
	var returned time.Time
	for _, q := range all {
		if !q.At.Before(back) && (returned.IsZero() || q.At.Before(returned)) {
			returned = q.At
		}
	}
	if returned.IsZero() {
		t.Fatalf("kube-apiserver received no request from the kubelet in the %v after it was started again", outageWindow)
	}
	t.Logf("the kubelet's first request reached kube-apiserver %v after it was started again", returned.Sub(back).Round(time.Millisecond))
	if rest := time.Until(returned.Add(outageWindow)); rest > 0 {
		time.Sleep(rest + time.Second)
		all = kubeletRequests()
	}
	before := cluster.CountAPIRequests(all, beforeFrom, beforeFrom.Add(outageWindow))
	after := cluster.CountAPIRequests(all, returned, returned.Add(outageWindow))
	r.before, r.after = float64(before.Count["all"])/before.Seconds, float64(after.Count["all"])/after.Seconds
	r.peakAfter = after.MaxInSecond["all"]
	t.Logf("the kubelet's API requests per second: %.2f received before the outage, %.2f attempted during it, %.2f received in the %v after it; at most %d received in any second after it",
		r.before, r.during, r.after, outageWindow, r.peakAfter)

	for _, name := range created {
		cid, uid := waitAPIPodRunning(t, c, name)
		uids[name] = uid
		if got, err := n.Exec(ctx, cid, "sh", "-c", "echo "+name+" > /csi/file && cat /csi/file"); err != nil || got != name {
			t.Errorf("%s's CSI volume after the outage: %q, %v", name, got, err)
		}
	}
	gone := func(names ...string) {
		for _, name := range names {
			eventually(t, 2*time.Minute, name+"'s directory is removed and its volume detached", func() (bool, error) {
				_, err := os.Stat(n.PodDir(uids[name]))
				return os.IsNotExist(err) && !c.Attacher().Times(cluster.PVName(name)).Detached.IsZero(), nil
			})
		}
	}
	gone(deleted...)
	rest := []string{"kept-2", "kept-3", "new-0", "new-1"}
	for _, name := range rest {
		if err := c.DeleteAPIPod(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	gone(rest...)
	if left := node.MountsUnder(filepath.Join(n.KubeletRoot(), "pods"), filepath.Join(n.KubeletRoot(), "plugins", "kubernetes.io", "csi")); len(left) > 0 {
		t.Errorf("mounts left after every pod was deleted: %v", left)
	}
	return r
}
