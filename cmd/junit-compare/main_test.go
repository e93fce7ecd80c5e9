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

package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	report := func(cases string) string {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "report"), 0o755); err != nil {
			t.Fatal(err)
		}
		xml := `<testsuites><testsuite name="E2eNode Suite">
<testcase name="[SynchronizedBeforeSuite]" status="passed"></testcase>
<testcase name="[It] left out by focus" status="skipped"><skipped message="skipped"></skipped></testcase>
` + cases + `</testsuite></testsuites>`
		if err := os.WriteFile(filepath.Join(dir, "report", "junit_01.xml"), []byte(xml), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	stock := report(`<testcase name="[It] a [NodeConformance]" status="passed"></testcase>
<testcase name="[It] b" status="passed"></testcase>
<testcase name="[It] c" status="skipped"><skipped message="skipped - needs systemd"></skipped></testcase>
<testcase name="[It] d" status="failed"><failure message="x" type="failed"></failure></testcase>`)
	same := report(`<testcase name="[It] a [NodeConformance]" status="passed"></testcase>
<testcase name="[It] b" status="passed"></testcase>
<testcase name="[It] c" status="skipped"><skipped message="skipped - needs systemd"></skipped></testcase>
<testcase name="[It] d" status="timedout"></testcase>`)
	worse := report(`<testcase name="[It] a [NodeConformance]" status="passed"></testcase>
<testcase name="[It] b" status="failed"><failure message="x" type="failed"></failure></testcase>
<testcase name="[It] d" status="passed"></testcase>`)

	for _, tc := range []struct {
		name   string
		runs   []string
		wantOK bool
		want   []string
	}{
		{name: "same passes", runs: []string{"stock=" + stock, "on=" + same}, wantOK: true,
			want: []string{"| stock | 4 | 2 | 1 | 1 |", "| on | 4 | 2 | 1 | 1 |",
				"- d: failed on stock, timedout on on", "- c: needs systemd (stock, on)", "- d (stock, on)"}},
		{name: "a pass lost", runs: []string{"stock=" + stock, "on=" + worse}, wantOK: false,
			want: []string{"| on | 3 | 2 | 1 | 0 |", "- b: passed on stock, failed on on", "- c: skipped on stock, not run on on",
				"- d: failed on stock, passed on on", "- b (on)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			ok, err := compare(&b, tc.runs)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.wantOK {
				t.Errorf("ok = %t, want %t", ok, tc.wantOK)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w+"\n") {
					t.Errorf("the table lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
	if _, err := compare(io.Discard, []string{"stock=" + t.TempDir()}); err == nil {
		t.Error("a directory without a report: no error")
	}
}
