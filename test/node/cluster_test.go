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

// requireCluster skips the test unless EVM_NODE=cluster (make
// node-test-cluster) asks for it, and fails it if a cluster node cannot run
// here although it was asked for.
func requireCluster(t *testing.T) {
	t.Helper()
	if os.Getenv("EVM_NODE") != "cluster" {
		t.Skip("cluster-node test: make node-test-cluster runs it (EVM_NODE=cluster)")
	}
	rt, _, err := node.RuntimeFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Preflight(outDir(t), rt); err != nil {
		t.Fatalf("EVM_NODE=cluster, but %v", err)
	}
	if err := cluster.Preflight(outDir(t)); err != nil {
		t.Fatalf("EVM_NODE=cluster, but %v", err)
	}
}

// mountID is the mount ID (/proc/self/mountinfo's first field) of the mount
// at path, or "" if nothing is mounted there.
func mountID(t *testing.T, path string) string {
	t.Helper()
	ids, err := node.MountIDs(path)
	if err != nil {
		t.Fatal(err)
	}
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
	n := c.Node()
	eventually(t, 2*time.Minute, name+"'s container runs", func() (bool, error) {
		var err error
		cid, err = n.RunningContainer(t.Context(), name, "bb")
		return cid != "", err
	})
	uid, err := c.APIPodUID(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return cid, uid
}

// volumesAttached are the volumes the node's status lists as attached.
func volumesAttached(t *testing.T, c *cluster.Cluster) []string {
	t.Helper()
	n := c.Node()
	nodeObj, err := c.Client().CoreV1().Nodes().Get(t.Context(), n.Name(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range nodeObj.Status.VolumesAttached {
		names = append(names, string(v.Name))
	}
	return names
}

// TestClusterNode runs, with the gate off and on, a node as clusters run it:
// an attach-required CSI volume is attached by the attach/detach controller
// and the attacher, mounted, kept across a kubelet restart (reconstruction),
// unmounted and detached; a configMap update reaches the pod's file; and,
// with the gate on, a projected service-account token is rotated into the
// pod's file.
func TestClusterNode(t *testing.T) {
	requireCluster(t)
	for _, gate := range []bool{false, true} {
		t.Run(fmt.Sprintf("gate=%t", gate), func(t *testing.T) {
			testClusterNode(t, gate)
		})
	}
}

func testClusterNode(t *testing.T, gate bool) {
	c := startCluster(t, func(o *node.Options) {
		o.Gate = gate
	})
	n := c.Node()
	ctx := t.Context()

	// A pod whose token expires in 10 minutes, the least the API allows:
	// the kubelet renews it at 80 % of its life and writes it at the pod's
	// next resync.
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
	// Upstream mounts an attachable volume only after its periodic node
	// status update (10s) has reported it in use; the gate reports it at
	// once. The attach itself takes the 1s delay and the attach/detach
	// controller's own wait, under a second here.
	if gate && running > 6*time.Second {
		t.Errorf("gate on: the CSI pod ran %v after its creation, want the volume in use reported at once (well under 6s)", running)
	}
	if attached := volumesAttached(t, c); !slices.ContainsFunc(attached, func(v string) bool { return strings.Contains(v, "vol-csi") }) {
		t.Errorf("the node's status lists %v as attached, want the CSI volume", attached)
	}

	// What the container sees: each volume, and the CSI volume is the
	// driver's directory, bind-mounted.
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

	// A configMap update reaches the pod's file: the kubelet writes it at
	// the pod's periodic resync, within 60 to 90 s.
	updated := time.Now()
	if err := c.UpdateConfigMap(ctx, "csi", "v1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "the configMap update reaches the pod", func() (bool, error) {
		got, err := n.Exec(ctx, cid, "cat", "/etc/config/data")
		return got == "v1", err
	})
	t.Logf("configMap updated → in the pod's file after %v", time.Since(updated).Round(time.Millisecond))

	// A kubelet restart reconstructs the mounted volumes: no unmount and
	// mount again, no container restart.
	n.StopKubelet()
	if err := n.StartKubelet(ctx); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	eventually(t, time.Minute, "the volume manager's actual state matches its desired state after the restart", func() (bool, error) {
		m := metrics(t, n)
		asw := m.Sum("volume_manager_total_volumes", "state", "actual_state_of_world")
		dsw := m.Sum("volume_manager_total_volumes", "state", "desired_state_of_world")
		want := float64(cluster.APIPodVolumes(true))
		if rotate {
			want += float64(cluster.APIPodVolumes(false) + 1)
		}
		return asw == dsw && asw == want, fmt.Errorf("actual %v, desired %v, want %v", asw, dsw, want)
	})
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
		// The restarted kubelet requested a new token and wrote it; that is
		// no rotation. Take the token it wrote, and wait for the renewal
		// after 80 % of its 600 s, written at the pod's next resync.
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
	if err := c.DeleteAPIPod(ctx, "csi"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the pod's directory is removed", func() (bool, error) {
		_, err := os.Stat(n.PodDir(uid))
		return os.IsNotExist(err), nil
	})
	if id := mountID(t, mountDir); id != "" {
		t.Errorf("the CSI volume is still mounted at %s", mountDir)
	}
	eventually(t, 2*time.Minute, "the VolumeAttachment is detached", func() (bool, error) {
		return !c.Attacher().Times(cluster.PVName("csi")).Detached.IsZero(), nil
	})
	detached := time.Since(deleted)
	t.Logf("deleted → directory removed and volume detached after %v", detached.Round(time.Millisecond))
	// Upstream detaches only after its next periodic node status update
	// drops the volume from the volumes in use; the gate reports at once.
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
