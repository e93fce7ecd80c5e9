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

package junit

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// runDir writes reports (file name to XML) under a new run directory.
func runDir(t *testing.T, reports map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "report"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, xml := range reports {
		if err := os.WriteFile(filepath.Join(dir, "report", name), []byte(xml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// suite is a JUnit report as Ginkgo writes one: a setup node, a spec focus left out, cases.
func suite(cases string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="E2eNode Suite">
<testcase name="[SynchronizedBeforeSuite]" status="passed"></testcase>
<testcase name="[It] left out by focus" status="skipped"><skipped message="skipped"></skipped></testcase>
` + cases + `</testsuite></testsuites>`
}

// TestRead reads reports as Ginkgo writes them.
func TestRead(t *testing.T) {
	got, err := Read(runDir(t, map[string]string{
		"junit_01.xml": suite(`<testcase name="[It] [sig-storage] ConfigMap should be consumable" status="passed"></testcase>
<testcase name="[It] [sig-storage] HostPath should give a volume the correct mode" status="failed"><failure message="timed out"></failure></testcase>
<testcase name="[It] skipped while it ran" status="skipped"><skipped message="skipped - Only supported for providers [gce]"></skipped></testcase>`),
		"junit_02.xml": `<testsuites><testsuite><testcase name="[It] from the second file" status="timedout"></testcase></testsuite></testsuites>`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Spec{
		"[sig-storage] ConfigMap should be consumable":                 {Status: "passed"},
		"[sig-storage] HostPath should give a volume the correct mode": {Status: "failed"},
		"skipped while it ran":                                         {Status: "skipped", Skipped: "Only supported for providers [gce]"},
		"from the second file":                                         {Status: "timedout"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Read = %v, want %v", got, want)
	}
	for dir, want := range map[string]string{
		t.TempDir(): "no JUnit report under",
		runDir(t, map[string]string{"junit_01.xml": "<testsuites><testsuite>"}): filepath.Join("report", "junit_01.xml") + ":",
	} {
		if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Read(%s): %v, want an error with %q", dir, err, want)
		}
	}
}

func TestCompare(t *testing.T) {
	run := func(name, cases string) string {
		return name + "=" + runDir(t, map[string]string{"junit_01.xml": suite(cases)})
	}
	stock := run("stock", `<testcase name="[It] a [NodeConformance]" status="passed"></testcase>
<testcase name="[It] b" status="passed"></testcase>
<testcase name="[It] c" status="skipped"><skipped message="skipped - needs systemd"></skipped></testcase>
<testcase name="[It] d" status="failed"><failure message="x" type="failed"></failure></testcase>`)
	same := run("on", `<testcase name="[It] a [NodeConformance]" status="passed"></testcase>
<testcase name="[It] b" status="passed"></testcase>
<testcase name="[It] c" status="skipped"><skipped message="skipped - needs systemd"></skipped></testcase>
<testcase name="[It] d" status="timedout"></testcase>`)
	worse := run("on", `<testcase name="[It] a [NodeConformance]" status="passed"></testcase>
<testcase name="[It] b" status="failed"><failure message="x" type="failed"></failure></testcase>
<testcase name="[It] d" status="passed"></testcase>`)
	for _, tc := range []struct {
		name   string
		other  string
		wantOK bool
		want   []string
	}{
		{name: "same passes", other: same, wantOK: true,
			want: []string{"| stock | 4 | 2 | 1 | 1 |", "| on | 4 | 2 | 1 | 1 |",
				"- d: failed on stock, timedout on on", "- c: needs systemd (stock, on)", "- d (stock, on)"}},
		{name: "a pass lost", other: worse, wantOK: false,
			want: []string{"| on | 3 | 2 | 1 | 0 |", "- b: passed on stock, failed on on", "- c: skipped on stock, not run on on",
				"- d: failed on stock, passed on on", "- b (on)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if ok, err := Compare(&b, []string{stock, tc.other}); err != nil || ok != tc.wantOK {
				t.Errorf("Compare: %t, %v; want %t", ok, err, tc.wantOK)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w+"\n") {
					t.Errorf("the table lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
	for _, runs := range [][]string{{"stock=" + t.TempDir()}, {"stock"}} {
		if _, err := Compare(io.Discard, runs); err == nil {
			t.Errorf("Compare(%q): no error", runs)
		}
	}
}
