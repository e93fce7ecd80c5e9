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
	"os/exec"
	"strconv"
	"strings"
)

// gitConfig makes git's output the same whatever the user's configuration:
// a/ and b/ prefixes, unquoted non-ASCII paths, no colours, no pager.
var gitConfig = []string{
	"-c", "core.quotePath=false",
	"-c", "diff.noprefix=false",
	"-c", "diff.mnemonicPrefix=false",
	"-c", "color.ui=false",
	"--no-pager",
}

// git runs git in dir and returns its standard output. A failure's error
// carries git's standard error.
func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append(append([]string{"-C", dir}, gitConfig...), args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// gitLines runs git and splits its output into non-empty lines.
func gitLines(dir string, args ...string) ([]string, error) {
	out, err := git(dir, args...)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// Commit is one commit of a series.
type Commit struct {
	// SHA is the full commit hash.
	SHA string
	// Index is the commit's 1-based position in the series, the number of
	// the patch git format-patch writes for it.
	Index int
	// Subject is the first line of the commit message.
	Subject string
}

// Short names the commit the way the series' patches do: "0003 55278105ce82".
func (c Commit) Short() string {
	sha := c.SHA
	if len(sha) > 12 {
		sha = sha[:12]
	}
	return fmt.Sprintf("%04d %s", c.Index, sha)
}

// Commits lists the commits base..head in the order they apply, along the
// first-parent line.
func Commits(repo, base, head string) ([]Commit, error) {
	lines, err := gitLines(repo, "log", "--reverse", "--first-parent", "--format=%H %s", base+".."+head)
	if err != nil {
		return nil, err
	}
	commits := make([]Commit, 0, len(lines))
	for i, l := range lines {
		sha, subject, _ := strings.Cut(l, " ")
		commits = append(commits, Commit{SHA: sha, Index: i + 1, Subject: subject})
	}
	return commits, nil
}

// ResolveCommit returns the full hash rev names in repo.
func ResolveCommit(repo, rev string) (string, error) {
	out, err := git(repo, "rev-parse", "--verify", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// unquotePath undoes git's C-style quoting of a path with unusual characters.
func unquotePath(p string) string {
	if strings.HasPrefix(p, `"`) {
		if u, err := strconv.Unquote(p); err == nil {
			return u
		}
	}
	return p
}
