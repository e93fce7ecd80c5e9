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
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"evented-volume-manager/pkg/cluster"
	"evented-volume-manager/pkg/node"
)

// mountID is the mount ID of the mount at path, or "".
func mountID(t *testing.T, path string) string {
	t.Helper()
	ids, err := node.MountIDs(path)
	must(t, err)
	return ids[path]
}

// apiPodRunning creates an API pod and waits until its container runs.
func apiPodRunning(t *testing.T, c *cluster.Cluster, p cluster.APIPod) (cid, uid string) {
	t.Helper()
	if _, err := c.CreateAPIPod(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	return waitAPIPodRunning(t, c, p.Name)
}

// waitAPIPodRunning waits until an API pod's container runs.
func waitAPIPodRunning(t *testing.T, c *cluster.Cluster, name string) (cid, uid string) {
	t.Helper()
	cid = containerRunning(t, c.Node(), name)
	uid, err := c.APIPodUID(t.Context(), name)
	must(t, err)
	return cid, uid
}

// waitDetached waits until the kubelet has removed the directory of the
// deleted API pod name and its volume is detached; what prefixes the failure.
func waitDetached(t *testing.T, c *cluster.Cluster, what, name, uid string) {
	t.Helper()
	eventually(t, 2*time.Minute, what+name+"'s directory is removed and its volume detached", func() (bool, error) {
		_, err := os.Stat(c.Node().PodDir(uid))
		return os.IsNotExist(err) && !c.Attacher().Times(cluster.PVName(name)).Detached.IsZero(), nil
	})
}

// volumesAttached are the volumes the node's status lists as attached.
func volumesAttached(t *testing.T, c *cluster.Cluster) []string {
	t.Helper()
	nodeObj, err := c.Client().CoreV1().Nodes().Get(t.Context(), c.Node().Name(), metav1.GetOptions{})
	must(t, err)
	var names []string
	for _, v := range nodeObj.Status.VolumesAttached {
		names = append(names, string(v.Name))
	}
	return names
}

// TestClusterNode runs a cluster node, every gate off and on: an attach-required
// CSI volume is attached, mounted, kept across a kubelet restart, unmounted
// and detached; a configMap update reaches the pod's file; and, gate on, a
// projected service-account token is rotated into the pod's file.
func TestClusterNode(t *testing.T) {
	require(t, "cluster")
	for _, gate := range []bool{false, true} {
		t.Run(fmt.Sprintf("gate=%t", gate), func(t *testing.T) { testClusterNode(t, gate) })
	}
}

// allGates is the series' kubelet with every gate of the stack on, or off: a
// cluster node's checks of the volumes in use need VolumesInUseNodeStatusUpdate.
func allGates(on bool) node.Kubelet {
	return node.SeriesKubelet("", map[string]bool{node.EventedVolumeManager: on, node.RelistOnPodTermination: on, node.VolumesInUseNodeStatusUpdate: on})
}

func testClusterNode(t *testing.T, gate bool) {
	c := startCluster(t, func(o *node.Options) { o.Kubelet = allGates(gate) })
	n := c.Node()
	ctx := t.Context()
	// A pod whose token expires in 10 minutes, the least the API allows: the
	// kubelet renews it at 80 % of its life and writes it at the next resync.
	rotate := gate && os.Getenv("EVM_TOKEN_ROTATION") != "false"
	var tokenCID string
	if rotate {
		tokenCID, _ = apiPodRunning(t, c, cluster.APIPod{Name: "token", TokenExpiration: 600})
	}

	delay := time.Second
	start := time.Now()
	cid, uid := apiPodRunning(t, c, cluster.APIPod{Name: "csi", CSI: true, AttachDelay: &delay})
	times := c.Attacher().Times(cluster.PVName("csi"))
	if times.Attached.IsZero() {
		t.Fatalf("the pod runs, but the attacher never marked its volume attached")
	}
	if got := times.Attached.Sub(times.Created); got < delay {
		t.Errorf("attached %v after the VolumeAttachment appeared, want at least the attach delay %v", got, delay)
	}
	running := time.Since(start)
	t.Logf("created → running %v; VolumeAttachment → attached %v", running, times.Attached.Sub(times.Created))
	// Upstream mounts an attachable volume only once its periodic node status
	// update (10s) has reported it in use; the gate reports it at once. The
	// attach takes the 1s delay and the controller's wait, under a second.
	if gate && running > 6*time.Second {
		t.Errorf("gate on: the CSI pod ran %v after its creation, want the volume in use reported at once (well under 6s)", running)
	}
	if attached := volumesAttached(t, c); !slices.ContainsFunc(attached, func(v string) bool { return strings.Contains(v, "vol-csi") }) {
		t.Errorf("the node's status lists %v as attached, want the CSI volume", attached)
	}
	// What the container sees in each volume; the CSI volume is the driver's
	// directory, bind-mounted.
	for _, c := range []struct{ cmd, want string }{
		{"cat /etc/config/data", "v0"},
		{"cat /etc/secret/data", "s0"},
		{"cat /data/hello", "written-by-container"},
		{"cat /var/run/secrets/kubernetes.io/serviceaccount/namespace", cluster.APIPodNamespace},
		{"echo through-csi > /csi/file && cat /csi/file", "through-csi"},
	} {
		var got string
		eventually(t, 30*time.Second, "the container runs "+c.cmd, func() (bool, error) {
			var err error
			got, err = n.Exec(ctx, cid, "sh", "-c", c.cmd)
			return err == nil && got == c.want, fmt.Errorf("%q, %v", got, err)
		})
	}
	if tok, err := n.Exec(ctx, cid, "cat", "/var/run/secrets/kubernetes.io/serviceaccount/token"); err != nil || strings.Count(tok, ".") != 2 {
		t.Errorf("the service-account token is not a JWT: %q, %v", tok, err)
	}
	mountDir := c.CSIMountDir(uid, "csi")
	idBefore := mountID(t, mountDir)
	if idBefore == "" {
		t.Fatalf("nothing is mounted at the CSI volume's %s", mountDir)
	}
	// The kubelet writes a configMap update at the pod's resync, in 60 to 90 s.
	updated := time.Now()
	must(t, c.UpdateConfigMap(ctx, "csi", "v1"))
	eventually(t, 3*time.Minute, "the configMap update reaches the pod", func() (bool, error) {
		got, err := n.Exec(ctx, cid, "cat", "/etc/config/data")
		return got == "v1", err
	})
	t.Logf("configMap updated → in the pod's file after %v", time.Since(updated).Round(time.Millisecond))
	// A kubelet restart reconstructs the mounted volumes: no unmount and
	// mount again, no container restart.
	n.StopKubelet()
	must(t, n.StartKubelet(ctx))
	restarted := time.Now()
	want := float64(cluster.APIPodVolumes(true))
	if rotate {
		want += float64(cluster.APIPodVolumes(false) + 1)
	}
	waitVolumesMatch(t, n, time.Minute, "the volume manager's actual state matches its desired state after the restart", want)
	t.Logf("kubelet restarted → actual state matches desired after %v", time.Since(restarted).Round(time.Millisecond))
	if got, err := n.RunningContainer(ctx, "csi", "bb"); err != nil || got != cid {
		t.Errorf("the container is %q (%v) after the kubelet restart, want %q still running", got, err, cid)
	}
	if id := mountID(t, mountDir); id != idBefore {
		t.Errorf("the CSI volume's mount ID is %q after the kubelet restart, want %q: it was mounted again", id, idBefore)
	}
	if got, err := n.Exec(ctx, cid, "cat", "/csi/file"); err != nil || got != "through-csi" {
		t.Errorf("the CSI volume after the restart: %q, %v", got, err)
	}
	if rotate {
		// The restarted kubelet wrote a new token, which is no rotation: wait
		// for its renewal after 80 % of its 600 s.
		var before string
		eventually(t, 3*time.Minute, "the restarted kubelet writes the short-lived token", func() (bool, error) {
			var err error
			before, err = n.Exec(ctx, tokenCID, "cat", "/var/run/secrets/tokens/short")
			return err == nil && strings.Count(before, ".") == 2, err
		})
		written := time.Now()
		eventually(t, 12*time.Minute, "the projected token is rotated in the pod", func() (bool, error) {
			got, err := n.Exec(ctx, tokenCID, "cat", "/var/run/secrets/tokens/short")
			return err == nil && got != "" && got != before, err
		})
		if d := time.Since(written); d < 5*time.Minute {
			t.Errorf("the token changed %v after the restart, before its renewal at 80 %% of 600 s", d)
		}
		t.Logf("the 600 s token was rotated in the pod's file %v after it was written", time.Since(written).Round(time.Second))
	}
	// Deleting the pod unmounts the volume, and the attach/detach
	// controller detaches it once the node no longer reports it in use.
	deleted := time.Now()
	must(t, c.DeleteAPIPod(ctx, "csi"))
	waitDetached(t, c, "", "csi", uid)
	if id := mountID(t, mountDir); id != "" {
		t.Errorf("the CSI volume is still mounted at %s", mountDir)
	}
	detached := time.Since(deleted)
	t.Logf("deleted → directory removed and volume detached after %v", detached.Round(time.Millisecond))
	// Upstream detaches only after its next periodic node status update; the
	// gate reports at once.
	if gate && detached > 6*time.Second {
		t.Errorf("gate on: the volume was detached %v after the pod's deletion, want the volumes in use reported at once (well under 6s)", detached)
	}
	staging := filepath.Join(n.KubeletRoot(), "plugins", "kubernetes.io", "csi")
	if left := node.MountsUnder(staging); len(left) > 0 {
		t.Errorf("mounts left under the CSI staging directory: %v", left)
	}
	if m := metrics(t, n); gate && !m.Has("volume_manager_loop_passes_total") {
		t.Errorf("gate on, but the kubelet has no volume_manager_loop_passes_total")
	}
}

// outageWindow is how long kube-apiserver is down, and how long each of the
// request rates around the outage is measured.
const outageWindow = 30 * time.Second

// outageRates are the kubelet's API requests per second around an outage:
// before and after it, those in the API server's audit log
// (apiserver_request_total has no client label), "after" from the first
// request it received once back; during it, the kubelet's own attempts
// (rest_client_requests_total). peakAfter is the busiest second after it.
type outageRates struct {
	before, during, after float64
	peakAfter             int
}

// TestAPIOutage stops kube-apiserver for 30 s on a cluster node, every gate
// off and on, right after CSI pods were created and others deleted. Gate on, the
// kubelet's request rates during and after the outage, and its busiest
// second after it, stay within upstream's (gate off) plus a margin. Every
// pod created mounts its volume, every pod deleted has its directory removed
// and its volume detached, and nothing is left mounted.
func TestAPIOutage(t *testing.T) {
	require(t, "cluster")
	rates := map[bool]outageRates{}
	for _, gate := range []bool{false, true} {
		t.Run(fmt.Sprintf("gate=%t", gate), func(t *testing.T) { rates[gate] = testAPIOutage(t, gate) })
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
	c := startCluster(t, func(o *node.Options) { o.Kubelet = allGates(gate) })
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
		_, err := c.CreateAPIPod(ctx, cluster.APIPod{Name: name, CSI: true})
		must(t, err)
	}
	for _, name := range deleted {
		must(t, c.DeleteAPIPod(ctx, name))
	}
	var r outageRates
	a0 := attempts()
	c.StopAPIServer()
	time.Sleep(outageWindow)
	r.during = (attempts() - a0) / outageWindow.Seconds()
	back := time.Now()
	must(t, c.StartAPIServer(ctx))
	// kubeletRequests are the kubelet's requests, all counted under one key.
	kubeletRequests := func() []cluster.APIRequest {
		reqs, err := c.KubeletAPIRequests()
		must(t, err)
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
			waitDetached(t, c, "", name, uids[name])
		}
	}
	gone(deleted...)
	rest := []string{"kept-2", "kept-3", "new-0", "new-1"}
	for _, name := range rest {
		must(t, c.DeleteAPIPod(ctx, name))
	}
	gone(rest...)
	if left := node.MountsUnder(filepath.Join(n.KubeletRoot(), "pods"), filepath.Join(n.KubeletRoot(), "plugins", "kubernetes.io", "csi")); len(left) > 0 {
		t.Errorf("mounts left after every pod was deleted: %v", left)
	}
	return r
}
