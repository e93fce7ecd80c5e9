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

// Command node-bench is the real-node side-by-side benchmark of make
// node-bench and make node-bench-cluster (package nodebench). It writes
// results.json, report.md, charts and the idle windows' CPU profiles
// (cpu-<config>-<n>.pb.gz) into -dir and prints the report; -sizes
// runs it at each number of pods, into -dir/pods-N, then writes scale.md.
//
//	node-bench -out _output [-pods 110] [-rounds 1] [-stock=false] [-configs stock,gate-off,gate-on,all-gates] ...
//	node-bench -out _output -cluster [-rounds 2] [-configmaps 110] [-configs gate-off,gate-on,node-status-gate,all-gates] ...
//	node-bench -out _output -sizes "110 250 500"
//	node-bench [-cluster] [-sizes ...] -report    (the report of an earlier run)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"evented-volume-manager/pkg/node"
	"evented-volume-manager/pkg/nodebench"
)

// clusterDefaults are the flags' defaults with -cluster.
var clusterDefaults = map[string]string{
	"dir": filepath.Join("_output", "node-bench-cluster"), "settle": "30s", "windows": "2", "singles": "15", "rounds": "2",
	"exit-pods": "0", "crashloop-pods": "0", "stock": "false",
}

func main() {
	var o nodebench.Options
	flag.StringVar(&o.Out, "out", "_output", "the project's build output (binaries and images)")
	flag.StringVar(&o.Dir, "dir", filepath.Join("_output", "node-bench"), "where results, charts and work directories go (-cluster: _output/node-bench-cluster)")
	clusterNode := flag.Bool("cluster", false, "run a cluster node (API server, attach/detach controller, CSI) with API pods, without stock")
	flag.IntVar(&o.Pods, "pods", 110, "idle pods, each with 4 volumes")
	flag.DurationVar(&o.StartTimeout, "start-timeout", 0, "how long the idle pods may take to run; 0 means 10m, or 1s a pod above 600")
	flag.DurationVar(&o.Settle, "settle", 20*time.Second, "rest after the pods run, before measuring (-cluster: 30s)")
	flag.DurationVar(&o.Window, "window", 60*time.Second, "one idle CPU window")
	flag.IntVar(&o.Windows, "windows", 3, "idle CPU windows per round (-cluster: 2)")
	flag.IntVar(&o.Singles, "singles", 55, "pods deleted, then added, one at a time (-cluster: 15 pods of each kind added, then deleted)")
	flag.DurationVar(&o.Gap, "gap", time.Second, "time between single pods")
	flag.IntVar(&o.ExitPods, "exit-pods", 20, "pods with restartPolicy Never whose container exits on its own, 3 to 8 s after it starts; 0 adds none (-cluster: 0)")
	flag.DurationVar(&o.ExitPoll, "exit-poll", 5*time.Millisecond, "how often /proc/self/mountinfo is read while the -exit-pods' volumes are unmounted")
	flag.IntVar(&o.CrashLoopPods, "crashloop-pods", 10, "pods whose container exits 1 every 2 s with restartPolicy Always, added last; 0 adds none (-cluster: 0)")
	flag.DurationVar(&o.CrashLoopWindow, "crashloop-window", time.Minute, "how long the -crashloop-pods' cost is measured, after 30 s of warm-up")
	flag.IntVar(&o.ConfigMaps, "configmaps", 110, "-cluster: idle pods (at most -pods) whose config map is updated in each wave, the updates spread evenly over 90 s")
	flag.IntVar(&o.ConfigMapWaves, "configmap-waves", 3, "-cluster: waves of config map updates per round, each after the last wave's files changed")
	flag.DurationVar(&o.ConfigMapTimeout, "configmap-timeout", 150*time.Second, "-cluster: how long a wave waits for the updated config maps in the pods' files")
	rounds := flag.Int("rounds", 1, "rounds; each runs every configuration, in an order that changes from round to round (-cluster: 2)")
	configs := flag.String("configs", "", `the configurations, comma-separated, in the order of round 1, by name or hyphenated: some of "stock,gate off,gate on,all gates,node-status gate"; empty means stock, gate off, gate on, all gates (-cluster: gate off, gate on, node-status gate, all gates)`)
	stock := flag.Bool("stock", true, "run upstream's kubelet (-stock-kubelet) too, as the stock configuration; false leaves stock out of -configs' rounds (-cluster: false)")
	stockKubelet := flag.String("stock-kubelet", "", "upstream's kubelet, built without the series (hack/build-stock-kubelet.sh); empty means -out's bin/kubelet-stock")
	sizes := flag.String("sizes", "", `pod counts, such as "110 250 500": the scale matrix, the benchmark at each size into -dir/pods-N`)
	runtime := node.RuntimeFlags(flag.CommandLine)
	reportOnly := flag.Bool("report", false, "only write the report of the results in -dir (with -sizes, the scale table)")
	flag.Parse()
	o.Workload = nodebench.Standalone{}
	if *clusterNode {
		o.Workload = nodebench.Cluster{}
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for name, value := range clusterDefaults {
			if !set[name] {
				_ = flag.Set(name, value)
			}
		}
	}
	start := time.Now()
	o.Logf = func(format string, args ...any) {
		fmt.Printf("    [%4.0fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	if err := run(o, *clusterNode, *rounds, *configs, *stock, *stockKubelet, *sizes, *reportOnly, runtime); err != nil {
		fmt.Fprintln(os.Stderr, "node-bench:", err)
		os.Exit(1)
	}
	if !*reportOnly {
		fmt.Printf("node-bench done in %v; results, reports and charts in %s\n", time.Since(start).Round(time.Second), o.Dir)
	}
}

func run(o nodebench.Options, clusterNode bool, rounds int, configList string, stock bool, stockKubelet, sizes string, reportOnly bool, runtime func() (node.Runtime, error)) error {
	configs := nodebench.DefaultConfigs(clusterNode)
	var err error
	if configList != "" {
		if configs, err = nodebench.ParseConfigs(configList); err != nil {
			return fmt.Errorf("-configs: %w", err)
		}
	}
	var pods []int
	fields := strings.Fields(sizes)
	for _, s := range fields {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return fmt.Errorf("-sizes holds %q: want pod counts, for example \"110 250 500\"", s)
		}
		pods = append(pods, n)
	}
	switch {
	case clusterNode && (stock || slices.Contains(configs, nodebench.Stock) || len(pods) > 0):
		return fmt.Errorf("-cluster runs the series' kubelet at one size: it takes neither stock nor -sizes")
	case !stock && slices.Equal(configs, []nodebench.Config{nodebench.Stock}):
		return fmt.Errorf("-configs stock with -stock=false leaves nothing to run")
	case reportOnly && len(pods) > 0:
		return nodebench.WriteScale(o.Dir)
	case reportOnly:
		r, err := nodebench.Load(filepath.Join(o.Dir, "results.json"))
		if err != nil {
			return err
		}
		return nodebench.WriteReport(r, o.Dir)
	case o.ExitPods > 0 && o.ExitPoll <= 0:
		return fmt.Errorf("-exit-poll %v: want a period above 0", o.ExitPoll)
	case o.CrashLoopPods > 0 && o.CrashLoopWindow <= 0:
		return fmt.Errorf("-crashloop-window %v: want a window above 0", o.CrashLoopWindow)
	}
	if o.Runtime, err = runtime(); err != nil {
		return err
	}
	if err := node.Preflight(o.Out, o.Runtime); err != nil {
		return fmt.Errorf("%v (make node-bench builds them)", err)
	}
	stock = stock && slices.Contains(configs, nodebench.Stock)
	if stock {
		if o.StockKubelet, err = filepath.Abs(node.StockKubelet(stockKubelet, false).Binary(o.Out)); err != nil {
			return err
		}
		if _, err := os.Stat(o.StockKubelet); err != nil {
			return fmt.Errorf("upstream's kubelet %s is missing: run hack/build-stock-kubelet.sh (make node-bench builds it), or pass -stock=false (make node-bench: NODE_BENCH_STOCK=0)", o.StockKubelet)
		}
	}
	defer node.HandleInterrupts(o.Logf)()
	ctx := context.Background()
	if len(pods) == 0 {
		return nodebench.Benchmark(ctx, o, rounds, configs, stock)
	}
	for i, n := range pods {
		so := o
		so.Pods, so.Dir = n, filepath.Join(o.Dir, fmt.Sprintf("pods-%d", n))
		fmt.Printf("==> the benchmark at %d pods\n", n)
		if err := nodebench.Benchmark(ctx, so, rounds, configs, stock); err != nil {
			return fmt.Errorf("at %d pods: %w; the sizes before it are kept: rerun with -sizes %q", n, err, strings.Join(fields[i:], " "))
		}
	}
	return nodebench.WriteScale(o.Dir)
}
