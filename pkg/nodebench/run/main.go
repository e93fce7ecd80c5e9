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

// Command run is the real-node side-by-side benchmark that make node-bench
// runs: for each round, the same workload on a fresh node with three
// kubelets: upstream's (stock, -stock-kubelet, built from the release's tag
// without the series) and the series' with the EventedVolumeManager gate
// off and on, in an order that changes from round to round (roundOrder).
// -stock=false leaves stock out. It writes results.json, report.md and
// charts into -dir and prints the report.
//
//	run -out _output -dir _output/node-bench [-pods 110] [-rounds 1] [-stock=false] ...
//	run -dir _output/node-bench -report    (the report of an earlier run)
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"evented-volume-manager/pkg/node"
	"evented-volume-manager/pkg/nodebench"
)

func main() {
	var o nodebench.Options
	flag.StringVar(&o.Out, "out", "_output", "the project's build output (binaries and images)")
	flag.StringVar(&o.Dir, "dir", filepath.Join("_output", "node-bench"), "where results, charts and work directories go")
	flag.IntVar(&o.Pods, "pods", 110, "static pods, each with 4 volumes")
	flag.DurationVar(&o.Settle, "settle", 20*time.Second, "rest after the pods run, before measuring")
	flag.DurationVar(&o.Window, "window", 60*time.Second, "one idle CPU window")
	flag.IntVar(&o.Windows, "windows", 3, "idle CPU windows per round")
	flag.DurationVar(&o.Profile, "profile", 60*time.Second, "the kubelet CPU profile's length")
	flag.IntVar(&o.Singles, "singles", 55, "pods deleted, then added, one at a time")
	flag.DurationVar(&o.Gap, "gap", time.Second, "time between single pods")
	flag.IntVar(&o.ExitPods, "exit-pods", 20, "pods with restartPolicy Never whose container exits on its own, 3 to 8 s after it starts; 0 adds none")
	flag.DurationVar(&o.ExitPoll, "exit-poll", 5*time.Millisecond, "how often /proc/self/mountinfo is read while the -exit-pods' volumes are unmounted")
	rounds := flag.Int("rounds", 1, "rounds; each runs stock, gate off and gate on, in an order that changes from round to round")
	stock := flag.Bool("stock", true, "run upstream's kubelet (-stock-kubelet) too, as the stock configuration")
	stockKubelet := flag.String("stock-kubelet", "", "upstream's kubelet, built without the series (hack/build-stock-kubelet.sh); empty means -out's bin/kubelet-stock")
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
		r, err := nodebench.Load(results)
		if err != nil {
			fail(err)
		}
		report(r, o.Dir)
		return
	}
	if o.ExitPods > 0 && o.ExitPoll <= 0 {
		fail(fmt.Errorf("-exit-poll %v: want a period above 0", o.ExitPoll))
	}
	var err error
	if o.Runtime, o.PodEventsOff, err = runtime(); err != nil {
		fail(err)
	}
	if err := node.Preflight(o.Out, o.Runtime); err != nil {
		fail(fmt.Errorf("%v (make node-bench builds them)", err))
	}
	if *stock {
		if o.StockKubelet, err = filepath.Abs(cmp.Or(*stockKubelet, filepath.Join(o.Out, "bin", "kubelet-stock"))); err != nil {
			fail(err)
		}
		if _, err := os.Stat(o.StockKubelet); err != nil {
			fail(fmt.Errorf("upstream's kubelet %s is missing: run hack/build-stock-kubelet.sh (make node-bench builds it), or pass -stock=false", o.StockKubelet))
		}
	}
	stop := node.HandleInterrupts(o.Logf)
	defer stop()

	ctx := context.Background()
	var r nodebench.Result
	for round := 1; round <= *rounds; round++ {
		order := roundOrder(round, *stock)
		r.Orders = append(r.Orders, order)
		for _, c := range order {
			fmt.Printf("==> round %d of %d, %s: %d pods x %d volumes (about %v)\n", round, *rounds, c,
				o.Pods, node.VolumesPerPod, estimate(o).Round(time.Minute))
			m, err := nodebench.Run(ctx, o, c)
			if err != nil {
				fail(fmt.Errorf("round %d, %s: %w; the node's logs are under %s", round, c, err,
					filepath.Join(o.Dir, c.WorkDir(), "logs")))
			}
			r.Add(m)
			if err := r.Save(results); err != nil {
				fail(err)
			}
		}
	}
	report(r, o.Dir)
	fmt.Printf("node-bench done in %v; results, report.md and charts in %s\n", time.Since(start).Round(time.Second), o.Dir)
}

// roundOrder is the order of the configurations in a round. Odd rounds take
// the rotations of stock, gate off, gate on in turn (round 1: stock, off,
// on; round 3: off, on, stock; round 5: on, stock, off), and each even
// round runs the round before it backwards. So each configuration goes
// first in one of the first three rounds, rounds 1 to 6 run all six orders,
// and over each pair of rounds (1 and 2, 3 and 4, ...) every configuration
// stands in the middle on average: a drift of the node over a round (the
// runtime's state growing, the host warming up) weighs on all of them alike
// instead of always on the last. Without stock, the same orders with stock
// left out: gate off and on trade places within each pair of rounds.
func roundOrder(round int, stock bool) []nodebench.Config {
	k := ((round - 1) / 2) % len(nodebench.Configs)
	order := append(slices.Clone(nodebench.Configs[k:]), nodebench.Configs[:k]...)
	if round%2 == 0 {
		slices.Reverse(order)
	}
	if !stock {
		order = slices.DeleteFunc(order, func(c nodebench.Config) bool { return c == nodebench.Stock })
	}
	return order
}

// estimate is roughly how long one mode takes.
func estimate(o nodebench.Options) time.Duration {
	exits := time.Duration(0)
	if o.ExitPods > 0 {
		exits = 20 * time.Second
	}
	return 90*time.Second + o.Settle + time.Duration(o.Windows)*o.Window + o.Profile + time.Duration(2*o.Singles)*o.Gap + exits
}

func report(r nodebench.Result, dir string) {
	md := nodebench.Markdown(r)
	files, err := nodebench.Charts(r, dir)
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
	fmt.Fprintln(os.Stderr, "node-bench:", err)
	os.Exit(1)
}
