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

// Command report prints the side-by-side benchmark's tables and writes its
// charts:
//
//	report -out DIR RESULT.json...
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
		fmt.Fprintln(os.Stderr, "usage: report -out DIR RESULT.json...")
		os.Exit(2)
	}
	var md strings.Builder
	for _, path := range flag.Args() {
		r, err := bench.Load(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			os.Exit(1)
		}
		prefix := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		files, err := bench.Charts(r, *out, prefix)
		if err != nil {
			fmt.Fprintln(os.Stderr, "report:", err)
			os.Exit(1)
		}
		md.WriteString(bench.Markdown(r))
		md.WriteString("\nCharts: ")
		for i, f := range files {
			if i > 0 {
				md.WriteString(", ")
			}
			md.WriteString(filepath.Base(f))
		}
		md.WriteString("\n\n")
	}
	fmt.Print(md.String())
	if err := os.WriteFile(filepath.Join(*out, "report.md"), []byte(md.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}
