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

package nodebench

import (
	"context"
	"time"

	"evented-volume-manager/pkg/cluster"
	"evented-volume-manager/pkg/node"
)

// Workload is what a benchmark runs on its node, by the node's kind:
// Standalone, a standalone kubelet with static pods, or Cluster, a node
// registered with a control plane, with API pods and a CSI driver.
type Workload interface {
	// cluster reports whether the node has a control plane, as results
	// record it (Result.Cluster).
	cluster() bool
	// configure sets what depends on the node's kind before it starts.
	configure(o Options, no *node.Options, m *Mode)
	// start starts the kubelet and, if the node has one, the control plane.
	start(ctx context.Context, n *node.Node) (*cluster.Cluster, error)
	// addIdle adds the idle pod name.
	addIdle(ctx context.Context, r *runState, name string) error
	// window records idle window w's CPU beyond the kubelet's and the
	// runtime's, from s0 to s1.
	window(r *runState, w int, s0, s1 cpuSample)
	// measure runs the kind's measurements after the idle windows, which
	// ran from idleFrom to idleTo.
	measure(ctx context.Context, r *runState, idle []string, idleFrom, idleTo time.Time) error
	// estimate is roughly how long a configuration takes beyond settling
	// and the idle windows.
	estimate(o Options) time.Duration
}

// runState is one configuration's measurement in progress.
type runState struct {
	o  Options
	n  *node.Node
	cl *cluster.Cluster // nil without a control plane
	m  *Mode
}

// Standalone runs a standalone kubelet with static pods: after the idle
// windows it deletes and adds single pods, then adds pods whose containers
// exit on their own, and crash-looping pods.
type Standalone struct{}

var _ Workload = Standalone{}

func (Standalone) cluster() bool { return false }

func (Standalone) configure(Options, *node.Options, *Mode) {}

func (Standalone) start(ctx context.Context, n *node.Node) (*cluster.Cluster, error) {
	return nil, n.StartKubelet(ctx)
}

func (Standalone) addIdle(_ context.Context, r *runState, name string) error {
	return r.n.AddPod(name, node.PodManifest(name, r.n.HostPathDir(), nil))
}

func (Standalone) window(*runState, int, cpuSample, cpuSample) {}

func (Standalone) measure(ctx context.Context, r *runState, idle []string, _, _ time.Time) error {
	o, m := r.o, r.m
	if err := runSingles(ctx, r.n, o, idle, m); err != nil {
		return err
	}
	// Before the exiting and crash-looping pods: the trigger counts cover
	// the same stretch of the run as the other figures.
	r.readTriggers(ctx)
	var err error
	if o.ExitPods > 0 {
		if m.ExitUnmount, m.ExitSteps, err = measureExits(ctx, r.n, o.ExitPods, o.ExitPoll, o.Logf); err != nil {
			return err
		}
		m.ExitPollSeconds = o.ExitPoll.Seconds()
	}
	if o.CrashLoopPods > 0 {
		if m.CrashLoop, err = measureCrashLoop(ctx, r.n, o.CrashLoopPods, o.CrashLoopWindow, o.Logf); err != nil {
			return err
		}
	}
	return nil
}

// estimate: the pods' start, the single pods, the exiting pods' 20 s and
// the crash-looping pods' 30 s of warm-up beside their window.
func (Standalone) estimate(o Options) time.Duration {
	d := 90*time.Second + time.Duration(2*o.Singles)*o.Gap
	if o.ExitPods > 0 {
		d += 20 * time.Second
	}
	if o.CrashLoopPods > 0 {
		d += 30*time.Second + o.CrashLoopWindow
	}
	return d
}

// Cluster runs a node registered with a control plane (etcd,
// kube-apiserver, kube-controller-manager) and the project's CSI driver,
// with API pods: after the idle windows it updates config maps in waves,
// adds and deletes single pods of each of ClusterPodKinds, and counts the
// kubelet's API requests.
type Cluster struct{}

var _ Workload = Cluster{}

func (Cluster) cluster() bool { return true }

func (Cluster) configure(o Options, no *node.Options, m *Mode) {
	m.Volumes, no.MaxPods = cluster.APIPodVolumes(false), max(o.Pods+o.Singles+10, node.DefaultMaxPods)
}

func (Cluster) start(ctx context.Context, n *node.Node) (*cluster.Cluster, error) {
	return cluster.Start(ctx, n)
}

func (Cluster) addIdle(ctx context.Context, r *runState, name string) error {
	_, err := r.cl.CreateAPIPod(ctx, cluster.APIPod{Name: name})
	return err
}

func (Cluster) window(r *runState, w int, s0, s1 cpuSample) {
	m := r.m
	m.APIServerCPU = append(m.APIServerCPU, (s1.apiserver - s0.apiserver).Seconds())
	m.ControllerManagerCPU = append(m.ControllerManagerCPU, (s1.cm - s0.cm).Seconds())
	r.o.Logf("idle window %d/%d: kube-apiserver %.2f, kube-controller-manager %.2f CPU-s", w, r.o.Windows, m.APIServerCPU[w-1], m.ControllerManagerCPU[w-1])
}

func (Cluster) measure(ctx context.Context, r *runState, idle []string, idleFrom, idleTo time.Time) error {
	if err := runCluster(ctx, r.n, r.cl, r.o, idle, idleFrom, idleTo, r.m); err != nil {
		return err
	}
	r.readTriggers(ctx)
	return nil
}

// estimate: the control plane's start, each config map wave's 95 s, and
// each pod kind's single pods with 20 s to go.
func (Cluster) estimate(o Options) time.Duration {
	churn := time.Duration(2*o.Singles) * o.Gap
	return 2*time.Minute + time.Duration(o.ConfigMapWaves)*95*time.Second + time.Duration(len(ClusterPodKinds))*(churn+20*time.Second)
}
