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
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
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
	"k8s.io/client-go/util/cert"

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
// kube-controller-manager (the Controllers) from make cluster-deps, the
// node's kubelet registered with pods from the API server, the project's
// CSI driver (attachRequired) registered through the kubelet's plugin
// watcher, and an Attacher in the external attacher's role.
type Cluster struct {
	node      *node.Node
	pki       clusterPKI
	etcd      *node.Process
	apiserver *node.Process
	kcm       *node.Process
	csi       *node.Process
	client    kubernetes.Interface
	attacher  *Attacher
	cancel    context.CancelFunc
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

// Client is the API client, as an administrator.
func (c *Cluster) Client() kubernetes.Interface { return c.client }

// Attacher is the attacher (the external attacher's role).
func (c *Cluster) Attacher() *Attacher { return c.attacher }

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

func localURL(scheme string, port int) string { return fmt.Sprintf("%s://127.0.0.1:%d", scheme, port) }

// kubeconfig is a kubeconfig for a token user of the local API server.
func kubeconfig(caFile, token string) string {
	return fmt.Sprintf(`apiVersion: v1
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
`, localURL("https", apiserverPort), caFile, token)
}

// configure writes into dir the control plane's certificates, its users'
// tokens, the audit policy and the kubeconfigs of the kubelet and the
// controller manager, and makes the administrator's client.
func (c *Cluster) configure(dir string) error {
	pki, err := writeClusterPKI(filepath.Join(dir, "pki"))
	if err != nil {
		return fmt.Errorf("writing the cluster's certificates: %w", err)
	}
	c.pki = pki
	token := func() string {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		return hex.EncodeToString(b)
	}
	admin, kubelet, kcm := token(), token(), token()
	for path, data := range map[string]string{
		filepath.Join(dir, "tokens.csv"): fmt.Sprintf("%s,admin,admin,system:masters\n%s,%s,kubelet,system:nodes\n%s,system:kube-controller-manager,kcm\n",
			admin, kubelet, c.KubeletUser(), kcm),
		filepath.Join(dir, "audit-policy.yaml"): auditPolicy(c.KubeletUser()),
		c.node.KubeletKubeconfig():              kubeconfig(pki.path("ca.crt"), kubelet),
		filepath.Join(dir, "kcm.kubeconfig"):    kubeconfig(pki.path("ca.crt"), kcm),
	} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			return err
		}
	}
	c.client, err = kubernetes.NewForConfig(&rest.Config{Host: localURL("https", apiserverPort), BearerToken: admin,
		TLSClientConfig: rest.TLSClientConfig{CAData: pki.caPEM}, QPS: 200, Burst: 400})
	return err
}

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
		"--etcd-servers", localURL("http", etcdClientPort),
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
	if err := c.configure(dir); err != nil {
		return err
	}
	var err error
	if c.etcd, err = c.node.StartDaemon("etcd",
		"--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", localURL("http", etcdClientPort),
		"--advertise-client-urls", localURL("http", etcdClientPort),
		"--listen-peer-urls", localURL("http", etcdPeerPort),
		"--initial-advertise-peer-urls", localURL("http", etcdPeerPort),
		"--initial-cluster", "default="+localURL("http", etcdPeerPort),
		"--listen-metrics-urls", "", "--log-level", "warn"); err != nil {
		return err
	}
	if err := node.WaitFor(ctx, 30*time.Second, c.etcd, "etcd's health", func() bool {
		body, err := node.HTTPGet(ctx, localURL("http", etcdClientPort)+"/health")
		return err == nil && strings.Contains(string(body), `"health":"true"`)
	}); err != nil {
		return err
	}
	if err := c.StartAPIServer(ctx); err != nil {
		return err
	}
	if c.kcm, err = c.node.StartDaemon("kube-controller-manager",
		"--kubeconfig", filepath.Join(dir, "kcm.kubeconfig"),
		"--controllers", strings.Join(Controllers, ","),
		"--root-ca-file", c.pki.path("ca.crt"),
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
	}, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fmt.Errorf("creating the CSIDriver %s: %w", CSIDriverName, err)
	}
	if err := node.WaitFor(ctx, 60*time.Second, c.kcm, "the default service account and kube-root-ca.crt", func() bool {
		_, errSA := c.client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		_, errCM := c.client.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return errSA == nil && errCM == nil
	}); err != nil {
		return err
	}
	c.node.Logf("starting the CSI driver %s", CSIDriverName)
	c.csi, err = c.node.StartDaemon("evm-csi",
		"-name", CSIDriverName, "-node-id", c.node.Name(),
		"-endpoint", c.csiEndpoint(),
		"-registration-dir", filepath.Join(c.node.KubeletRoot(), "plugins_registry"),
		"-state-dir", filepath.Join(dir, "csi-volumes"))
	return err
}

// ignoreExists is err, or nil if err is that the object to create exists.
func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// csiEndpoint is the CSI driver's socket.
func (c *Cluster) csiEndpoint() string {
	return filepath.Join(c.node.KubeletRoot(), "plugins", CSIDriverName, "csi.sock")
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
	var err error
	if c.attacher, err = StartAttacher(actx, ctx, c.client, CSIDriverName, c.csiEndpoint(), c.node.Logf); err != nil {
		cancel()
	}
	return err
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

// clusterPKI is what a local control plane needs: a CA, the API server's
// serving certificate signed by it, and the service-account signing key.
type clusterPKI struct {
	dir   string
	caPEM []byte
}

func (p clusterPKI) path(name string) string { return filepath.Join(p.dir, name) }

// writeClusterPKI writes ca.crt, apiserver.crt and .key, and sa.key and
// sa.pub into dir. The service-account key is the API server's: the API
// server takes a private key for either.
func writeClusterPKI(dir string) (clusterPKI, error) {
	p := clusterPKI{dir: dir}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return p, err
	}
	crt, key, err := cert.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP(serviceIP)},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"})
	if err != nil {
		return p, err
	}
	_, p.caPEM = pem.Decode(crt) // the serving certificate, then its CA's
	for name, data := range map[string][]byte{"ca.crt": p.caPEM, "apiserver.crt": crt, "apiserver.key": key, "sa.key": key, "sa.pub": key} {
		if err := os.WriteFile(p.path(name), data, 0o600); err != nil {
			return p, err
		}
	}
	return p, nil
}

// KubeletUser is the kubelet's user name on a cluster node.
func (c *Cluster) KubeletUser() string { return "system:node:" + c.node.Name() }

// AuditLog is the API server's audit log on a cluster node.
func (c *Cluster) AuditLog() string { return filepath.Join(c.node.Work(), "logs", "audit.log") }

// auditPolicy logs user's (the kubelet's) requests at level Metadata, one
// event a request (a watch has a second, at its end, with the same auditID),
// and nothing else: apiserver_request_total has no client label.
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
