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

package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"evented-volume-manager/pkg/csidriver"
)

// The cluster node's control plane listens on loopback only, on ports that
// neither a standalone node nor the node e2e suite (6443) uses.
const (
	apiserverPort  = 16443
	etcdClientPort = 23790
	etcdPeerPort   = 23800
	serviceCIDR    = "10.0.0.0/24"
	serviceIP      = "10.0.0.1"
)

// ClusterBinaries are the programs in Out/bin a cluster node runs besides
// the kubelet and the runtime's: make cluster-deps builds them.
var ClusterBinaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "evm-csi"}

// ClusterControllers are the kube-controller-manager controllers a cluster
// node runs: attach and detach, PV/PVC binding, each namespace's default
// service account and its kube-root-ca.crt config map, which every pod's
// projected service-account token volume mounts.
var ClusterControllers = []string{
	"persistentvolume-attach-detach-controller",
	"persistentvolume-binder-controller",
	"serviceaccount-controller",
	"root-ca-certificate-publisher-controller",
}

// CSIDriverName is the name of the project's CSI driver on a cluster node.
const CSIDriverName = csidriver.DefaultName

// controlPlane is a cluster node's etcd, kube-apiserver,
// kube-controller-manager, CSI driver and attacher.
type controlPlane struct {
	pki        clusterPKI
	adminToken string
	etcd       *process
	apiserver  *process
	kcm        *process
	csi        *process
	client     kubernetes.Interface
	attacher   *Attacher
	cancel     context.CancelFunc
}

// ClusterPreflight reports what a cluster node misses, or that another
// control plane holds its ports: a leftover etcd would answer the new one's
// health check and serve stale objects.
func ClusterPreflight(out string) error {
	for _, b := range ClusterBinaries {
		if _, err := os.Stat(filepath.Join(out, "bin", b)); err != nil {
			return fmt.Errorf("%s is missing: run make cluster-deps first", filepath.Join("_output", "bin", b))
		}
	}
	for _, port := range []int{apiserverPort, etcdClientPort, etcdPeerPort} {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			return fmt.Errorf("127.0.0.1:%d is in use (%v): another cluster node, or something else, runs; stop it first (a killed run is cleaned up by the next run in its work directory)", port, err)
		}
		l.Close()
	}
	return nil
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// writeKubeconfig writes a kubeconfig for a token user of the local API
// server.
func writeKubeconfig(path, caFile, token string) error {
	return os.WriteFile(path, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: %q, certificate-authority: %q}
users:
- name: user
  user: {token: %q}
contexts:
- name: local
  context: {cluster: local, user: user}
current-context: local
`, apiserverURL(), caFile, token)), 0o600)
}

func apiserverURL() string { return "https://127.0.0.1:" + strconv.Itoa(apiserverPort) }

// KubeletKubeconfig is the kubelet's --kubeconfig on a cluster node.
func (n *Node) KubeletKubeconfig() string {
	return filepath.Join(n.work, "cluster", "kubelet.kubeconfig")
}

// Cluster reports whether the node runs with a control plane.
func (n *Node) Cluster() bool { return n.opts.Cluster }

// Client is the API client of a cluster node, as an administrator; nil on a
// standalone node.
func (n *Node) Client() kubernetes.Interface {
	if n.cp == nil {
		return nil
	}
	return n.cp.client
}

// Attacher is the cluster node's attacher (the external attacher's role);
// nil on a standalone node.
func (n *Node) Attacher() *Attacher {
	if n.cp == nil {
		return nil
	}
	return n.cp.attacher
}

// APIServerPID is the API server's process ID, or 0.
func (n *Node) APIServerPID() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cp == nil || !n.cp.apiserver.running() {
		return 0
	}
	return n.cp.apiserver.pid()
}

// startControlPlane starts etcd, kube-apiserver and kube-controller-manager,
// creates the CSIDriver object and starts the CSI driver, and waits until
// the default namespace has its service account and root CA config map.
func (n *Node) startControlPlane(ctx context.Context) error {
	dir := filepath.Join(n.work, "cluster")
	pki, err := writeClusterPKI(filepath.Join(dir, "pki"))
	if err != nil {
		return fmt.Errorf("writing the cluster's certificates: %w", err)
	}
	cp := &controlPlane{pki: pki, adminToken: randomToken()}
	n.cp = cp
	kubeletToken, kcmToken := randomToken(), randomToken()
	tokens := fmt.Sprintf("%s,admin,admin,system:masters\n%s,%s,kubelet,system:nodes\n%s,system:kube-controller-manager,kcm\n",
		cp.adminToken, kubeletToken, n.KubeletUser(), kcmToken)
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "audit-policy.yaml"), []byte(auditPolicy(n.KubeletUser())), 0o644); err != nil {
		return err
	}
	if err := writeKubeconfig(n.KubeletKubeconfig(), pki.path("ca.crt"), kubeletToken); err != nil {
		return err
	}
	kcmKubeconfig := filepath.Join(dir, "kcm.kubeconfig")
	if err := writeKubeconfig(kcmKubeconfig, pki.path("ca.crt"), kcmToken); err != nil {
		return err
	}

	start := func(name string, args ...string) (*process, error) {
		n.mu.Lock()
		stopped := n.stopped
		n.mu.Unlock()
		if stopped {
			return nil, fmt.Errorf("not starting %s: the node is stopping", name)
		}
		n.opts.Logf("starting %s", name)
		p, err := startProcess(name, filepath.Join(n.work, "logs", name+".log"), nil, filepath.Join(n.bin, name), args...)
		if err != nil {
			return nil, err
		}
		n.host.notePID(name, p.pid())
		return p, nil
	}
	if cp.etcd, err = start("etcd",
		"--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdClientPort),
		"--advertise-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdClientPort),
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPeerPort),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPeerPort),
		"--initial-cluster", fmt.Sprintf("default=http://127.0.0.1:%d", etcdPeerPort),
		"--listen-metrics-urls", "", "--log-level", "warn"); err != nil {
		return err
	}
	if err := waitFor(ctx, 30*time.Second, cp.etcd, "etcd's health", func() bool {
		body, err := httpGet(ctx, fmt.Sprintf("http://127.0.0.1:%d/health", etcdClientPort))
		return err == nil && strings.Contains(string(body), `"health":"true"`)
	}); err != nil {
		return err
	}
	if cp.apiserver, err = start("kube-apiserver",
		"--etcd-servers", fmt.Sprintf("http://127.0.0.1:%d", etcdClientPort),
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		// No endpoints for the kubernetes service: the node reaches the API
		// server on loopback, which the endpoint reconciler refuses.
		"--endpoint-reconciler-type", "none",
		"--secure-port", strconv.Itoa(apiserverPort),
		"--tls-cert-file", pki.path("apiserver.crt"), "--tls-private-key-file", pki.path("apiserver.key"),
		"--token-auth-file", filepath.Join(dir, "tokens.csv"),
		"--authorization-mode", "AlwaysAllow",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", pki.path("sa.pub"),
		"--service-account-signing-key-file", pki.path("sa.key"),
		"--service-cluster-ip-range", serviceCIDR,
		"--allow-privileged=true",
		"--cert-dir", filepath.Join(dir, "apiserver"),
		"--audit-policy-file", filepath.Join(dir, "audit-policy.yaml"), "--audit-log-path", n.AuditLog(),
		"--v=1"); err != nil {
		return err
	}
	cfg := &rest.Config{Host: apiserverURL(), BearerToken: cp.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: pki.caPEM}, QPS: 200, Burst: 400}
	if cp.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if err := waitFor(ctx, 90*time.Second, cp.apiserver, "the API server's readyz", func() bool {
		body, err := cp.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok"
	}); err != nil {
		return err
	}
	if cp.kcm, err = start("kube-controller-manager",
		"--kubeconfig", kcmKubeconfig,
		"--controllers", strings.Join(ClusterControllers, ","),
		"--root-ca-file", pki.path("ca.crt"),
		"--leader-elect=false", "--secure-port=0",
		"--use-service-account-credentials=false",
		"--v=2"); err != nil {
		return err
	}
	if _, err := cp.client.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: CSIDriverName},
		Spec: storagev1.CSIDriverSpec{
			AttachRequired:       new(true),
			PodInfoOnMount:       new(false),
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent},
		},
	}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the CSIDriver %s: %w", CSIDriverName, err)
	}
	if err := waitFor(ctx, 60*time.Second, cp.kcm, "the default service account and kube-root-ca.crt", func() bool {
		_, errSA := cp.client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		_, errCM := cp.client.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return errSA == nil && errCM == nil
	}); err != nil {
		return err
	}
	return n.startCSIDriver()
}

// CSIEndpoint is the CSI driver's socket.
func (n *Node) CSIEndpoint() string {
	return filepath.Join(n.KubeletRoot(), "plugins", CSIDriverName, "csi.sock")
}

func (n *Node) startCSIDriver() error {
	n.opts.Logf("starting the CSI driver %s", CSIDriverName)
	p, err := startProcess("evm-csi", filepath.Join(n.work, "logs", "evm-csi.log"), nil, filepath.Join(n.bin, "evm-csi"),
		"-name", CSIDriverName, "-node-id", n.opts.Name,
		"-endpoint", n.CSIEndpoint(),
		"-registration-dir", filepath.Join(n.KubeletRoot(), "plugins_registry"),
		"-state-dir", filepath.Join(n.work, "cluster", "csi-volumes"))
	if err != nil {
		return err
	}
	n.cp.csi = p
	n.host.notePID("evm-csi", p.pid())
	return nil
}

// startAttacher waits until the kubelet has registered the node and the CSI
// driver, then starts the attacher.
func (n *Node) startAttacher(ctx context.Context) error {
	cp := n.cp
	if err := waitFor(ctx, 60*time.Second, n.kubelet, "the node's CSINode to list "+CSIDriverName, func() bool {
		csiNode, err := cp.client.StorageV1().CSINodes().Get(ctx, n.opts.Name, metav1.GetOptions{})
		return err == nil && slices.ContainsFunc(csiNode.Spec.Drivers, func(d storagev1.CSINodeDriver) bool {
			return d.Name == CSIDriverName
		})
	}); err != nil {
		return err
	}
	actx, cancel := context.WithCancel(context.Background())
	cp.cancel = cancel
	a, err := StartAttacher(actx, ctx, cp.client, CSIDriverName, n.CSIEndpoint(), n.opts.AttachDelay, n.opts.Logf)
	if err != nil {
		cancel()
		return err
	}
	cp.attacher = a
	return nil
}

// stopControlPlane stops what startControlPlane started, in reverse.
func (n *Node) stopControlPlane() {
	cp := n.cp
	if cp == nil {
		return
	}
	if cp.cancel != nil {
		cp.cancel()
	}
	if cp.attacher != nil {
		cp.attacher.Wait()
	}
	for _, p := range []*process{cp.csi, cp.kcm, cp.apiserver, cp.etcd} {
		if p.running() {
			n.opts.Logf("stopping %s (pid %d)", p.name, p.pid())
			p.stop(syscall.SIGTERM, 10*time.Second)
		}
	}
}

// ControlPlaneCPU is the CPU time the API server and the controller
// manager have used.
func (n *Node) ControlPlaneCPU() (apiserver, controllerManager time.Duration, err error) {
	n.mu.Lock()
	cp := n.cp
	n.mu.Unlock()
	if cp == nil || !cp.apiserver.running() || !cp.kcm.running() {
		return 0, 0, errors.New("the control plane is not running")
	}
	if apiserver, err = ProcessCPU(cp.apiserver.pid()); err != nil {
		return 0, 0, err
	}
	controllerManager, err = ProcessCPU(cp.kcm.pid())
	return apiserver, controllerManager, err
}
