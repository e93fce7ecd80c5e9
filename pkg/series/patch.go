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
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Line is one line of a patch that the patch adds, either to a file or to the
// commit message.
type Line struct {
	// File is the path the line is added to, or "" for the commit message.
	File string
	// Number is the line's 1-based position in the patch file.
	Number int
	// Text is the line without its leading '+'.
	Text string
}

// Patch is one git format-patch file.
type Patch struct {
	// Name is the patch's file name.
	Name string
	// Author is the From: header.
	Author string
	// Subject is the Subject: header without its "[PATCH ...]" prefix.
	Subject string
	// Body is the commit message after the subject.
	Body string
	// Files are the paths the patch changes, as named on the b/ side.
	Files []string
	// Added are the lines the patch adds, the commit message's included.
	Added []Line
}

// ErrNotAPatch is returned for input that has no format-patch headers.
var ErrNotAPatch = errors.New("not a git format-patch file")

// Parse reads one git format-patch file.
func Parse(name string, r io.Reader) (*Patch, error) {
	p := &Patch{Name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	lines := &lineScanner{sc: sc}
	if err := p.parseHeaders(lines); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p.parseDiffs(lines, p.parseBody(lines))
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

// lineScanner reads a patch's lines and counts them.
type lineScanner struct {
	sc *bufio.Scanner
	n  int
}

// next returns the next line, and false at the end.
func (s *lineScanner) next() (string, bool) {
	if !s.sc.Scan() {
		return "", false
	}
	s.n++
	return s.sc.Text(), true
}

// parseHeaders reads the headers, up to the first empty line. Continuation
// lines start with white space.
func (p *Patch) parseHeaders(lines *lineScanner) error {
	var last *string
	for {
		line, ok := lines.next()
		if !ok {
			return fmt.Errorf("%w: no end of headers", ErrNotAPatch)
		}
		if line == "" {
			break
		}
		switch {
		case strings.HasPrefix(line, "From: "):
			p.Author = strings.TrimPrefix(line, "From: ")
			last = &p.Author
		case strings.HasPrefix(line, "Subject: "):
			p.Subject = strings.TrimPrefix(line, "Subject: ")
			last = &p.Subject
		case (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")) && last != nil:
			*last += " " + strings.TrimSpace(line)
		default:
			last = nil
		}
	}
	if p.Subject == "" || p.Author == "" {
		return fmt.Errorf("%w: missing From: or Subject:", ErrNotAPatch)
	}
	p.Subject = stripPatchPrefix(p.Subject)
	return nil
}

// parseBody reads the commit message, which runs to the "---" line that
// starts the diffstat, and reports whether a diff started instead.
func (p *Patch) parseBody(lines *lineScanner) (inDiff bool) {
	var body []string
	for {
		line, ok := lines.next()
		if !ok || line == "---" {
			break
		}
		if strings.HasPrefix(line, "diff --git ") {
			inDiff = true
			p.Files = append(p.Files, diffTarget(line))
			break
		}
		body = append(body, line)
		p.Added = append(p.Added, Line{Number: lines.n, Text: line})
	}
	p.Body = strings.TrimSpace(strings.Join(body, "\n"))
	return inDiff
}

// parseDiffs reads the diffs. Only lines inside hunks count as added lines.
func (p *Patch) parseDiffs(lines *lineScanner, inDiff bool) {
	file := ""
	if len(p.Files) > 0 {
		file = p.Files[0]
	}
	inHunk := false
	for {
		line, ok := lines.next()
		if !ok {
			return
		}
		switch {
		case strings.HasPrefix(line, "diff --git "):
			inDiff, inHunk = true, false
			file = diffTarget(line)
			p.Files = append(p.Files, file)
		case !inDiff:
			// diffstat
		case strings.HasPrefix(line, "@@"):
			inHunk = true
		case line == "-- ":
			// The signature separator ends the last diff.
			inDiff, inHunk = false, false
		case inHunk && strings.HasPrefix(line, "+"):
			p.Added = append(p.Added, Line{File: file, Number: lines.n, Text: line[1:]})
		}
	}
}

// ParseFile reads the patch at path.
func ParseFile(path string) (*Patch, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return Parse(filepath.Base(path), f)
}

// ReadDir reads every *.patch file in dir, in name order, which is the order
// git am applies them in.
func ReadDir(dir string) ([]*Patch, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.patch"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	patches := make([]*Patch, 0, len(names))
	for _, name := range names {
		p, err := ParseFile(name)
		if err != nil {
			return nil, err
		}
		patches = append(patches, p)
	}
	return patches, nil
}

// stripPatchPrefix removes a leading "[PATCH ...]" tag from a subject.
func stripPatchPrefix(subject string) string {
	if strings.HasPrefix(subject, "[") {
		if i := strings.Index(subject, "]"); i >= 0 {
			return strings.TrimSpace(subject[i+1:])
		}
	}
	return subject
}

// diffTarget returns the b/ path of a "diff --git a/x b/y" line.
func diffTarget(line string) string {
	rest := strings.TrimPrefix(line, "diff --git ")
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return rest
}
