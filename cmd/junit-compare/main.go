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

// Command junit-compare writes the Markdown table of node e2e runs' JUnit
// reports (DIR/report/junit_*.xml). It exits 1 if a spec that passed in the
// first run did not pass in another.
//
//	junit-compare stock=DIR on=DIR
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"evented-volume-manager/pkg/junit"
)

func main() {
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: junit-compare NAME=DIR NAME=DIR...")
		os.Exit(2)
	}
	ok, err := junit.Compare(os.Stdout, flag.Args())
	if err == nil && !ok {
		err = errors.New("a spec that passed in the first run did not pass in another (listed above)")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "junit-compare:", err)
		os.Exit(1)
	}
}
