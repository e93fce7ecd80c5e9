package budget

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// repo makes a git repository with a base commit and a head commit of the
// given files, and returns its directory.
func repo(t *testing.T, base, head map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	for i, files := range []map[string]string{base, head} {
		for name, src := range files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		run("add", "-A")
		run("commit", "-q", "--allow-empty", "-m", []string{"base", "head"}[i])
		run("tag", []string{"base", "head"}[i])
	}
	return dir
}

func TestExportedAndAddedLines(t *testing.T) {
	dir := repo(t,
		map[string]string{"a/old.go": "package a\n\ntype I interface {\n\tOld()\n}\n\nfunc Old() {}\n"},
		map[string]string{
			"a/old.go":       "package a\n\ntype I interface {\n\tOld()\n\tNew()\n}\n\nfunc Old() {}\n",
			"a/new.go":       "package a\n\nconst (\n\tC = 1\n\tc = 2\n)\n\nvar V, w int\n\ntype T struct{}\n\nfunc (*T) M()  {}\nfunc (T) m()   {}\nfunc (u) M()   {}\n\ntype u int\n\nfunc F() {}\n",
			"a/new_test.go":  "package a\n\nfunc TestX() {}\n",
			"test/e2e/x.go":  "package e2e\n\nfunc E() {}\n",
			"a/testing/f.go": "package testing\n\nfunc Fake() {}\n",
		})
	got, err := Exported(dir, "base", "head")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a/new.go: const C", "a/new.go: func F", "a/new.go: method T.M", "a/new.go: type T", "a/new.go: var V", "a/old.go: method I.New"}
	if !slices.Equal(got, want) {
		t.Errorf("Exported = %q, want %q", got, want)
	}
	lines, err := AddedLines(dir, "base", "head")
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + 18; lines != want {
		t.Errorf("AddedLines = %d, want %d (one in old.go, all of new.go)", lines, want)
	}
}

func TestWords(t *testing.T) {
	if got := Words([]byte("  one two\n\tthree |  four\n")); got != 5 {
		t.Errorf("Words = %d, want 5", got)
	}
}
