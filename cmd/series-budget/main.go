// Command series-budget prints what the patch series costs a reviewer
// against its budgets, and fails when a budget it enforces is exceeded:
// the non-test Go lines the series adds, in all and per pull request; the
// exported identifiers it adds; the metrics the KEP names; and KEP.md's
// words.
//
//	series-budget -tree DIR -base v1.37.0 -head HEAD -pr-tops 3,4,5 -kep DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"evented-volume-manager/pkg/budget"
	"evented-volume-manager/pkg/kep"
)

// The budgets.
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
	reportOnly := flag.String("report-only", "", "comma-separated budgets (total-lines, pr-lines, exported, metrics, words) to print without failing on them")
	verbose := flag.Bool("v", false, "list the exported identifiers")
	flag.Parse()
	if *tree == "" || *tops == "" {
		fmt.Fprintln(os.Stderr, "usage: series-budget -tree DIR -pr-tops N,N,... [-base REV] [-head REV] [-kep DIR] [-report-only total-lines,...] [-v]")
		os.Exit(2)
	}
	over, err := run(*tree, *base, *head, *tops, *kepDir, *verbose)
	if err != nil {
		fmt.Fprintln(os.Stderr, "series-budget:", err)
		os.Exit(2)
	}
	failed := false
	for _, b := range over {
		if strings.Contains(","+*reportOnly+",", ","+b+",") {
			fmt.Printf("budget %q exceeded, reported only (-report-only)\n", b)
			continue
		}
		fmt.Printf("budget %q exceeded\n", b)
		failed = true
	}
	if failed {
		os.Exit(1)
	}
}

// run prints each measure against its budget and returns the budgets
// exceeded.
func run(tree, base, head, tops, kepDir string, verbose bool) ([]string, error) {
	out, err := budget.Commits(tree, base, head)
	if err != nil {
		return nil, err
	}
	var over []string
	check := func(name string, value, limit int, what string) {
		mark := "ok"
		if value > limit {
			mark = "OVER"
			if len(over) == 0 || over[len(over)-1] != name {
				over = append(over, name)
			}
		}
		fmt.Printf("  %-4s %5d / %5d  %s\n", mark, value, limit, what)
	}

	total, err := budget.AddedLines(tree, base, head)
	if err != nil {
		return nil, err
	}
	check("total-lines", total, maxLines, "non-test Go lines the series adds")
	prev := base
	for i, top := range strings.Split(tops, ",") {
		n, err := strconv.Atoi(top)
		if err != nil || n < 1 || n > len(out) {
			return nil, fmt.Errorf("-pr-tops: %q is not a commit number of the %d-commit series", top, len(out))
		}
		lines, err := budget.AddedLines(tree, prev, out[n-1])
		if err != nil {
			return nil, err
		}
		check("pr-lines", lines, maxLinesPerPR, fmt.Sprintf("of them in PR %d (commits up to %d)", i+1, n))
		prev = out[n-1]
	}

	exported, err := budget.Exported(tree, base, head)
	if err != nil {
		return nil, err
	}
	check("exported", len(exported), maxExported, "exported identifiers the series adds")
	if verbose {
		for _, id := range exported {
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
	check("words", budget.Words(md), maxKEPWords, "words in KEP.md (wc -w)")
	return over, nil
}
