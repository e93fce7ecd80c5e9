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

// Command runcluster is the cluster-node side-by-side benchmark that make
// node-bench-cluster runs: for each round, the same workload of API pods on
// a fresh cluster node (etcd, kube-apiserver, kube-controller-manager, the
// project's CSI driver and attacher) with the EventedVolumeManager gate off
// and on, off first in odd rounds and on first in even ones. It writes
// results.json, report.md and charts into -dir and prints the report.
//
//	runcluster -out _output -dir _output/node-bench-cluster [-pods 110] [-rounds 2] ...
//	runcluster -dir _output/node-bench-cluster -report    (the report of an earlier run)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"evented-volume-manager/pkg/node"
	"evented-volume-manager/pkg/nodebench"
)

func main() {
	var o nodebench.ClusterOptions
	flag.StringVar(&o.Out, "out", "_output", "the project's build output (binaries and images)")
	flag.StringVar(&o.Dir, "dir", filepath.Join("_output", "node-bench-cluster"), "where results, charts and work directories go")
	flag.IntVar(&o.Pods, "pods", 110, "idle API pods, each with 4 volumes")
	flag.DurationVar(&o.Settle, "settle", 30*time.Second, "rest after the pods run, before measuring")
	flag.DurationVar(&o.Window, "window", 60*time.Second, "one idle CPU window")
	flag.IntVar(&o.Windows, "windows", 2, "idle CPU windows per round")
	flag.DurationVar(&o.Profile, "profile", 60*time.Second, "the kubelet CPU profile's length")
	flag.IntVar(&o.Singles, "singles", 15, "pods of each kind added, then deleted, one at a time")
	flag.DurationVar(&o.Gap, "gap", time.Second, "time between single pods")
	flag.IntVar(&o.ConfigMaps, "configmaps", 110, "idle pods (at most -pods) whose config map is updated at once, in each wave")
	flag.IntVar(&o.ConfigMapWaves, "configmap-waves", 3, "waves of config map updates per round, each after the last wave's files changed")
	flag.DurationVar(&o.ConfigMapTimeout, "configmap-timeout", 150*time.Second, "how long a wave waits for the updated config maps in the pods' files")
	rounds := flag.Int("rounds", 2, "rounds; each runs the gate off and on, off first in odd rounds and on first in even ones")
	runtime := node.RuntimeFlags(flag.CommandLine)
	reportOnly := flag.Bool("report", false, "only print the report of the results in -dir")
	flag.Parse()

	start := time.Now()
	o.Logf = func(format string, args ...any) {
		fmt.Printf("    [%4.0fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		fail(err)
	}
	results := filepath.Join(o.Dir, "results.json")
	if *reportOnly {
		r, err := nodebench.LoadCluster(results)
		if err != nil {
			fail(err)
		}
		report(r, o.Dir)
		return
	}
	var err error
	if o.Runtime, o.PodEventsOff, err = runtime(); err != nil {
		fail(err)
	}
	if err := node.Preflight(o.Out, o.Runtime); err != nil {
		fail(fmt.Errorf("%v (make node-bench-cluster builds them)", err))
	}
	stop := node.HandleInterrupts(o.Logf)
	defer stop()

	ctx := context.Background()
	var r nodebench.ClusterResult
	for round := 1; round <= *rounds; round++ {
		order := nodebench.ClusterRoundOrder(round)
		r.Orders = append(r.Orders, order)
		for _, gate := range order {
			fmt.Printf("==> round %d of %d, EventedVolumeManager=%t: cluster node, %d API pods (about %v)\n", round, *rounds, gate,
				o.Pods, estimate(o).Round(time.Minute))
			m, err := nodebench.RunCluster(ctx, o, gate)
			if err != nil {
				fail(fmt.Errorf("round %d, gate %t: %w; the node's logs are under %s", round, gate, err,
					filepath.Join(o.Dir, fmt.Sprintf("work-gate-%t", gate), "logs")))
			}
			if gate {
				r.On = append(r.On, m)
			} else {
				r.Off = append(r.Off, m)
			}
			if err := r.Save(results); err != nil {
				fail(err)
			}
		}
	}
	report(r, o.Dir)
	fmt.Printf("node-bench-cluster done in %v; results, report.md and charts in %s\n", time.Since(start).Round(time.Second), o.Dir)
}

// estimate is roughly how long one mode takes.
func estimate(o nodebench.ClusterOptions) time.Duration {
	return 2*time.Minute + o.Settle + time.Duration(o.Windows)*o.Window + o.Profile + time.Duration(o.ConfigMapWaves)*95*time.Second +
		time.Duration(len(nodebench.ClusterPodKinds))*(time.Duration(2*o.Singles)*o.Gap+20*time.Second)
}

func report(r nodebench.ClusterResult, dir string) {
	md := nodebench.ClusterMarkdown(r)
	files, err := nodebench.ClusterCharts(r, dir)
	if err != nil {
		fail(err)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f)
	}
	md += "\nCharts: " + strings.Join(names, ", ") + "\n"
	fmt.Print("\n" + md)
	if err := os.WriteFile(filepath.Join(dir, "report.md"), []byte(md), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "node-bench-cluster:", err)
	os.Exit(1)
}
