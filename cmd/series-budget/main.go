// Command series-budget prints what the patch series costs a reviewer against
// its budgets, and fails when one is exceeded.
//
//	series-budget -tree DIR -base v1.37.0 -head HEAD -pr-tops 3,4,5 -kep DIR
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"evented-volume-manager/pkg/kep"
)

const (
	maxLines      = 1800
	maxLinesPerPR = 700
	maxExported   = 40
	maxMetrics    = 3
	maxKEPWords   = 4000
)

func main() {
	tree := flag.String("tree", "", "the assembled Kubernetes tree (a git repository)")
	base := flag.String("base", "v1.37.0", "the release the series applies to")
	head := flag.String("head", "HEAD", "the series' top commit")
	tops := flag.String("pr-tops", "", "the number of each pull request's top commit, comma-separated, in merge order")
	kepDir := flag.String("kep", ".", "the directory of KEP.md and kep.yaml")
	verbose := flag.Bool("v", false, "list the exported identifiers")
	flag.Parse()
	if *tree == "" || *tops == "" {
		fmt.Fprintln(os.Stderr, "usage: series-budget -tree DIR -pr-tops N,N,... [-base REV] [-head REV] [-kep DIR] [-v]")
		os.Exit(2)
	}
	over, err := run(*tree, *base, *head, *tops, *kepDir, *verbose)
	if err != nil {
		fmt.Fprintln(os.Stderr, "series-budget:", err)
		os.Exit(2)
	}
	for _, b := range over {
		fmt.Printf("budget %q exceeded\n", b)
	}
	if len(over) > 0 {
		os.Exit(1)
	}
}

// run prints each measure against its budget and returns those exceeded.
func run(tree, base, head, tops, kepDir string, verbose bool) ([]string, error) {
	series, err := kep.Commits(tree, base, head)
	if err != nil {
		return nil, err
	}
	var over []string
	check := func(name string, value, limit int, what string) {
		mark := "ok"
		if value > limit {
			mark = "OVER"
			if !slices.Contains(over, name) {
				over = append(over, name)
			}
		}
		fmt.Printf("  %-4s %5d / %5d  %s\n", mark, value, limit, what)
	}
	total, err := kep.AddedLines(tree, base, head)
	if err != nil {
		return nil, err
	}
	check("total-lines", total, maxLines, "non-test Go lines the series adds")
	prev := base
	for i, top := range strings.Split(tops, ",") {
		n, err := strconv.Atoi(top)
		if err != nil || n < 1 || n > len(series) {
			return nil, fmt.Errorf("-pr-tops: %q is not a commit number of the %d-commit series", top, len(series))
		}
		lines, err := kep.AddedLines(tree, prev, series[n-1])
		if err != nil {
			return nil, err
		}
		check("pr-lines", lines, maxLinesPerPR, fmt.Sprintf("of them in PR %d (commits up to %d)", i+1, n))
		prev = series[n-1]
	}
	ids, err := kep.ExportedIdentifiers(tree, base, head)
	if err != nil {
		return nil, err
	}
	check("exported", len(ids), maxExported, "exported identifiers the series adds")
	if verbose {
		for _, id := range ids {
			fmt.Println("         " + id)
		}
	}
	sets, _, err := kep.Documented(kepDir)
	if err != nil {
		return nil, err
	}
	check("metrics", len(sets["kep.yaml's metrics"]), maxMetrics, "metrics (kep.yaml, which make verify checks against the code)")

	md, err := os.ReadFile(kepDir + "/KEP.md")
	if err != nil {
		return nil, err
	}
	check("words", len(bytes.Fields(md)), maxKEPWords, "words in KEP.md (wc -w)")
	return over, nil
}
