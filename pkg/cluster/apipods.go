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
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"evented-volume-manager/pkg/node"
)

// APIPodNamespace is the namespace of the pods of a cluster node.
const APIPodNamespace = "default"

// APIPod describes a pod created through the API server: busybox in
// hostNetwork, bound to the node (no scheduler runs), with an emptyDir
// (/data), a configMap (/etc/config, key "data") and a secret (/etc/secret)
// of its own, and the default service account's projected token volume,
// which the API server's ServiceAccount admission adds (kube-api-access-*).
// With CSI it also mounts a PersistentVolumeClaim (/csi) bound to a
// PersistentVolume of the project's CSI driver, which requires attach.
type APIPod struct {
	Name string
	// CSI adds the CSI volume; AttachDelay, if set, is the attacher's delay
	// for it (AttachDelayAnnotation on its PV).
	CSI         bool
	AttachDelay *time.Duration
	// TokenExpiration, if set, adds a projected service-account token
	// volume (/var/run/secrets/tokens/short) that expires after that many
	// seconds; the API allows 600 or more.
	TokenExpiration int64
}

// APIPodVolumes is how many volumes an APIPod has: the token, emptyDir,
// configMap and secret, and the CSI volume if it has one.
func APIPodVolumes(csi bool) int {
	if csi {
		return 5
	}
	return 4
}

// PVName is the name of a pod's PersistentVolume; its claim is pvc-<pod>,
// its config map cm-<pod> and its secret sec-<pod>.
func PVName(pod string) string { return "pv-" + pod }

// CreateAPIPod creates a pod's config map, secret and, with CSI, its PV and
// PVC, waits for the claim to be bound, and then creates the pod. Objects
// that exist already are kept. It returns when it created the pod.
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

// createCSIClaim creates a pod's PV of the project's CSI driver and a PVC
// that names it, and waits until the PV binder has bound them, as the
// scheduler would: a pod bound to the node before its claim fails its first
// volume wait ("PVC is not bound") and is retried only after a 10s backoff.
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

// DeleteAPIPod deletes a pod through the API server, gracefully, as a user
// would; the kubelet finishes the deletion once the pod has stopped.
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

// ConfigMapFile is the host path of a pod's config map key "data", as the
// kubelet wrote it into the pod's configMap volume.
func (c *Cluster) ConfigMapFile(uid string) string {
	return filepath.Join(c.node.PodDir(uid), "volumes", "kubernetes.io~configmap", "config", "data")
}

// CSIMountDir is the host path where the kubelet mounts a pod's CSI volume.
func (c *Cluster) CSIMountDir(uid, pod string) string {
	return filepath.Join(c.node.PodDir(uid), "volumes", "kubernetes.io~csi", PVName(pod), "mount")
}
