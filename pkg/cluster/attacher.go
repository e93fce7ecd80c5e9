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
	"slices"
	"strings"
	"sync"
	"time"

	csi "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// AttachDelayAnnotation on a PersistentVolume of the project's CSI driver is
// how long the attacher waits, from the VolumeAttachment's creation, before
// it marks the volume attached: a Go duration such as "1s"; none without it.
const AttachDelayAnnotation = "evm.csi.k8s.io/attach-delay"

// Attacher plays the external attacher's role for one CSI driver, as
// kubernetes-csi/external-attacher does (which the Go module proxy does not
// serve): it watches the driver's VolumeAttachments, puts its finalizer on
// them, calls the driver's ControllerPublishVolume and marks them attached;
// on deletion it calls ControllerUnpublishVolume and removes the finalizer.
// It records when each volume was attached and detached.
type Attacher struct {
	client    kubernetes.Interface
	driver    string
	finalizer string
	logf      func(string, ...any)
	vaLister  storagelisters.VolumeAttachmentLister
	csi       csi.ControllerClient
	queue     workqueue.TypedRateLimitingInterface[string]
	done      chan struct{}

	mu       sync.Mutex
	created  map[string]time.Time // by PV name: the VolumeAttachment seen
	attached map[string]time.Time // marked attached
	detached map[string]time.Time // the VolumeAttachment gone
	// listed is, by CSI volume handle, when the node's status first listed
	// the volume (every pod has a volume of its own); handles maps PV names
	// to handles.
	listed  map[string]time.Time
	handles map[string]string
}

// StartAttacher starts an attacher for driver, whose controller service
// listens on endpoint. It stops when ctx ends; Wait waits for that. startCtx
// bounds the wait for its informers' first sync, with a minute at most.
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

// watch queues the driver's VolumeAttachments and records when they come
// and go, and when the node's status lists their volumes, as the
// attach/detach controller does before the kubelet mounts them.
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

// note records the first time of an event of a PV.
func (a *Attacher) note(m map[string]time.Time, pv string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if m[pv].IsZero() {
		m[pv] = time.Now()
	}
}

// VolumeTimes is when the attacher saw a PV's VolumeAttachment created,
// marked it attached, saw the node's status list it as attached (Listed)
// and saw it gone. Zero times did not happen (yet).
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

// sync brings one VolumeAttachment to its wanted state. It returns how long
// to wait before the volume may be attached, if it must wait.
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
