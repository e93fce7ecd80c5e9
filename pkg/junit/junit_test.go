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
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestRead reads a report the way Ginkgo writes one: setup nodes and specs
// that focus or skip left out are dropped, a spec skipped while it ran
// keeps its reason, and specs from every report file are merged.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	reports := map[string]string{
		"junit_01.xml": `<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="E2eNode Suite">
  <testcase name="[SynchronizedBeforeSuite]" status="passed"></testcase>
  <testcase name="[It] [sig-storage] ConfigMap should be consumable" status="passed"></testcase>
  <testcase name="[It] [sig-storage] HostPath should give a volume the correct mode" status="failed"><failure message="timed out"></failure></testcase>
  <testcase name="[It] left out by focus" status="skipped"><skipped message="skipped"></skipped></testcase>
  <testcase name="[It] skipped while it ran" status="skipped"><skipped message="skipped - Only supported for providers [gce]"></skipped></testcase>
</testsuite></testsuites>`,
		"junit_02.xml": `<testsuites><testsuite><testcase name="[It] from the second file" status="timedout"></testcase></testsuite></testsuites>`,
	}
	if err := os.MkdirAll(filepath.Join(dir, "report"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range reports {
		if err := os.WriteFile(filepath.Join(dir, "report", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Read(dir)
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
}

// TestReadWithoutReport says where it looked when there is no report.
func TestReadWithoutReport(t *testing.T) {
	if _, err := Read(t.TempDir()); err == nil {
		t.Fatal("Read found a report in an empty directory")
	}
}

// TestReadBadXML names the file it cannot parse.
func TestReadBadXML(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "report"), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "report", "junit_01.xml")
	if err := os.WriteFile(bad, []byte("<testsuites><testsuite>"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Read(dir)
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("Read of a truncated report: %v, want an error naming %s", err, bad)
	}
}
