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

// Command kep-check checks that kep.yaml, KEP.md and, with -tree, the series
// name the same metrics. make verify runs it.
//
//	kep-check [-kep DIR] [-tree DIR -base v1.37.0 -head HEAD]
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"evented-volume-manager/pkg/kep"
)

func main() {
	dir := flag.String("kep", ".", "the directory of KEP.md and kep.yaml")
	tree := flag.String("tree", "", "compare with the metrics the series defines in this tree")
	base := flag.String("base", "", "with -tree, the release the series applies to")
	head := flag.String("head", "HEAD", "with -tree, the series' last commit")
	flag.Parse()
	if err := check(*dir, *tree, *base, *head); err != nil {
		fmt.Fprintln(os.Stderr, "kep-check:", err)
		os.Exit(1)
	}
}

func check(dir, tree, base, head string) error {
	sets, _, err := kep.Documented(dir)
	if err != nil {
		return err
	}
	if tree == "" {
		fmt.Println("no -tree: kep.yaml and KEP.md only")
	} else {
		defined, registered, err := kep.SeriesMetrics(tree, base, head)
		if err != nil {
			return err
		}
		sets["the series' Go files"], sets["their Register calls"] = defined, registered
		fmt.Printf("the series defines %d metrics: %s\n", len(defined), strings.Join(defined, ", "))
	}
	if err := kep.Compare(sets); err != nil {
		return err
	}
	fmt.Printf("kep.yaml's metrics and KEP.md's table agree%s\n", map[bool]string{true: ", and with the series' Go files", false: ""}[tree != ""])
	return nil
}
