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

// Command bench-report prints the tables of make bench, the in-tree
// side-by-side benchmark, and writes its charts and report.md into -out:
//
//	bench-report -out DIR RESULT.json...
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"evented-volume-manager/pkg/bench"
)

func main() {
	out := flag.String("out", ".", "directory for the charts and report.md")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: bench-report -out DIR RESULT.json...")
		os.Exit(2)
	}
	if err := report(*out, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "bench-report:", err)
		os.Exit(1)
	}
}

func report(out string, results []string) error {
	var md strings.Builder
	for _, path := range results {
		r, err := bench.Load(path)
		if err != nil {
			return err
		}
		files, err := bench.Charts(r, out, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
		if err != nil {
			return err
		}
		for i := range files {
			files[i] = filepath.Base(files[i])
		}
		fmt.Fprintf(&md, "%s\nCharts: %s\n\n", bench.Markdown(r), strings.Join(files, ", "))
	}
	fmt.Print(md.String())
	return os.WriteFile(filepath.Join(out, "report.md"), []byte(md.String()), 0o644)
}
