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
	"evented-volume-manager/pkg/node"
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

// Binaries are the programs in Out/bin a cluster node runs besides
// the kubelet and the runtime's: make cluster-deps builds them.
var Binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "evm-csi"}

// Controllers are the kube-controller-manager controllers a cluster
// node runs: attach and detach, PV/PVC binding, each namespace's default
// service account and its kube-root-ca.crt config map, which every pod's
// projected service-account token volume mounts.
var Controllers = []string{
	"persistentvolume-attach-detach-controller",
	"persistentvolume-binder-controller",
	"serviceaccount-controller",
	"root-ca-certificate-publisher-controller",
}

// CSIDriverName is the name of the project's CSI driver on a cluster node.
const CSIDriverName = csidriver.DefaultName

// Cluster is a node run as clusters run it: etcd, kube-apiserver and
// kube-controller-manager (attach/detach, PV binding, service accounts and
// root CA config maps) from make cluster-deps, the node's kubelet
// registered with pods from the API server, the project's CSI driver
// (attachRequired) registered through the kubelet's plugin watcher, and an
// Attacher in the external attacher's role.
type Cluster struct {
	node       *node.Node
	pki        clusterPKI
	adminToken string
	etcd       *node.Process
	apiserver  *node.Process
	kcm        *node.Process
	csi        *node.Process
	client     kubernetes.Interface
	attacher   *Attacher
	cancel     context.CancelFunc
}

// Start makes n, a node whose runtime runs and whose kubelet does not, a
// cluster's node: it starts the control plane and the CSI driver, then n's
// kubelet registered with the API server, then the Attacher. n's Stop
// stops them all.
func Start(ctx context.Context, n *node.Node) (*Cluster, error) {
	if err := Preflight(filepath.Dir(n.Bin())); err != nil {
		return nil, err
	}
	// The kubelet's plugin watcher finds the CSI driver by a unix socket
	// under its root directory, and a socket's path has at most 107 bytes.
	if sock := filepath.Join(n.KubeletRoot(), "plugins_registry", CSIDriverName+"-reg.sock"); len(sock) > 107 {
		return nil, fmt.Errorf("the node's work directory %s is too long for the CSI driver's registration socket (%d bytes, at most 107): use a shorter one", n.Work(), len(sock))
	}
	c := &Cluster{node: n}
	n.OnStop(c.stop)
	if err := c.startControlPlane(ctx); err != nil {
		return nil, err
	}
	if err := n.StartKubelet(ctx); err != nil {
		return nil, err
	}
	if err := c.startAttacher(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Node is the cluster's node.
func (c *Cluster) Node() *node.Node { return c.node }

// Preflight reports what a cluster node misses, or that another
// control plane holds its ports: a leftover etcd would answer the new one's
// health check and serve stale objects.
func Preflight(out string) error {
	for _, b := range Binaries {
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

// Client is the API client, as an administrator.
func (c *Cluster) Client() kubernetes.Interface { return c.client }

// Attacher is the attacher (the external attacher's role).
func (c *Cluster) Attacher() *Attacher { return c.attacher }

// StopAPIServer stops kube-apiserver, as an outage would: the kubelet,
// the controllers and the attacher lose it until StartAPIServer.
func (c *Cluster) StopAPIServer() {
	c.node.Logf("stopping kube-apiserver (pid %d)", c.apiserver.PID())
	c.apiserver.Stop(syscall.SIGTERM, 10*time.Second)
}

// StartAPIServer starts kube-apiserver and waits until it is ready.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	dir := filepath.Join(c.node.Work(), "cluster")
	var err error
	if c.apiserver, err = c.node.StartDaemon("kube-apiserver",
		"--etcd-servers", fmt.Sprintf("http://127.0.0.1:%d", etcdClientPort),
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		// No endpoints for the kubernetes service: the node reaches the API
		// server on loopback, which the endpoint reconciler refuses.
		"--endpoint-reconciler-type", "none",
		"--secure-port", strconv.Itoa(apiserverPort),
		"--tls-cert-file", c.pki.path("apiserver.crt"), "--tls-private-key-file", c.pki.path("apiserver.key"),
		"--token-auth-file", filepath.Join(dir, "tokens.csv"),
		"--authorization-mode", "AlwaysAllow",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", c.pki.path("sa.pub"),
		"--service-account-signing-key-file", c.pki.path("sa.key"),
		"--service-cluster-ip-range", serviceCIDR,
		"--allow-privileged=true",
		"--cert-dir", filepath.Join(dir, "apiserver"),
		"--audit-policy-file", filepath.Join(dir, "audit-policy.yaml"), "--audit-log-path", c.AuditLog(),
		"--v=1"); err != nil {
		return err
	}
	return node.WaitFor(ctx, 90*time.Second, c.apiserver, "the API server's readyz", func() bool {
		body, err := c.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok"
	})
}

// startControlPlane starts etcd, kube-apiserver and kube-controller-manager,
// creates the CSIDriver object and starts the CSI driver, and waits until
// the default namespace has its service account and root CA config map.
func (c *Cluster) startControlPlane(ctx context.Context) error {
	dir := filepath.Join(c.node.Work(), "cluster")
	pki, err := writeClusterPKI(filepath.Join(dir, "pki"))
	if err != nil {
		return fmt.Errorf("writing the cluster's certificates: %w", err)
	}
	c.pki, c.adminToken = pki, randomToken()
	kubeletToken, kcmToken := randomToken(), randomToken()
	tokens := fmt.Sprintf("%s,admin,admin,system:masters\n%s,%s,kubelet,system:nodes\n%s,system:kube-controller-manager,kcm\n",
		c.adminToken, kubeletToken, c.KubeletUser(), kcmToken)
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(tokens), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "audit-policy.yaml"), []byte(auditPolicy(c.KubeletUser())), 0o644); err != nil {
		return err
	}
	if err := writeKubeconfig(c.node.KubeletKubeconfig(), pki.path("ca.crt"), kubeletToken); err != nil {
		return err
	}
	kcmKubeconfig := filepath.Join(dir, "kcm.kubeconfig")
	if err := writeKubeconfig(kcmKubeconfig, pki.path("ca.crt"), kcmToken); err != nil {
		return err
	}

	start := c.node.StartDaemon
	if c.etcd, err = start("etcd",
		"--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdClientPort),
		"--advertise-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdClientPort),
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPeerPort),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPeerPort),
		"--initial-cluster", fmt.Sprintf("default=http://127.0.0.1:%d", etcdPeerPort),
		"--listen-metrics-urls", "", "--log-level", "warn"); err != nil {
		return err
	}
	if err := node.WaitFor(ctx, 30*time.Second, c.etcd, "etcd's health", func() bool {
		body, err := node.HTTPGet(ctx, fmt.Sprintf("http://127.0.0.1:%d/health", etcdClientPort))
		return err == nil && strings.Contains(string(body), `"health":"true"`)
	}); err != nil {
		return err
	}
	cfg := &rest.Config{Host: apiserverURL(), BearerToken: c.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: pki.caPEM}, QPS: 200, Burst: 400}
	if c.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if err := c.StartAPIServer(ctx); err != nil {
		return err
	}
	if c.kcm, err = start("kube-controller-manager",
		"--kubeconfig", kcmKubeconfig,
		"--controllers", strings.Join(Controllers, ","),
		"--root-ca-file", pki.path("ca.crt"),
		"--leader-elect=false", "--secure-port=0",
		"--use-service-account-credentials=false",
		"--v=2"); err != nil {
		return err
	}
	if _, err := c.client.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: CSIDriverName},
		Spec: storagev1.CSIDriverSpec{
			AttachRequired:       new(true),
			PodInfoOnMount:       new(false),
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent},
		},
	}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the CSIDriver %s: %w", CSIDriverName, err)
	}
	if err := node.WaitFor(ctx, 60*time.Second, c.kcm, "the default service account and kube-root-ca.crt", func() bool {
		_, errSA := c.client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		_, errCM := c.client.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return errSA == nil && errCM == nil
	}); err != nil {
		return err
	}
	return c.startCSIDriver()
}

// CSIEndpoint is the CSI driver's socket.
func (c *Cluster) CSIEndpoint() string {
	return filepath.Join(c.node.KubeletRoot(), "plugins", CSIDriverName, "csi.sock")
}

func (c *Cluster) startCSIDriver() error {
	c.node.Logf("starting the CSI driver %s", CSIDriverName)
	p, err := c.node.StartDaemon("evm-csi",
		"-name", CSIDriverName, "-node-id", c.node.Name(),
		"-endpoint", c.CSIEndpoint(),
		"-registration-dir", filepath.Join(c.node.KubeletRoot(), "plugins_registry"),
		"-state-dir", filepath.Join(c.node.Work(), "cluster", "csi-volumes"))
	if err != nil {
		return err
	}
	c.csi = p
	return nil
}

// startAttacher waits until the kubelet has registered the node and the CSI
// driver, then starts the attacher.
func (c *Cluster) startAttacher(ctx context.Context) error {
	if err := node.WaitFor(ctx, 60*time.Second, c.apiserver, "the node's CSINode to list "+CSIDriverName, func() bool {
		csiNode, err := c.client.StorageV1().CSINodes().Get(ctx, c.node.Name(), metav1.GetOptions{})
		return err == nil && slices.ContainsFunc(csiNode.Spec.Drivers, func(d storagev1.CSINodeDriver) bool {
			return d.Name == CSIDriverName
		})
	}); err != nil {
		return err
	}
	actx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	a, err := StartAttacher(actx, ctx, c.client, CSIDriverName, c.CSIEndpoint(), 0, c.node.Logf)
	if err != nil {
		cancel()
		return err
	}
	c.attacher = a
	return nil
}

// stop stops what Start started, in reverse, after the node's runtime.
func (c *Cluster) stop() {
	if c.cancel != nil {
		c.cancel()
	}
	if c.attacher != nil {
		c.attacher.Wait()
	}
	for _, p := range []*node.Process{c.csi, c.kcm, c.apiserver, c.etcd} {
		if p.Running() {
			c.node.Logf("stopping %s (pid %d)", p.Name(), p.PID())
			p.Stop(syscall.SIGTERM, 10*time.Second)
		}
	}
}

// ControlPlaneCPU is the CPU time the API server and the controller
// manager have used.
func (c *Cluster) ControlPlaneCPU() (apiserver, controllerManager time.Duration, err error) {
	if !c.apiserver.Running() || !c.kcm.Running() {
		return 0, 0, errors.New("the control plane is not running")
	}
	if apiserver, err = node.ProcessCPU(c.apiserver.PID()); err != nil {
		return 0, 0, err
	}
	controllerManager, err = node.ProcessCPU(c.kcm.PID())
	return apiserver, controllerManager, err
}
