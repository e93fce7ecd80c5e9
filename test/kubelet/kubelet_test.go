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

// Package kubelet_test drives the series' kubelet, never past validation.
package kubelet_test

import (
	"cmp"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"evented-volume-manager/pkg/node"
)

// TestKubelet runs the kubelet and matches what it prints. Each configuration
// carries one invalid field, so the kubelet fails at validation, after
// setting the gates and logging the effective configuration.
func TestKubelet(t *testing.T) {
	bin := node.KubeletBinary(filepath.Join("..", "..", "_output"))
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("EVM_REQUIRE_BINARIES") == "1" {
			t.Fatalf("no kubelet binary at %s (run make): %v", bin, err)
		}
		t.Skipf("no kubelet binary at %s; run make to build it", bin)
	}
	// make KUBE_VERSION=v1.37.2 test builds and tests another release.
	release := regexp.QuoteMeta(cmp.Or(os.Getenv("EVM_KUBE_VERSION"), "v1.37.0"))
	const config = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\neventRecordQPS: -1\n"
	const refused = "unrecognized feature gate"
	for _, tc := range []struct {
		name, config string
		flags        []string
		want         []string // regular expressions; refused must not match unless one of them has it
	}{
		{name: "version", flags: []string{"--version"}, want: []string{`^Kubernetes ` + release + `-evm\.[0-9]+\+[0-9a-f]{12}(-dirty)?\n$`}},
		{name: "help lists the gate", flags: []string{"--help"}, want: []string{regexp.QuoteMeta("EventedVolumeManager=true|false (ALPHA - default=false)")}},
		{name: "gate on in the config file", config: config + "featureGates:\n  EventedVolumeManager: true\n",
			want: []string{"EventedVolumeManager: true", "eventRecordQPS"}},
		{name: "gate on from the command line", config: config, flags: []string{"--feature-gates=EventedVolumeManager=true"},
			want: []string{"EventedVolumeManager: true", "eventRecordQPS"}},
		{name: "gate off in the config file", config: config + "featureGates:\n  EventedVolumeManager: false\n",
			want: []string{"EventedVolumeManager: false", "eventRecordQPS"}},
		{name: "control: an unknown gate is refused", config: config + "featureGates:\n  EventedVolumeManagerTypo: true\n",
			want: []string{refused + ": EventedVolumeManagerTypo"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.flags
			if tc.config != "" {
				dir := t.TempDir()
				cfg := filepath.Join(dir, "config.yaml")
				if err := os.WriteFile(cfg, []byte(tc.config), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append([]string{"--config", cfg, "--root-dir", filepath.Join(dir, "root"), "--cert-dir", filepath.Join(dir, "pki")}, args...)
			}
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
			var exit *exec.ExitError
			if ctx.Err() != nil || err != nil && !errors.As(err, &exit) {
				t.Fatalf("kubelet %v: %v (%v)", args, err, ctx.Err())
			}
			if failed, fails := err != nil, tc.config != ""; failed != fails { // with its invalid field
				t.Errorf("kubelet %v failed: %t, want %t:\n%s", args, failed, fails, out)
			}
			for _, want := range tc.want {
				if !regexp.MustCompile(want).Match(out) {
					t.Errorf("kubelet %v printed no match for %s:\n%s", args, want, out)
				}
			}
			if !strings.Contains(strings.Join(tc.want, ""), refused) && strings.Contains(string(out), refused) {
				t.Errorf("kubelet %v printed %q:\n%s", args, refused, out)
			}
		})
	}
}
