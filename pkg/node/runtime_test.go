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

package node

import (
	"flag"
	"io"
	"strings"
	"testing"
)

func TestRuntimeFlags(t *testing.T) {
	for _, tc := range []struct {
		name          string
		env, events   string
		args          []string
		want          Runtime
		wantEventsOff bool
		wantErr       bool
	}{
		{name: "defaults", want: Containerd},
		{name: "env", env: "crio", events: "false", want: CRIO, wantEventsOff: true},
		{name: "flags override env", env: "crio", events: "false", args: []string{"-runtime", "containerd", "-crio-pod-events"}, want: Containerd},
		{name: "unknown runtime", args: []string{"-runtime", "docker"}, wantErr: true},
		{name: "bad env", events: "maybe", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(RuntimeEnv, tc.env)
			t.Setenv(PodEventsEnv, tc.events)
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			runtime := RuntimeFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			rt, eventsOff, err := runtime()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %t", err, tc.wantErr)
			}
			if err == nil && (rt != tc.want || eventsOff != tc.wantEventsOff) {
				t.Errorf("got %s, events off %t; want %s, %t", rt, eventsOff, tc.want, tc.wantEventsOff)
			}
		})
	}
}

func TestFirstLines(t *testing.T) {
	long := strings.Repeat("x", 400)
	for _, tc := range []struct {
		in, want string
	}{
		{"one", "one"},
		{"a\nb\nc", "a\nb\nc"},
		{"a\nb\nc\nd\ne", "a\nb\nc\n... (2 more lines)"},
		{long, strings.Repeat("x", 300) + "... (100 more bytes)"},
	} {
		if got := firstLines(tc.in, 3); got != tc.want {
			t.Errorf("firstLines(%.20q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
