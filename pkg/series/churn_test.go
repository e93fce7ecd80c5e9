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
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// pairString is "1->3 a.txt:2 b.txt:4(whole)".
func pairString(p ChurnPair) string {
	s := fmt.Sprintf("%d->%d", p.Adder.Index, p.Deleter.Index)
	for _, f := range p.Files {
		s += fmt.Sprintf(" %s:%d", f.Path, f.Lines)
		if f.WholeFile {
			s += "(whole)"
		}
	}
	return s
}

func TestChurn(t *testing.T) {
	upstream := numbered("upstream", 10)
	for _, tc := range []struct {
		name string
		// base adds to the release, after upstream.txt.
		base func(r *testRepo)
		// series makes the series' commits.
		series      func(r *testRepo)
		wantPairs   []string
		wantLines   int
		wantRenames []string
	}{{
		name: "clean series",
		series: func(r *testRepo) {
			r.write("new.txt", numbered("new", 5)...)
			r.commit("one: add a file")
			// Appends to the series' file, changes and deletes upstream's
			// lines: none of it is churn.
			r.write("new.txt", append(numbered("new", 5), "new 6", "new 7")...)
			u := append([]string{}, upstream...)
			u[2] = "upstream 3, changed"
			r.write("upstream.txt", append(u[:5], u[6:]...)...)
			r.commit("two: grow it, change upstream")
			r.write("other.txt", "other")
			r.commit("three: another file")
		},
	}, {
		name: "upstream history before the release",
		base: func(r *testRepo) {
			// An older upstream commit: its lines are upstream's too.
			r.write("old.txt", numbered("old", 4)...)
			r.commit("upstream: old")
			r.write("old.txt", append(numbered("old", 4), "old 5")...)
		},
		series: func(r *testRepo) {
			r.write("new.txt", "new")
			r.commit("one: add a file")
			r.write("old.txt", "old 1", "old 5")
			r.commit("two: delete old lines")
		},
	}, {
		name: "add then delete",
		series: func(r *testRepo) {
			u := append([]string{}, upstream...)
			u = append(u[:3], append([]string{"added 1", "added 2", "added 3"}, u[3:]...)...)
			r.write("upstream.txt", u...)
			r.commit("one: add three lines to upstream's file")
			r.write("unrelated.txt", "x")
			r.commit("two: unrelated")
			// Change one added line, delete another and one of upstream's.
			u[3] = "added 1, changed"
			u = append(u[:4], u[5:]...)
			u = append(u[:0], u[1:]...)
			r.write("upstream.txt", u...)
			r.commit("three: change and delete")
		},
		wantPairs: []string{"1->3 upstream.txt:2"},
		wantLines: 2,
	}, {
		name: "a deleted line that looks like a diff header",
		series: func(r *testRepo) {
			r.write("script.lua", "-- a comment", "--- another", "x = 1")
			r.commit("one: add a script")
			r.write("script.lua", "x = 1")
			r.commit("two: drop its comments")
		},
		wantPairs: []string{"1->2 script.lua:2"},
		wantLines: 2,
	}, {
		name: "file added then deleted whole",
		series: func(r *testRepo) {
			r.write("pkg/tmp.go", numbered("tmp", 4)...)
			r.commit("one: add a file")
			r.write("pkg/keep.go", "keep")
			r.commit("two: add another")
			r.remove("pkg/tmp.go")
			r.commit("three: delete the first")
		},
		wantPairs: []string{"1->3 pkg/tmp.go:4(whole)"},
		wantLines: 4,
	}, {
		name: "rename",
		series: func(r *testRepo) {
			r.write("a/file.txt", numbered("line", 20)...)
			r.commit("one: add a file")
			// Move it and change one line: only that line is churn.
			r.move("a/file.txt", "b/file.txt")
			lines := numbered("line", 20)
			lines[9] = "line 10, changed"
			r.write("b/file.txt", lines...)
			r.commit("two: move it")
			// Blame follows the move back to the first commit.
			lines = append(lines[:0], lines[1:]...)
			r.write("b/file.txt", lines...)
			r.commit("three: delete its first line")
		},
		wantPairs:   []string{"1->2 a/file.txt:1", "1->3 b/file.txt:1"},
		wantLines:   2,
		wantRenames: []string{"2: a/file.txt -> b/file.txt, added by 1"},
	}, {
		name: "several pairs",
		series: func(r *testRepo) {
			r.write("x.txt", numbered("x", 3)...)
			r.commit("one: x")
			r.write("y.txt", numbered("y", 3)...)
			r.commit("two: y")
			r.write("x.txt", "x 1")
			r.write("y.txt", "y 3")
			r.commit("three: trim both")
			r.remove("x.txt")
			r.commit("four: drop x")
		},
		wantPairs: []string{"1->3 x.txt:2", "2->3 y.txt:2", "1->4 x.txt:1(whole)"},
		wantLines: 5,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRepo(t)
			r.write("upstream.txt", upstream...)
			if tc.base != nil {
				tc.base(r)
			}
			r.commit("Release")
			r.git("tag", "v1.0.0")
			tc.series(r)

			rep, err := Churn(r.dir, "v1.0.0", "HEAD")
			if err != nil {
				t.Fatal(err)
			}
			var pairs, renames []string
			for _, p := range rep.Pairs {
				pairs = append(pairs, pairString(p))
			}
			for _, rn := range rep.Renames {
				renames = append(renames, fmt.Sprintf("%d: %s -> %s, added by %d", rn.Renamer.Index, rn.From, rn.To, rn.Adder.Index))
			}
			if !reflect.DeepEqual(pairs, tc.wantPairs) {
				t.Errorf("pairs = %q, want %q", pairs, tc.wantPairs)
			}
			if rep.Lines != tc.wantLines {
				t.Errorf("lines = %d, want %d", rep.Lines, tc.wantLines)
			}
			if !reflect.DeepEqual(renames, tc.wantRenames) {
				t.Errorf("renames = %q, want %q", renames, tc.wantRenames)
			}

			var out bytes.Buffer
			WriteChurn(&out, rep, 3)
			want := fmt.Sprintf("total: %s added", plural(tc.wantLines, "line"))
			if !strings.Contains(out.String(), want) {
				t.Errorf("report lacks %q:\n%s", want, out.String())
			}
			if tc.wantLines > 0 && !strings.Contains(out.String(), " that commit ") {
				t.Errorf("report names no pair of commits:\n%s", out.String())
			}
		})
	}
}

func TestWriteChurn(t *testing.T) {
	c := func(i int, s string) Commit {
		return Commit{SHA: fmt.Sprintf("%040d", i), Index: i, Subject: s}
	}
	r := &ChurnReport{
		Commits: []Commit{c(1, "one: a"), c(2, "two: b"), c(3, "three: c")},
		Pairs: []ChurnPair{{
			Adder: c(1, "one: a"), Deleter: c(3, "three: c"), Lines: 7,
			Files: []FileCount{{"a.go", 3, true}, {"b.go", 2, false}, {"c.go", 1, false}, {"d.go", 1, false}},
		}},
		Lines: 7,
	}
	var out bytes.Buffer
	WriteChurn(&out, r, 2)
	want := `commit 0001 000000000000 adds 7 lines that commit 0003 000000000000 deletes: a.go (3, whole file), b.go (2) and 2 more files
the commits:
  0001 000000000000 one: a
  0003 000000000000 three: c
total: 7 lines added by one commit of the series and deleted or changed by a later one, in 1 pair of commits (3 commits checked)
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestParseDeletions(t *testing.T) {
	diff := `diff --git a/a.txt b/a.txt
index 1111111..2222222 100644
--- a/a.txt
+++ b/a.txt
@@ -2 +1,0 @@
--- not a header
@@ -5,2 +4,3 @@ func f() {
-x
-y
+++ not a header either
+z
+w
\ No newline at end of file
diff --git a/new.txt b/new.txt
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new.txt
@@ -0,0 +1 @@
+new
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 4444444..0000000
--- a/gone.txt
+++ /dev/null
@@ -1,3 +0,0 @@
-1
-2
-3
diff --git a/old name.txt b/moved/new name.txt
similarity index 100%
rename from old name.txt
rename to moved/new name.txt
`
	got, err := parseDeletions([]byte(diff))
	if err != nil {
		t.Fatal(err)
	}
	want := []deletion{
		{oldPath: "a.txt", newPath: "a.txt", ranges: [][2]int{{2, 1}, {5, 2}}, lines: 3},
		{oldPath: "gone.txt", ranges: [][2]int{{1, 3}}, lines: 3},
		{oldPath: "old name.txt", newPath: "moved/new name.txt", renamed: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}
