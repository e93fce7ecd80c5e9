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

package series

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// A series that reviews well never adds a line that one of its later commits
// deletes or changes: the reviewer of the earlier commit would read code that
// does not ship. Churn finds such lines the way git blame does: every line a
// commit deletes is blamed in the commit's parent, and a line whose blame is
// a commit of the series is churn between the two commits.

// FileCount is a number of lines in one file.
type FileCount struct {
	// Path is the file's path in the parent of the deleting commit.
	Path string
	// Lines is how many lines.
	Lines int
	// WholeFile is set when the deleting commit removes the whole file.
	WholeFile bool
}

// ChurnPair is the churn between two commits of a series: lines that Adder
// adds and the later Deleter deletes or changes.
type ChurnPair struct {
	Adder, Deleter Commit
	// Lines is the number of such lines.
	Lines int
	// Files are the files they are in, the most lines first.
	Files []FileCount
}

// Rename is a file that one commit of a series adds and a later commit moves.
// Its unchanged lines are not churn; the lines the move changes are counted
// like any others.
type Rename struct {
	Adder, Renamer Commit
	From, To       string
}

// ChurnReport is what Churn finds.
type ChurnReport struct {
	// Commits are the series' commits in order.
	Commits []Commit
	// Pairs are the pairs of commits with churn, in the order of the
	// deleting commit, then of the adding commit.
	Pairs []ChurnPair
	// Lines is the total churn, the sum over Pairs.
	Lines int
	// Renames are the series' files that a later commit of the series moves.
	Renames []Rename
}

// deletion is a file a commit deletes lines of, with the line ranges in the
// file as it is in the commit's parent.
type deletion struct {
	oldPath, newPath string // newPath is "" for a file the commit deletes
	ranges           [][2]int
	lines            int
	renamed          bool
}

var hunkRE = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// diffPath turns the path of a "--- a/x" or "+++ b/x" line into x, or "" for
// /dev/null.
func diffPath(s, prefix string) string {
	s = strings.TrimSuffix(s, "\t")
	s = unquotePath(s)
	if s == "/dev/null" {
		return ""
	}
	return strings.TrimPrefix(s, prefix)
}

// parseDeletions reads the output of git diff -U0 -M: for every file, its
// old and new paths and the line ranges the diff deletes from the old one.
// Files that are only added are left out; pure renames are kept, with no
// ranges.
func parseDeletions(out []byte) ([]deletion, error) {
	var files []deletion
	var cur *deletion
	flush := func() {
		if cur != nil && (cur.lines > 0 || cur.renamed) && cur.oldPath != "" {
			files = append(files, *cur)
		}
		cur = nil
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	oldLeft, newLeft := 0, 0 // lines left in the current hunk
	for sc.Scan() {
		line := sc.Text()
		if oldLeft > 0 || newLeft > 0 {
			switch {
			case strings.HasPrefix(line, "-"):
				oldLeft--
			case strings.HasPrefix(line, "+"):
				newLeft--
			case strings.HasPrefix(line, `\`): // "\ No newline at end of file"
			default:
				return nil, fmt.Errorf("unexpected line in a -U0 hunk: %q", line)
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "diff --git "):
			flush()
			cur = &deletion{}
			// The paths come from the lines below; this is the fallback
			// for a pure rename or a mode change, which have no ---/+++.
			rest := strings.TrimPrefix(line, "diff --git ")
			if i := strings.LastIndex(rest, " b/"); i >= 0 && !strings.HasPrefix(rest, `"`) {
				cur.oldPath = strings.TrimPrefix(rest[:i], "a/")
				cur.newPath = rest[i+3:]
			}
		case cur == nil:
		case strings.HasPrefix(line, "rename from "):
			cur.oldPath = unquotePath(strings.TrimPrefix(line, "rename from "))
			cur.renamed = true
		case strings.HasPrefix(line, "rename to "):
			cur.newPath = unquotePath(strings.TrimPrefix(line, "rename to "))
			cur.renamed = true
		case strings.HasPrefix(line, "new file mode "):
			cur.oldPath = ""
		case strings.HasPrefix(line, "deleted file mode "):
			cur.newPath = ""
		case strings.HasPrefix(line, "--- "):
			cur.oldPath = diffPath(strings.TrimPrefix(line, "--- "), "a/")
		case strings.HasPrefix(line, "+++ "):
			cur.newPath = diffPath(strings.TrimPrefix(line, "+++ "), "b/")
		case strings.HasPrefix(line, "@@ "):
			m := hunkRE.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("bad hunk header %q", line)
			}
			start, _ := strconv.Atoi(m[1])
			oldLeft, newLeft = 1, 1
			if m[2] != "" {
				oldLeft, _ = strconv.Atoi(m[2])
			}
			if m[4] != "" {
				newLeft, _ = strconv.Atoi(m[4])
			}
			if oldLeft > 0 {
				cur.ranges = append(cur.ranges, [2]int{start, oldLeft})
				cur.lines += oldLeft
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	flush()
	return files, nil
}

// blameLine is one line of git blame --porcelain: the commit it blames and
// the path the line had in that commit.
type blameLine struct {
	sha, path string
}

// parseBlame reads git blame --porcelain.
func parseBlame(r io.Reader) ([]blameLine, error) {
	var lines []blameLine
	paths := map[string]string{}
	sha := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "\t"):
			if sha == "" {
				return nil, fmt.Errorf("blame line before any commit: %q", l)
			}
			lines = append(lines, blameLine{sha: sha, path: paths[sha]})
		case strings.HasPrefix(l, "filename "):
			paths[sha] = unquotePath(strings.TrimPrefix(l, "filename "))
		default:
			if f := strings.Fields(l); len(f) >= 3 && len(f[0]) >= 40 && isHex(f[0]) {
				sha = f[0]
			}
		}
	}
	return lines, sc.Err()
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// blameJob is one file one commit deletes lines of that earlier commits of
// the series touched.
type blameJob struct {
	deleter int // index into the series
	parent  string
	del     deletion
	result  []blameLine
	err     error
}

// Churn finds the lines that a commit of base..head adds and a later commit
// of it deletes or changes.
func Churn(repo, base, head string) (*ChurnReport, error) {
	commits, err := Commits(repo, base, head)
	if err != nil {
		return nil, err
	}
	rep := &ChurnReport{Commits: commits}
	index := map[string]int{}
	for i, c := range commits {
		index[c.SHA] = i
	}

	// The files each commit deletes lines of, and who added the series'
	// files, followed through renames.
	var jobs []*blameJob
	addedBy := map[string]int{} // path -> index of the commit that added it
	for i, c := range commits {
		parent := c.SHA + "^"
		out, err := git(repo, "diff", "-U0", "-M", "--no-color", "--no-ext-diff", "--no-textconv", parent, c.SHA)
		if err != nil {
			return nil, err
		}
		dels, err := parseDeletions(out)
		if err != nil {
			return nil, fmt.Errorf("diff of %s: %w", c.Short(), err)
		}
		added, err := gitLines(repo, "diff", "--name-only", "--diff-filter=A", "-M", parent, c.SHA)
		if err != nil {
			return nil, err
		}
		// Files the parent has that differ from base: only in those can a
		// line come from the series.
		var touched map[string]bool
		if i > 0 {
			names, err := gitLines(repo, "diff", "--name-only", "--no-renames", base, parent)
			if err != nil {
				return nil, err
			}
			touched = make(map[string]bool, len(names))
			for _, n := range names {
				touched[unquotePath(n)] = true
			}
		}
		for _, d := range dels {
			if a, ok := addedBy[d.oldPath]; ok && d.renamed {
				rep.Renames = append(rep.Renames, Rename{Adder: commits[a], Renamer: c, From: d.oldPath, To: d.newPath})
			}
			if a, ok := addedBy[d.oldPath]; ok {
				delete(addedBy, d.oldPath)
				if d.newPath != "" {
					addedBy[d.newPath] = a
				}
			}
			if d.lines > 0 && touched[d.oldPath] {
				jobs = append(jobs, &blameJob{deleter: i, parent: parent, del: d})
			}
		}
		for _, p := range added {
			addedBy[unquotePath(p)] = i
		}
	}

	// Blame every job, a few at a time.
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2*runtime.NumCPU())
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func(j *blameJob) {
			defer func() { <-sem; wg.Done() }()
			args := []string{"blame", "--porcelain"}
			for _, r := range j.del.ranges {
				args = append(args, "-L", fmt.Sprintf("%d,+%d", r[0], r[1]))
			}
			args = append(args, base+".."+j.parent, "--", j.del.oldPath)
			out, err := git(repo, args...)
			if err != nil {
				j.err = err
				return
			}
			j.result, j.err = parseBlame(bytes.NewReader(out))
		}(j)
	}
	wg.Wait()

	type key struct{ adder, deleter int }
	type fileKey struct {
		key
		path string
	}
	pairs := map[key]int{}
	files := map[fileKey]int{}
	whole := map[fileKey]bool{}
	for _, j := range jobs {
		if j.err != nil {
			return nil, fmt.Errorf("blame of %s in %s: %w", j.del.oldPath, commits[j.deleter].Short(), j.err)
		}
		for _, bl := range j.result {
			a, ok := index[bl.sha]
			if !ok {
				continue // upstream's line
			}
			k := key{a, j.deleter}
			fk := fileKey{k, j.del.oldPath}
			pairs[k]++
			files[fk]++
			whole[fk] = j.del.newPath == ""
		}
	}
	for k, n := range pairs {
		p := ChurnPair{Adder: commits[k.adder], Deleter: commits[k.deleter], Lines: n}
		for fk, fn := range files {
			if fk.key == k {
				p.Files = append(p.Files, FileCount{Path: fk.path, Lines: fn, WholeFile: whole[fk]})
			}
		}
		sort.Slice(p.Files, func(a, b int) bool {
			if p.Files[a].Lines != p.Files[b].Lines {
				return p.Files[a].Lines > p.Files[b].Lines
			}
			return p.Files[a].Path < p.Files[b].Path
		})
		rep.Pairs = append(rep.Pairs, p)
		rep.Lines += n
	}
	sort.Slice(rep.Pairs, func(a, b int) bool {
		pa, pb := rep.Pairs[a], rep.Pairs[b]
		if pa.Deleter.Index != pb.Deleter.Index {
			return pa.Deleter.Index < pb.Deleter.Index
		}
		return pa.Adder.Index < pb.Adder.Index
	})
	return rep, nil
}

// WriteChurn prints r: one line per pair of commits with the files the most
// of its lines are in (at most topFiles of them), the renames, and the total.
func WriteChurn(w io.Writer, r *ChurnReport, topFiles int) {
	for _, p := range r.Pairs {
		fmt.Fprintf(w, "commit %s adds %s that commit %s deletes:", p.Adder.Short(), plural(p.Lines, "line"), p.Deleter.Short())
		for i, f := range p.Files {
			if topFiles > 0 && i == topFiles {
				fmt.Fprintf(w, " and %s", plural(len(p.Files)-topFiles, "more file"))
				break
			}
			sep := ","
			if i == 0 {
				sep = ""
			}
			whole := ""
			if f.WholeFile {
				whole = ", whole file"
			}
			fmt.Fprintf(w, "%s %s (%d%s)", sep, f.Path, f.Lines, whole)
		}
		fmt.Fprintln(w)
	}
	for _, rn := range r.Renames {
		fmt.Fprintf(w, "commit %s moves %s, which commit %s adds, to %s (its unchanged lines are not counted)\n",
			rn.Renamer.Short(), rn.From, rn.Adder.Short(), rn.To)
	}
	if len(r.Pairs) > 0 {
		involved := map[int]bool{}
		for _, p := range r.Pairs {
			involved[p.Adder.Index], involved[p.Deleter.Index] = true, true
		}
		fmt.Fprintln(w, "the commits:")
		for _, c := range r.Commits {
			if involved[c.Index] {
				fmt.Fprintf(w, "  %s %s\n", c.Short(), c.Subject)
			}
		}
	}
	fmt.Fprintf(w, "total: %s added by one commit of the series and deleted or changed by a later one, in %s (%s checked)\n",
		plural(r.Lines, "line"), plural(len(r.Pairs), "pair")+" of commits", plural(len(r.Commits), "commit"))
}

// plural is "1 line" or "2 lines".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
