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

// Command scale reports a node-bench scale run: it reads the results of
// every size under -dir (pods-N/results.json, as make node-bench writes
// them with NODE_BENCH_SIZES), prints the scale table, and writes it to
// scale.md beside a chart of the idle volume manager CPU against pods.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"evented-volume-manager/pkg/nodebench"
)

func main() {
	dir := flag.String("dir", filepath.Join("_output", "node-bench"), "the directory holding pods-N/results.json for each size")
	flag.Parse()
	matches, err := filepath.Glob(filepath.Join(*dir, "pods-*", "results.json"))
	if err != nil {
		fail(err)
	}
	sizeDir := regexp.MustCompile(`pods-(\d+)$`)
	var sizes []nodebench.Size
	for _, m := range matches {
		sub := sizeDir.FindStringSubmatch(filepath.Dir(m))
		if sub == nil {
			continue
		}
		pods, _ := strconv.Atoi(sub[1])
		r, err := nodebench.Load(m)
		if err != nil {
			fail(err)
		}
		sizes = append(sizes, nodebench.Size{Pods: pods, Result: r})
	}
	if len(sizes) == 0 {
		fail(fmt.Errorf("no pods-N/results.json under %s: run make node-bench NODE_BENCH_SIZES=\"110 250\" first", *dir))
	}
	md := nodebench.ScaleMarkdown(sizes)
	chart := filepath.Join(*dir, "vm-cpu-vs-pods.png")
	if err := nodebench.ScaleChart(sizes, chart); err != nil {
		fail(err)
	}
	md += "\nChart: vm-cpu-vs-pods.png\n"
	if err := os.WriteFile(filepath.Join(*dir, "scale.md"), []byte(md), 0o644); err != nil {
		fail(err)
	}
	fmt.Print(md)
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "scale: %v\n", err)
	os.Exit(1)
}
