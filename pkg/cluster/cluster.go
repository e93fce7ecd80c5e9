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
	"sync"
	"syscall"
	"time"

	csi "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/workqueue"

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

// Binaries are the programs in Out/bin that make cluster-deps builds.
var Binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "evm-csi"}

// Controllers are the kube-controller-manager controllers a cluster node runs.
var Controllers = []string{
	"persistentvolume-attach-detach-controller",
	"persistentvolume-binder-controller",
	"serviceaccount-controller",
	"root-ca-certificate-publisher-controller",
}

// CSIDriverName is the name of the project's CSI driver on a cluster node.
const CSIDriverName = csidriver.DefaultName

// Cluster is a node with a control plane, the project's CSI driver and an Attacher.
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

// Start makes n, whose kubelet does not run yet, a cluster's node.
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

// Preflight reports what a cluster node misses, or a leftover on its ports.
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

// configure writes the control plane's files into dir and makes the client.
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

// StopAPIServer stops kube-apiserver, as an outage would.
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

// startControlPlane starts the control plane and the CSI driver.
func (c *Cluster) startControlPlane(ctx context.Context) error {
	dir := filepath.Join(c.node.Work(), "cluster")
	err := c.configure(dir)
	if err != nil {
		return err
	}
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

func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func (c *Cluster) csiEndpoint() string {
	return filepath.Join(c.node.KubeletRoot(), "plugins", CSIDriverName, "csi.sock")
}

// startAttacher starts the attacher once the kubelet registered the driver.
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

// ControlPlaneCPU is the CPU time of the API server and controller manager.
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

// clusterPKI holds a CA, the API server's certificate and the SA key.
type clusterPKI struct {
	dir   string
	caPEM []byte
}

func (p clusterPKI) path(name string) string { return filepath.Join(p.dir, name) }

// writeClusterPKI writes the files clusterPKI names into dir. The
// service-account key is the serving one: the API server takes it for both.
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

// APIRequest is one request: Key is "verb resource[/subresource]" or "verb (non-resource)".
type APIRequest struct {
	Key string
	At  time.Time
}

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

// ParseAuditLog returns user's requests in an audit log, each once.
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

// APIPodNamespace is the namespace of the pods of a cluster node.
const APIPodNamespace = "default"

// APIPod describes a pod created through the API server: busybox bound to the
// node, with an emptyDir, a configMap, a secret and a token volume.
type APIPod struct {
	Name string
	// CSI adds a PVC bound to a PV of the project's CSI driver; AttachDelay,
	// if set, is the attacher's delay for it.
	CSI         bool
	AttachDelay *time.Duration
	// TokenExpiration, if set, adds a service-account token volume that
	// expires after that many seconds; the API allows 600 or more.
	TokenExpiration int64
}

// APIPodVolumes is how many volumes an APIPod has, CSI excluded or not.
func APIPodVolumes(csi bool) int {
	if csi {
		return 5
	}
	return 4
}

// PVName is the name of a pod's PersistentVolume; its claim is pvc-<pod>,
// its config map cm-<pod> and its secret sec-<pod>.
func PVName(pod string) string { return "pv-" + pod }

// CreateAPIPod creates a pod and its objects, keeping those that exist.
func (c *Cluster) CreateAPIPod(ctx context.Context, p APIPod) (time.Time, error) {
	client, ns := c.client, APIPodNamespace
	cm, secret, pvc := "cm-"+p.Name, "sec-"+p.Name, "pvc-"+p.Name
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: cm},
		Data:       map[string]string{"data": "v0"},
	}, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return time.Time{}, fmt.Errorf("config map of %s: %w", p.Name, err)
	}
	if _, err := client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: secret},
		StringData: map[string]string{"data": "s0"},
	}, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return time.Time{}, fmt.Errorf("secret of %s: %w", p.Name, err)
	}
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	add := func(name, path string, src corev1.VolumeSource) {
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: src})
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: path})
	}
	add("scratch", "/data", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}})
	add("config", "/etc/config", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: cm}}})
	add("secret", "/etc/secret", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}})
	if p.TokenExpiration > 0 {
		add("short-token", "/var/run/secrets/tokens", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Path: "short", ExpirationSeconds: new(p.TokenExpiration)}}}}})
	}
	if p.CSI {
		if err := c.createCSIClaim(ctx, p, pvc); err != nil {
			return time.Time{}, err
		}
		add("csi", "/csi", corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc}})
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Labels: map[string]string{"app": "evm"}},
		Spec: corev1.PodSpec{
			NodeName:                      c.node.Name(),
			HostNetwork:                   true,
			TerminationGracePeriodSeconds: new(int64(0)),
			Containers: []corev1.Container{{
				Name:            "bb",
				Image:           node.BusyboxImage,
				ImagePullPolicy: corev1.PullNever,
				Command:         []string{"sh", "-c", "trap 'exit 0' TERM; echo written-by-container > /data/hello; sleep 3600 & wait"},
				VolumeMounts:    mounts,
			}},
			Volumes: volumes,
		},
	}
	created := time.Now()
	if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return time.Time{}, fmt.Errorf("pod %s: %w", p.Name, err)
	}
	return created, nil
}

// createCSIClaim creates a pod's PV and PVC, and waits until the PV binder
// has bound them, as the scheduler would: a pod bound to the node before its
// claim fails its first volume wait and is retried only after a 10s backoff.
func (c *Cluster) createCSIClaim(ctx context.Context, p APIPod, pvc string) error {
	client := c.client
	size := resource.MustParse("1Mi")
	ann := map[string]string{}
	if p.AttachDelay != nil {
		ann[AttachDelayAnnotation] = p.AttachDelay.String()
	}
	if _, err := client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: PVName(p.Name), Annotations: ann},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: CSIDriverName, VolumeHandle: "vol-" + p.Name, FSType: "ext4"}},
			ClaimRef: &corev1.ObjectReference{Namespace: APIPodNamespace, Name: pvc},
		},
	}, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fmt.Errorf("PV of %s: %w", p.Name, err)
	}
	if _, err := client.CoreV1().PersistentVolumeClaims(APIPodNamespace).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: pvc},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: new(""),
			VolumeName:       PVName(p.Name),
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		},
	}, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fmt.Errorf("PVC of %s: %w", p.Name, err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		claim, err := client.CoreV1().PersistentVolumeClaims(APIPodNamespace).Get(ctx, pvc, metav1.GetOptions{})
		return err == nil && claim.Status.Phase == corev1.ClaimBound, nil
	}); err != nil {
		return fmt.Errorf("the PV binder did not bind %s within 30s: %w", pvc, err)
	}
	return nil
}

// DeleteAPIPod deletes a pod gracefully, as a user would.
func (c *Cluster) DeleteAPIPod(ctx context.Context, name string) error {
	return c.client.CoreV1().Pods(APIPodNamespace).Delete(ctx, name, metav1.DeleteOptions{})
}

// APIPodGone reports whether a pod is gone from the API server.
func (c *Cluster) APIPodGone(ctx context.Context, name string) (bool, error) {
	_, err := c.APIPodUID(ctx, name)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// UpdateConfigMap sets the "data" key of a pod's config map.
func (c *Cluster) UpdateConfigMap(ctx context.Context, pod, value string) error {
	cm, err := c.client.CoreV1().ConfigMaps(APIPodNamespace).Get(ctx, "cm-"+pod, metav1.GetOptions{})
	if err != nil {
		return err
	}
	cm.Data = map[string]string{"data": value}
	_, err = c.client.CoreV1().ConfigMaps(APIPodNamespace).Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

// APIPodUID is the UID of a pod in the API server.
func (c *Cluster) APIPodUID(ctx context.Context, name string) (string, error) {
	pod, err := c.client.CoreV1().Pods(APIPodNamespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	return string(pod.UID), nil
}

// ConfigMapFile is the host path of a pod's config map key "data".
func (c *Cluster) ConfigMapFile(uid string) string {
	return filepath.Join(c.node.PodDir(uid), "volumes", "kubernetes.io~configmap", "config", "data")
}

// CSIMountDir is the host path where the kubelet mounts a pod's CSI volume.
func (c *Cluster) CSIMountDir(uid, pod string) string {
	return filepath.Join(c.node.PodDir(uid), "volumes", "kubernetes.io~csi", PVName(pod), "mount")
}

// AttachDelayAnnotation on a PV delays its attach after its VolumeAttachment ("1s").
const AttachDelayAnnotation = "evm.csi.k8s.io/attach-delay"

// Attacher plays kubernetes-csi/external-attacher's role for one CSI driver
// (the Go module proxy does not serve it), and records when it acts.
type Attacher struct {
	client    kubernetes.Interface
	driver    string
	finalizer string
	logf      func(string, ...any)
	vaLister  storagelisters.VolumeAttachmentLister
	csi       csi.ControllerClient
	queue     workqueue.TypedRateLimitingInterface[string]
	done      chan struct{}

	mu                          sync.Mutex
	created, attached, detached map[string]time.Time // by PV name
	// listed is, by CSI volume handle, when the node's status first listed
	// the volume; handles maps PV names to handles.
	listed  map[string]time.Time
	handles map[string]string
}

// StartAttacher starts an attacher until ctx ends; startCtx bounds its sync.
func StartAttacher(ctx, startCtx context.Context, client kubernetes.Interface, driver, endpoint string, logf func(string, ...any)) (*Attacher, error) {
	factory := informers.NewSharedInformerFactory(client, 0)
	vaInformer := factory.Storage().V1().VolumeAttachments()
	a := &Attacher{
		client:    client,
		driver:    driver,
		finalizer: "external-attacher/" + strings.ReplaceAll(driver, "/", "-"),
		logf:      logf,
		vaLister:  vaInformer.Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 5*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "attacher"}),
		done:     make(chan struct{}),
		created:  map[string]time.Time{},
		attached: map[string]time.Time{},
		detached: map[string]time.Time{},
		listed:   map[string]time.Time{},
		handles:  map[string]string{},
	}
	nodeInformer := factory.Core().V1().Nodes().Informer()
	if err := a.watch(vaInformer.Informer(), nodeInformer); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	syncCtx, cancelSync := context.WithTimeout(startCtx, time.Minute)
	defer cancelSync()
	// On errors the caller ends ctx, which stops the informers.
	if !cache.WaitForCacheSync(syncCtx.Done(), vaInformer.Informer().HasSynced, nodeInformer.HasSynced) {
		return nil, fmt.Errorf("the attacher's informers did not sync")
	}
	conn, err := grpc.NewClient("unix://"+endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("connecting to the CSI driver at %s: %w", endpoint, err)
	}
	a.csi = csi.NewControllerClient(conn)
	context.AfterFunc(ctx, a.queue.ShutDown)
	go func() {
		defer close(a.done)
		defer conn.Close()
		for a.processNext(ctx) {
		}
		factory.Shutdown()
	}()
	return a, nil
}

// watch queues the driver's VolumeAttachments and records their times.
func (a *Attacher) watch(vas, nodes cache.SharedIndexInformer) error {
	ours := func(obj any) (*storagev1.VolumeAttachment, bool) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		va, ok := obj.(*storagev1.VolumeAttachment)
		return va, ok && va.Spec.Attacher == a.driver && va.Spec.Source.PersistentVolumeName != nil
	}
	if _, err := vas.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if va, ok := ours(obj); ok {
				a.note(a.created, *va.Spec.Source.PersistentVolumeName)
				a.queue.Add(va.Name)
			}
		},
		UpdateFunc: func(_, obj any) {
			if va, ok := ours(obj); ok {
				a.queue.Add(va.Name)
			}
		},
		DeleteFunc: func(obj any) {
			if va, ok := ours(obj); ok {
				a.note(a.detached, *va.Spec.Source.PersistentVolumeName)
			}
		},
	}); err != nil {
		return err
	}
	onNode := func(_, obj any) {
		nodeObj, ok := obj.(*corev1.Node)
		if !ok {
			return
		}
		now := time.Now()
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, v := range nodeObj.Status.VolumesAttached {
			if _, handle, ok := strings.Cut(string(v.Name), a.driver+"^"); ok && a.listed[handle].IsZero() {
				a.listed[handle] = now
			}
		}
	}
	_, err := nodes.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) { onNode(nil, obj) }, UpdateFunc: onNode})
	return err
}

// Wait waits until the attacher has stopped.
func (a *Attacher) Wait() { <-a.done }

func (a *Attacher) note(m map[string]time.Time, pv string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if m[pv].IsZero() {
		m[pv] = time.Now()
	}
}

// VolumeTimes is when a PV's VolumeAttachment was created, attached, listed and gone.
type VolumeTimes struct {
	Created, Attached, Listed, Detached time.Time
}

// Times returns the recorded times of a PV.
func (a *Attacher) Times(pv string) VolumeTimes {
	a.mu.Lock()
	defer a.mu.Unlock()
	return VolumeTimes{Created: a.created[pv], Attached: a.attached[pv], Listed: a.listed[a.handles[pv]], Detached: a.detached[pv]}
}

func (a *Attacher) processNext(ctx context.Context) bool {
	name, quit := a.queue.Get()
	if quit {
		return false
	}
	defer a.queue.Done(name)
	requeue, err := a.sync(ctx, name)
	switch {
	case err != nil:
		a.logf("attacher: %s: %v (retrying)", name, err)
		a.queue.AddRateLimited(name)
	case requeue > 0:
		a.queue.Forget(name)
		a.queue.AddAfter(name, requeue)
	default:
		a.queue.Forget(name)
	}
	return true
}

// sync brings one VolumeAttachment to its wanted state, or returns a delay.
func (a *Attacher) sync(ctx context.Context, name string) (time.Duration, error) {
	va, err := a.vaLister.Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	pv := *va.Spec.Source.PersistentVolumeName
	if va.DeletionTimestamp != nil {
		if !slices.Contains(va.Finalizers, a.finalizer) {
			return 0, nil
		}
		if _, err := a.csi.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{
			VolumeId: a.volumeID(ctx, pv), NodeId: va.Spec.NodeName}); err != nil {
			return 0, fmt.Errorf("ControllerUnpublishVolume: %w", err)
		}
		va = va.DeepCopy()
		va.Finalizers = slices.DeleteFunc(va.Finalizers, func(f string) bool { return f == a.finalizer })
		_, err := a.client.StorageV1().VolumeAttachments().Update(ctx, va, metav1.UpdateOptions{})
		return 0, err
	}
	if va.Status.Attached {
		return 0, nil
	}
	if !slices.Contains(va.Finalizers, a.finalizer) {
		va = va.DeepCopy()
		va.Finalizers = append(va.Finalizers, a.finalizer)
		// The update's event brings the VolumeAttachment back.
		_, err := a.client.StorageV1().VolumeAttachments().Update(ctx, va, metav1.UpdateOptions{})
		return 0, err
	}
	var delay time.Duration
	pvObj, err := a.client.CoreV1().PersistentVolumes().Get(ctx, pv, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	if s, ok := pvObj.Annotations[AttachDelayAnnotation]; ok {
		if delay, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("PV %s: annotation %s=%q: %w", pv, AttachDelayAnnotation, s, err)
		}
	}
	created := a.Times(pv).Created
	if created.IsZero() {
		created = va.CreationTimestamp.Time
	}
	if wait := time.Until(created.Add(delay)); wait > 0 {
		return wait, nil
	}
	volumeID := ""
	if pvObj.Spec.CSI != nil {
		volumeID = pvObj.Spec.CSI.VolumeHandle
		a.mu.Lock()
		a.handles[pv] = volumeID
		a.mu.Unlock()
	}
	resp, err := a.csi.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{
		VolumeId: volumeID, NodeId: va.Spec.NodeName,
		VolumeCapability: &csi.VolumeCapability{
			AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
			AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
		},
	})
	if err != nil {
		return 0, fmt.Errorf("ControllerPublishVolume: %w", err)
	}
	va = va.DeepCopy()
	va.Status.Attached = true
	va.Status.AttachmentMetadata = resp.GetPublishContext()
	if _, err := a.client.StorageV1().VolumeAttachments().UpdateStatus(ctx, va, metav1.UpdateOptions{}); err != nil {
		return 0, err
	}
	a.note(a.attached, pv)
	return 0, nil
}

// volumeID is the CSI volume handle of a PV, or its name if the PV is gone.
func (a *Attacher) volumeID(ctx context.Context, pv string) string {
	pvObj, err := a.client.CoreV1().PersistentVolumes().Get(ctx, pv, metav1.GetOptions{})
	if err != nil || pvObj.Spec.CSI == nil {
		return pv
	}
	return pvObj.Spec.CSI.VolumeHandle
}
