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

// Package kubelet_test drives the kubelet binary built from the series. None
// of these tests start a kubelet: each run stops at flag parsing or at
// configuration validation, before the kubelet touches the host.
package kubelet_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"evented-volume-manager/pkg/node"
)

// kubeletBinary returns the kubelet to test: $EVM_KUBELET, or the one make
// builds. Without one the tests skip, unless EVM_REQUIRE_BINARIES=1 (make
// test sets it), when they fail.
func kubeletBinary(t *testing.T) string {
	t.Helper()
	bin := node.KubeletBinary(filepath.Join("..", "..", "_output"))
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("EVM_REQUIRE_BINARIES") == "1" {
			t.Fatalf("no kubelet binary at %s (run make): %v", bin, err)
		}
		t.Skipf("no kubelet binary at %s; run make to build it", bin)
	}
	return bin
}

// runKubelet runs the kubelet with args and returns what it printed and
// whether it exited non-zero.
func runKubelet(t *testing.T, args ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubeletBinary(t), args...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("kubelet %v did not exit within a minute", args)
	}
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("kubelet %v: %v", args, err)
		}
	}
	return string(out), err != nil
}

func TestVersion(t *testing.T) {
	out, failed := runKubelet(t, "--version")
	if failed {
		t.Fatalf("kubelet --version failed:\n%s", out)
	}
	// make KUBE_VERSION=v1.37.2 test builds and tests another release.
	release := os.Getenv("EVM_KUBE_VERSION")
	if release == "" {
		release = "v1.37.0"
	}
	re := regexp.MustCompile(`^Kubernetes ` + regexp.QuoteMeta(release) + `-evm\.[0-9]+\+[0-9a-f]{12}(-dirty)?\n$`)
	if !re.MatchString(out) {
		t.Errorf("kubelet --version = %q, want %s with the evm suffix (%s)", out, release, re)
	}
}

func TestHelpListsTheGate(t *testing.T) {
	out, failed := runKubelet(t, "--help")
	if failed {
		t.Fatalf("kubelet --help failed:\n%s", out)
	}
	if want := "EventedVolumeManager=true|false (ALPHA - default=false)"; !strings.Contains(out, want) {
		t.Errorf("kubelet --help does not list %q", want)
	}
}

// TestGateIsAccepted enables the gate from the command line and from a
// KubeletConfiguration file. Each configuration also carries one invalid
// field, so the kubelet stops at validation, which it reaches only after the
// gates were set; the effective configuration it logs on the way shows the
// gate on. An unknown gate, the control, stops it earlier.
func TestGateIsAccepted(t *testing.T) {
	const invalidField = "eventRecordQPS: -1\n"
	const validationError = "eventRecordQPS"
	header := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"

	tests := []struct {
		name       string
		config     string
		flags      []string
		wantOutput []string
		wantAbsent []string
	}{
		{
			name:       "config file",
			config:     header + "featureGates:\n  EventedVolumeManager: true\n" + invalidField,
			wantOutput: []string{"EventedVolumeManager: true", validationError},
			wantAbsent: []string{"unrecognized feature gate"},
		},
		{
			name:       "command line",
			config:     header + invalidField,
			flags:      []string{"--feature-gates=EventedVolumeManager=true"},
			wantOutput: []string{"EventedVolumeManager: true", validationError},
			wantAbsent: []string{"unrecognized feature gate"},
		},
		{
			name:       "gate off in the config file",
			config:     header + "featureGates:\n  EventedVolumeManager: false\n" + invalidField,
			wantOutput: []string{"EventedVolumeManager: false", validationError},
			wantAbsent: []string{"unrecognized feature gate"},
		},
		{
			name:       "control: an unknown gate is refused",
			config:     header + "featureGates:\n  EventedVolumeManagerTypo: true\n" + invalidField,
			wantOutput: []string{"unrecognized feature gate: EventedVolumeManagerTypo"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(cfg, []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"--config", cfg, "--root-dir", filepath.Join(dir, "root"), "--cert-dir", filepath.Join(dir, "pki")}, tc.flags...)
			out, failed := runKubelet(t, args...)
			if !failed {
				t.Fatalf("kubelet %v succeeded; the invalid field should have stopped it:\n%s", args, out)
			}
			for _, want := range tc.wantOutput {
				if !strings.Contains(out, want) {
					t.Errorf("output does not contain %q:\n%s", want, out)
				}
			}
			for _, absent := range tc.wantAbsent {
				if strings.Contains(out, absent) {
					t.Errorf("output contains %q:\n%s", absent, out)
				}
			}
		})
	}
}
