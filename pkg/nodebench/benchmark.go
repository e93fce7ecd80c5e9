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
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Benchmark runs rounds of configs on fresh nodes, each round in its
// RoundOrder, stock left out unless stock is set, saving o.Dir/results.json
// after each configuration, and then writes the report (WriteReport).
func Benchmark(ctx context.Context, o Options, rounds int, configs []Config, stock bool) error {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	leftOut := func(c Config) bool { return !stock && c == Stock }
	r := Result{Cluster: o.Workload.cluster(), Configs: slices.DeleteFunc(slices.Clone(configs), leftOut)}
	estimate := Estimate(o)
	names := make([]string, len(r.Configs))
	for i, c := range r.Configs {
		names[i] = string(c)
	}
	fmt.Printf("==> %d round(s) of %s: about %v\n", rounds, strings.Join(names, ", "), (time.Duration(rounds*len(r.Configs)) * estimate).Round(time.Minute))
	for round := 1; round <= rounds; round++ {
		order := slices.DeleteFunc(RoundOrder(round, configs), leftOut)
		r.Orders = append(r.Orders, order)
		for _, c := range order {
			fmt.Printf("==> round %d of %d, %s: %d pods (about %v)\n", round, rounds, c, o.Pods, estimate.Round(time.Minute))
			m, err := Run(ctx, o, c)
			if err != nil {
				return fmt.Errorf("round %d, %s: %w; the node's logs are under %s", round, c, err, filepath.Join(o.Dir, c.WorkDir(), "logs"))
			}
			r.Add(m)
			if err := r.Save(filepath.Join(o.Dir, "results.json")); err != nil {
				return err
			}
		}
	}
	return WriteReport(r, o.Dir)
}

// Estimate is roughly how long Run takes for one configuration.
func Estimate(o Options) time.Duration {
	return o.Settle + time.Duration(o.Windows)*o.Window + o.Workload.estimate(o)
}

// WriteReport writes r's report.md and charts into dir, and prints the
// report.
func WriteReport(r Result, dir string) error {
	md := Markdown(r)
	files, err := Charts(r, dir)
	if err != nil {
		return err
	}
	md += "\nCharts: " + strings.Join(files, ", ") + "\n"
	fmt.Print("\n" + md)
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(md), 0o644)
}

// WriteScale writes the scale table of every pods-N/results.json under dir
// into dir/scale.md, and prints it.
func WriteScale(dir string) error {
	matches, err := filepath.Glob(filepath.Join(dir, "pods-*", "results.json"))
	if err != nil {
		return err
	}
	var sizes []Size
	for _, m := range matches {
		pods, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(m)), "pods-"))
		if err != nil {
			continue
		}
		r, err := Load(m)
		if err != nil {
			return err
		}
		sizes = append(sizes, Size{Pods: pods, Result: r})
	}
	if len(sizes) == 0 {
		return fmt.Errorf("no pods-N/results.json under %s: run node-bench -sizes \"110 250\" first", dir)
	}
	md := ScaleMarkdown(sizes)
	fmt.Print(md)
	return os.WriteFile(filepath.Join(dir, "scale.md"), []byte(md), 0o644)
}
