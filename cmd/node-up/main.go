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

// Command node-up is make node-up: a node to try the gate on by hand. It
// starts the container runtime and the patched kubelet with -feature-gates,
// runs -pods static pods × 4 volumes, prints where the kubelet's files are
// and how to scrape its metrics, and keeps the node running until SIGINT or
// SIGTERM, when it stops it and restores the host.
//
// When the kubelet exits, node-up starts it again a second later from its
// configuration file, as a service manager would: edit its featureGates and
// kill the kubelet to flip the gate. Whenever what the kubelet reports
// changes, node-up prints one status line.
//
//	node-up -out _output [-pods 10] [-feature-gates EventedVolumeManager=true]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"evented-volume-manager/pkg/node"

	"k8s.io/apimachinery/pkg/util/wait"
)

func main() {
	out := flag.String("out", "_output", "the project's build output (binaries and images)")
	pods := flag.Int("pods", 10, "static pods, each with 4 volumes")
	gates := flag.String("feature-gates", "", "the kubelet's feature gates, as its --feature-gates takes them (EventedVolumeManager=true,...); those left out are off")
	verbosity := flag.Int("v", node.DefaultVerbosity, "the kubelet's --v, from its start (4 logs each volume the loops add and each missed signal)")
	runtime := node.RuntimeFlags(flag.CommandLine)
	flag.Parse()
	if err := run(*out, *pods, *gates, *verbosity, runtime); err != nil {
		fmt.Fprintf(os.Stderr, "node-up: %v\n", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Printf("%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(out string, pods int, gates string, verbosity int, runtime func() (node.Runtime, error)) error {
	k, err := node.ParseKubelet("series", "", gates)
	if err != nil {
		return fmt.Errorf("-feature-gates: %w", err)
	}
	rt, err := runtime()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	startCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	n, err := node.Start(startCtx, node.Options{
		Out:       out,
		Work:      filepath.Join(out, "node-up"),
		Kubelet:   k,
		Verbosity: verbosity,
		MaxPods:   max(pods+10, node.DefaultMaxPods),
		Runtime:   rt,
		Logf:      logf,
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := n.Stop(); err != nil {
			logf("stopping the node: %v", err)
		}
	}()
	n.Supervise(node.KubeletService)
	if err := n.StartKubelet(startCtx); err != nil {
		return err
	}
	if err := addPods(ctx, n, pods); err != nil {
		return err
	}
	fmt.Printf(`
The node runs %d pods × %d volumes on %s; %s started.
  kubelet config  %s
  kubelet log     %s
  kubelet PID     %s
  metrics         curl -sk https://127.0.0.1:10250/metrics | grep -E '^(kubernetes_feature_enabled\{name="EventedVolumeManager"|kubelet_evented_pleg_connection_(success|error)_count|volume_manager_(loop_iterations_total|loop_passes_total|wait_for_attach_and_mount_duration_seconds_count))'
  flip the gate   sed -i 's/EventedVolumeManager: %t/EventedVolumeManager: %t/' %s
                  kill $(cat %s)    # node-up starts the kubelet again a second later, from the config
Ctrl-C stops the node and restores the host.

`, pods, node.VolumesPerPod, n.RuntimeLabel(), k, rel(n.KubeletConfig()), rel(n.KubeletLog()), rel(n.KubeletPIDFile()),
		k.Gate(node.EventedVolumeManager), !k.Gate(node.EventedVolumeManager), rel(n.KubeletConfig()), rel(n.KubeletPIDFile()))

	for last := ""; ; {
		if s := status(ctx, n); s != last {
			logf("%s", s)
			last = s
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(2 * time.Second):
		}
	}
}

// addPods adds pods PodManifest pods and waits until they run.
func addPods(ctx context.Context, n *node.Node, pods int) error {
	if err := os.WriteFile(filepath.Join(n.HostPathDir(), "greeting"), []byte("from-the-host\n"), 0o644); err != nil {
		return err
	}
	logf("adding %d static pods × %d volumes", pods, node.VolumesPerPod)
	for i := range pods {
		name := fmt.Sprintf("up-%03d", i)
		if err := n.AddPod(name, node.PodManifest(name, n.HostPathDir(), nil)); err != nil {
			return err
		}
	}
	// A loaded node may take more than a second a pod to run them.
	ctx, cancel := context.WithTimeout(ctx, node.PodsStartTimeout(pods))
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		cs, err := n.RunningContainers(ctx, "bb")
		return err == nil && len(cs) >= pods, nil
	}); err != nil {
		return fmt.Errorf("the pods do not run: %v (see %s)", err, rel(n.KubeletLog()))
	}
	return nil
}

// status is one line of what the kubelet reports.
func status(ctx context.Context, n *node.Node) string {
	pid := n.KubeletPID()
	if pid == 0 {
		return "the kubelet is not running"
	}
	m, err := n.Metrics(ctx)
	if err != nil {
		return fmt.Sprintf("kubelet pid %d: no metrics yet", pid)
	}
	gate := "off"
	if m.Sum("kubernetes_feature_enabled", "name", "EventedVolumeManager") == 1 {
		gate = "on"
	}
	s := fmt.Sprintf("kubelet pid %d: EventedVolumeManager %s; volumes desired %v, actual %v", pid, gate,
		m.Sum("volume_manager_total_volumes", "state", "desired_state_of_world"),
		m.Sum("volume_manager_total_volumes", "state", "actual_state_of_world"))
	if gate == "on" {
		s += fmt.Sprintf("; runtime event stream connections %v, failures %v", m.Sum("kubelet_evented_pleg_connection_success_count"), m.Sum("kubelet_evented_pleg_connection_error_count"))
	}
	return s
}

// rel is path relative to the working directory, where make runs.
func rel(path string) string {
	wd, err := os.Getwd()
	if r, relErr := filepath.Rel(wd, path); err == nil && relErr == nil {
		return r
	}
	return path
}
