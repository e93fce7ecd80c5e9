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
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/util/keyutil"

	"evented-volume-manager/pkg/csidriver"
)

func TestWriteClusterPKI(t *testing.T) {
	p, err := writeClusterPKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(p.path("apiserver.crt"), p.path("apiserver.key"))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := os.ReadFile(p.path("ca.crt"))
	roots := x509.NewCertPool()
	if err != nil || !bytes.Equal(ca, p.caPEM) || !roots.AppendCertsFromPEM(ca) {
		t.Fatalf("ca.crt holds %q (%v), want the CA's certificate %q", ca, err, p.caPEM)
	}
	for _, name := range []string{"127.0.0.1", "localhost", "kubernetes.default.svc", serviceIP} {
		if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: name}); err != nil {
			t.Errorf("the serving certificate does not verify for %s: %v", name, err)
		}
	}
	// What the API server reads from --service-account-key-file.
	if keys, err := keyutil.PublicKeysFromFile(p.path("sa.pub")); err != nil || len(keys) != 1 {
		t.Errorf("sa.pub holds %d keys (%v), want 1", len(keys), err)
	}
	for _, f := range []string{"apiserver.key", "sa.key", "sa.pub"} {
		if info, err := os.Stat(p.path(f)); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want mode 0600", f, info, err)
		}
	}
}

// TestAttacher runs the attacher against a fake API server and the CSI driver.
func TestAttacher(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	dir, err := os.MkdirTemp("", "att")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	endpoint := filepath.Join(dir, "csi.sock")
	served := make(chan error, 1)
	go func() {
		served <- csidriver.Serve(ctx, csidriver.Options{Name: CSIDriverName, NodeID: "n1", Endpoint: endpoint,
			RegistrationDir: filepath.Join(dir, "reg"), StateDir: filepath.Join(dir, "state"), Logf: t.Logf})
	}()
	waitUntil(t, 10*time.Second, "the CSI driver's socket", func() bool { _, err := os.Stat(endpoint); return err == nil })
	client := fake.NewClientset()
	a, err := StartAttacher(ctx, ctx, client, CSIDriverName, endpoint, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		name, delay string
		want        time.Duration
	}{{"no delay", "", 0}, {"delay from the PV", "300ms", 300 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			pv := "pv-" + string(rune('a'+i))
			ann := map[string]string{}
			if tc.delay != "" {
				ann[AttachDelayAnnotation] = tc.delay
			}
			if _, err := client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
				ObjectMeta: metav1.ObjectMeta{Name: pv, Annotations: ann},
				Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
					CSI: &corev1.CSIPersistentVolumeSource{Driver: CSIDriverName, VolumeHandle: "vol-" + pv}}},
			}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			va := &storagev1.VolumeAttachment{
				ObjectMeta: metav1.ObjectMeta{Name: "va-" + pv},
				Spec: storagev1.VolumeAttachmentSpec{Attacher: CSIDriverName, NodeName: "n1",
					Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}},
			}
			created := time.Now()
			if _, err := client.StorageV1().VolumeAttachments().Create(ctx, va, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			var got *storagev1.VolumeAttachment
			waitUntil(t, 10*time.Second, "the VolumeAttachment is attached", func() bool {
				got, err = client.StorageV1().VolumeAttachments().Get(ctx, va.Name, metav1.GetOptions{})
				return err == nil && got.Status.Attached
			})
			if d := a.Times(pv).Attached.Sub(created); d < tc.want {
				t.Errorf("attached after %v, want at least %v", d, tc.want)
			}
			if got.Status.AttachmentMetadata["node"] != "n1" {
				t.Errorf("attachment metadata %v, want the driver's publish context", got.Status.AttachmentMetadata)
			}
			if !slices.Contains(got.Finalizers, a.finalizer) {
				t.Errorf("finalizers %v, want %s", got.Finalizers, a.finalizer)
			}
			// The attach/detach controller lists it in the node's status.
			nodeObj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{
				VolumesAttached: []corev1.AttachedVolume{{Name: corev1.UniqueVolumeName("kubernetes.io/csi/" + CSIDriverName + "^vol-" + pv)}}}}
			if _, err := client.CoreV1().Nodes().Create(ctx, nodeObj, metav1.CreateOptions{}); err != nil {
				if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, nodeObj, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			waitUntil(t, 10*time.Second, "the node's listing is recorded", func() bool { return !a.Times(pv).Listed.IsZero() })
			// The fake API server keeps an object with finalizers on
			// deletion, as the real one does, only with a deletion
			// timestamp the client sets.
			now := metav1.Now()
			got.DeletionTimestamp = &now
			if _, err := client.StorageV1().VolumeAttachments().Update(ctx, got, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, 10*time.Second, "the finalizer is removed", func() bool {
				got, err = client.StorageV1().VolumeAttachments().Get(ctx, va.Name, metav1.GetOptions{})
				return err == nil && !slices.Contains(got.Finalizers, a.finalizer)
			})
			if err := client.StorageV1().VolumeAttachments().Delete(ctx, va.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, 10*time.Second, "the detach is recorded", func() bool { return !a.Times(pv).Detached.IsZero() })
		})
	}
	cancel()
	a.Wait()
	if err := <-served; err != nil {
		t.Errorf("the CSI driver: %v", err)
	}
}

// waitUntil polls cond every 10ms: the attacher and driver use the real clock.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		t.Fatalf("%s: not within %v", what, timeout)
	}
}

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
