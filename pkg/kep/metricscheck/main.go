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

// Command metricscheck checks the KEP against the series:
//
//	metricscheck -repo DIR -base REV [-head REV] [-kep KEP.md] [-kepyaml kep.yaml]
//
// It finds the metrics that the Go files the series adds or changes
// (BASE..HEAD, tests excluded) define with k8s.io/component-base/metrics,
// and fails when KEP.md's metrics table or kep.yaml's metrics list names
// another set, or another type or labels, or when kep.yaml does not parse
// or does not name the feature gate. Exit status 1 means a difference, 2
// that the check could not run.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"sort"
	"strings"

	"evented-volume-manager/pkg/kep"
)

func main() {
	repo := flag.String("repo", ".", "the repository that holds the series")
	base := flag.String("base", "", "the release the series applies to (required)")
	head := flag.String("head", "HEAD", "the series' last commit")
	kepMD := flag.String("kep", "KEP.md", "the KEP")
	kepYAML := flag.String("kepyaml", "kep.yaml", "the KEP's metadata")
	gate := flag.String("gate", "EventedVolumeManager", "the feature gate kep.yaml must name")
	component := flag.String("component", "kubelet", "the component kep.yaml must name for the gate")
	flag.Parse()
	if *base == "" {
		fail("-base is required")
	}

	registered, files, err := seriesMetrics(*repo, *base, *head)
	if err != nil {
		fail("%v", err)
	}
	md, err := os.ReadFile(*kepMD)
	if err != nil {
		fail("%v", err)
	}
	table, err := kep.MetricsTable(md)
	if err != nil {
		fail("%v", err)
	}
	y, err := os.ReadFile(*kepYAML)
	if err != nil {
		fail("%v", err)
	}
	var problems []string
	var listed []string
	meta, err := kep.ParseMetadata(y)
	if err != nil {
		problems = append(problems, err.Error())
	} else {
		problems = append(problems, meta.Check(*gate, *component)...)
		listed = meta.Metrics
	}
	if meta != nil {
		problems = append(problems, kep.Compare(registered, table, listed)...)
	} else {
		// Compare KEP.md alone: kep.yaml's failure is reported above.
		problems = append(problems, kep.Compare(registered, table, namesOf(registered))...)
	}

	for _, m := range registered {
		if !m.Registered {
			problems = append(problems, fmt.Sprintf("%s (%s) is defined but never registered: the kubelet does not expose it", m.Name, m.Pos))
		}
	}

	fmt.Printf("%d metrics defined in the %d Go files the series adds or changes (tests excluded):\n", len(registered), files)
	for _, m := range registered {
		labels := "no labels"
		if len(m.Labels) > 0 {
			labels = "labels " + strings.Join(m.Labels, ",")
		}
		fmt.Printf("  %s (%s, %s)\n", m.Name, m.Type, labels)
	}
	fmt.Printf("KEP.md's metrics table has %d rows, kep.yaml's metrics %d names\n", len(table), len(listed))
	if len(problems) > 0 {
		fmt.Printf("%d differences:\n", len(problems))
		for _, p := range problems {
			fmt.Printf("  %s\n", p)
		}
		os.Exit(1)
	}
	fmt.Println("KEP.md, kep.yaml and the series agree")
}

// namesOf lists the metrics' names; when kep.yaml does not parse, its list
// is not compared a second time.
func namesOf(ms []kep.Metric) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

// seriesMetrics finds the metrics in the non-test Go files that base..head
// adds or changes, read at head; each file's package supplies the
// constants. A metric that a changed file already defined at base is
// upstream's, not the series'. It returns the metrics and the number of
// files read for them.
func seriesMetrics(repo, base, head string) ([]kep.Metric, int, error) {
	out, err := git(repo, "diff", "--name-only", "--diff-filter=ACMR", base+".."+head, "--", "*.go")
	if err != nil {
		return nil, 0, err
	}
	changed := map[string]bool{}
	for _, f := range strings.Fields(string(out)) {
		if !strings.HasSuffix(f, "_test.go") {
			changed[f] = true
		}
	}
	atHead, err := metricsAt(repo, head, changed)
	if err != nil {
		return nil, 0, err
	}
	atBase, err := metricsAt(repo, base, changed)
	if err != nil {
		return nil, 0, err
	}
	upstream := map[string]bool{}
	for _, m := range atBase {
		upstream[m.Pos[:strings.LastIndex(m.Pos, ":")]+" "+m.Name] = true
	}
	var all []kep.Metric
	for _, m := range atHead {
		if !upstream[m.Pos[:strings.LastIndex(m.Pos, ":")]+" "+m.Name] {
			all = append(all, m)
		}
	}
	return all, len(changed), nil
}

// metricsAt finds the metrics that the files in files define at rev, with
// their packages' constants; files missing at rev are skipped.
func metricsAt(repo, rev string, files map[string]bool) ([]kep.Metric, error) {
	dirs := map[string]bool{}
	for f := range files {
		dirs[path.Dir(f)] = true
	}
	sortedDirs := make([]string, 0, len(dirs))
	for d := range dirs {
		sortedDirs = append(sortedDirs, d)
	}
	sort.Strings(sortedDirs)
	var all []kep.Metric
	for _, dir := range sortedDirs {
		ls, err := git(repo, "ls-tree", "--name-only", rev, "--", dir+"/")
		if err != nil {
			return nil, err
		}
		var pkg []kep.SourceFile
		for _, f := range strings.Fields(string(ls)) {
			if !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := git(repo, "show", rev+":"+f)
			if err != nil {
				return nil, err
			}
			pkg = append(pkg, kep.SourceFile{Path: f, Src: src})
		}
		ms, err := kep.RegisteredMetrics(pkg, func(p string) bool { return files[p] })
		if err != nil {
			return nil, fmt.Errorf("at %s: %w", rev, err)
		}
		all = append(all, ms...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all, nil
}

func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "metricscheck: "+format+"\n", args...)
	os.Exit(2)
}
