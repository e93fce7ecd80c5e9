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
	"context"
	"encoding/json"
	"flag"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/pprof/profile"
	"golang.org/x/sys/unix"
)

// must fails the test at once on an error.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestMetrics(t *testing.T) {
	m, err := ParseMetrics([]byte(`# HELP volume_manager_loop_iterations_total x
# TYPE volume_manager_loop_iterations_total counter
volume_manager_loop_iterations_total{loop="reconciler",trigger="timer"} 10
volume_manager_loop_iterations_total{loop="reconciler",trigger="runtime"} 2
volume_manager_loop_iterations_total{loop="desired_state_of_world_populator",trigger="timer"} 5
# HELP kubelet_container_event_stream_connected x
# TYPE kubelet_container_event_stream_connected gauge
kubelet_container_event_stream_connected 1
# HELP kubelet_container_event_stream_failures_total x
# TYPE kubelet_container_event_stream_failures_total counter
kubelet_container_event_stream_failures_total{reason="unavailable"} 3
kubelet_container_event_stream_failures_total{reason="closed"} 1
`))
	must(t, err)
	tests := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"volume_manager_loop_iterations_total", nil, 17},
		{"volume_manager_loop_iterations_total", []string{"loop", "reconciler"}, 12},
		{"volume_manager_loop_iterations_total", []string{"loop", "reconciler", "trigger", "runtime"}, 2},
		{"volume_manager_loop_iterations_total", []string{"loop", "nope"}, 0},
		{"kubelet_container_event_stream_connected", nil, 1},
		{"kubelet_container_event_stream_failures_total", nil, 4},
		{"kubelet_container_event_stream_failures_total", []string{"reason", "closed"}, 1},
		{"absent", nil, 0},
	}
	for _, tc := range tests {
		if got := m.Sum(tc.name, tc.labels...); got != tc.want {
			t.Errorf("Sum(%s, %v) = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	if got := m.ByLabel("volume_manager_loop_iterations_total", "trigger"); got["timer"] != 15 || got["runtime"] != 2 {
		t.Errorf("ByLabel(trigger) = %v", got)
	}
	if got := m.ByLabel("kubelet_container_event_stream_failures_total", "reason"); got["unavailable"] != 3 || got["closed"] != 1 {
		t.Errorf("ByLabel(reason) = %v", got)
	}
	if !m.Has("kubelet_container_event_stream_connected") || m.Has("absent") {
		t.Error("Has is wrong")
	}
}

func TestShareOf(t *testing.T) {
	fn := func(id uint64, name string) *profile.Function { return &profile.Function{ID: id, Name: name} }
	vm := fn(1, VolumeManagerPackage+"/reconciler.(*reconciler).reconcile")
	vmCache := fn(2, VolumeManagerPackage+"/cache.(*desiredStateOfWorld).GetVolumesToMount")
	other := fn(3, "k8s.io/kubernetes/pkg/kubelet.(*Kubelet).syncLoop")
	rt := fn(4, "runtime.mallocgc")
	loc := func(id uint64, fs ...*profile.Function) *profile.Location {
		l := &profile.Location{ID: id}
		for _, f := range fs {
			l.Line = append(l.Line, profile.Line{Function: f})
		}
		return l
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{
			// Two volume manager frames on one stack count once.
			{Location: []*profile.Location{loc(1, rt), loc(2, vmCache), loc(3, vm)}, Value: []int64{3, 30e6}},
			{Location: []*profile.Location{loc(4, vm)}, Value: []int64{1, 10e6}},
			{Location: []*profile.Location{loc(5, rt), loc(6, other)}, Value: []int64{6, 60e6}},
		},
	}
	s, err := ShareOf(p, VolumeManagerPackage)
	must(t, err)
	if s.Total != 100*time.Millisecond || s.Matched != 40*time.Millisecond || s.Fraction() != 0.4 {
		t.Errorf("share = %v of %v (%v), want 40ms of 100ms", s.Matched, s.Total, s.Fraction())
	}
	if len(s.Top) != 2 || s.Top[0].Function != vmCache.Name {
		t.Errorf("top = %v, want the cache leaf first", s.Top)
	}
	if _, err := ShareOf(&profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc", Unit: "bytes"}}}, "x"); err == nil {
		t.Error("a profile without cpu samples gave no error")
	}
}

func TestProcessCPUStartTimeAndRSS(t *testing.T) {
	cpu, err := ProcessCPU(os.Getpid())
	must(t, err)
	// A test binary has used CPU by now, and less than its own lifetime
	// allows on every CPU.
	if cpu < 0 || cpu > time.Hour {
		t.Errorf("ProcessCPU(self) = %v", cpu)
	}
	a, err := startTime(os.Getpid())
	if err != nil || a == 0 {
		t.Fatalf("startTime = %v, %v", a, err)
	}
	if b, _ := startTime(os.Getpid()); b != a {
		t.Errorf("startTime changed from %d to %d", a, b)
	}
	if _, err := ProcessCPU(-1); err == nil {
		t.Error("a missing process gave no error")
	}
	if _, err := startTime(-1); err == nil {
		t.Error("a missing process gave no start time error")
	}
	// The test binary holds at least the 16 MiB it allocates here.
	held := make([]byte, 16<<20)
	for i := range held {
		held[i] = 1
	}
	if rss, anon, err := ProcessRSS(os.Getpid()); err != nil || anon < int64(len(held)) || rss < anon || rss > 1<<34 {
		t.Errorf("ProcessRSS(self) = %d, %d, %v", rss, anon, err)
	}
	if _, _, err := ProcessRSS(-1); err == nil {
		t.Error("a missing process gave no RSS error")
	}
}

// TestDropCachedPages: a file's pages, cached once read, are gone after DropCachedPages.
func TestDropCachedPages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "binary")
	must(t, os.WriteFile(path, make([]byte, 1<<20), 0o600))
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil || st.Type == unix.TMPFS_MAGIC {
		t.Skipf("%s is on tmpfs, whose pages cannot be dropped (%v)", path, err)
	}
	cached := func() int {
		f, err := os.Open(path)
		must(t, err)
		defer f.Close()
		must(t, f.Sync()) // dirty pages are not dropped
		data, err := unix.Mmap(int(f.Fd()), 0, 1<<20, unix.PROT_READ, unix.MAP_SHARED)
		must(t, err)
		defer unix.Munmap(data)
		resident := make([]byte, (1<<20)/os.Getpagesize())
		if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&data[0])), uintptr(len(data)), uintptr(unsafe.Pointer(&resident[0]))); errno != 0 {
			t.Fatal(errno)
		}
		n := 0
		for _, b := range resident {
			n += int(b & 1)
		}
		return n
	}
	if _, err := os.ReadFile(path); err != nil || cached() == 0 {
		t.Fatalf("nothing cached of a file just read (%v)", err)
	}
	must(t, DropCachedPages(path))
	if n := cached(); n != 0 {
		t.Errorf("%d pages still cached after DropCachedPages", n)
	}
	if err := DropCachedPages(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing file gave no error")
	}
}

func TestPodManifest(t *testing.T) {
	m := PodManifest("p1", "/srv/host path", map[string]string{"b": "2", "a": "1"})
	for _, want := range []string{
		`name: "p1"`, `terminationGracePeriodSeconds: 0`, `path: "/srv/host path"`,
		"\n    \"a\": \"1\"\n    \"b\": \"2\"\n", `image: "localhost/busybox:local"`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("manifest lacks %q:\n%s", want, m)
		}
	}
	_, volumes, _ := strings.Cut(m, "\n  volumes:\n")
	if got := strings.Count(volumes, "\n  - ") + 1; got != VolumesPerPod {
		t.Errorf("manifest has %d volumes, want %d", got, VolumesPerPod)
	}
	if m := PodManifest("p2", "/h", nil); !strings.Contains(m, "annotations: {}") {
		t.Errorf("manifest without annotations:\n%s", m)
	}
}

func TestSetVerbosity(t *testing.T) {
	// The kubelet's handler, routes.StringFlagPutHandler(logs.GlogSetter).
	var got []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, r.Method+" "+r.URL.Path+" "+string(body))
		switch {
		case r.URL.Path != "/debug/flags/v":
			http.NotFound(w, r)
		case r.Method != http.MethodPut:
			http.Error(w, "unsupported http method", http.StatusNotAcceptable)
		case string(body) == "9":
			http.Error(w, "failed set klog.logging.verbosity 9", http.StatusBadRequest)
		default:
			io.WriteString(w, "successfully set klog.logging.verbosity to "+string(body)+"\n")
		}
	}))
	defer srv.Close()
	tests := []struct {
		level   int
		wantErr bool
		sent    string
	}{
		{level: 4, sent: "PUT /debug/flags/v 4"},
		{level: 3, sent: "PUT /debug/flags/v 3"},
		{level: 9, wantErr: true, sent: "PUT /debug/flags/v 9"},
		{level: -1, wantErr: true},
	}
	for _, tc := range tests {
		got = nil
		err := setVerbosity(context.Background(), srv.Client(), srv.URL, tc.level)
		if (err != nil) != tc.wantErr {
			t.Errorf("setVerbosity(%d) = %v, want error %t", tc.level, err, tc.wantErr)
		}
		if sent := strings.Join(got, ", "); sent != tc.sent {
			t.Errorf("setVerbosity(%d) sent %q, want %q", tc.level, sent, tc.sent)
		}
	}
}

func TestPodsStartTimeout(t *testing.T) {
	for pods, want := range map[int]time.Duration{110: 10 * time.Minute, 600: 10 * time.Minute, 1000: 1000 * time.Second} {
		if got := PodsStartTimeout(pods); got != want {
			t.Errorf("PodsStartTimeout(%d) = %v, want %v", pods, got, want)
		}
	}
}

// TestSetKubelet flips the series' kubelet's gate and swaps it for upstream's
// and back. A missing binary or a running kubelet is refused.
func TestSetKubelet(t *testing.T) {
	work := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(work, "kubelet"), 0o755))
	stock, series := filepath.Join(work, "kubelet-stock"), filepath.Join(work, "kubelet-series")
	for _, b := range []string{stock, series} {
		must(t, os.WriteFile(b, nil, 0o755))
	}
	n := &Node{opts: Options{Kubelet: SeriesKubelet(series, map[string]bool{RelistOnPodTermination: true}), Logf: t.Logf},
		work: work, runtime: driverFor(Containerd())}
	for _, k := range []Kubelet{
		SeriesKubelet(series, map[string]bool{EventedVolumeManager: true}),
		SeriesKubelet(series, nil),
		StockKubelet(stock, false),
		SeriesKubelet(series, map[string]bool{EventedVolumeManager: true, EventedPLEG: true}),
	} {
		must(t, n.SetKubelet(k))
		data, err := os.ReadFile(n.KubeletConfig())
		must(t, err)
		if binary, _, _ := n.command(KubeletService); !strings.HasSuffix(string(data), k.featureGates()) || binary != k.binary {
			t.Errorf("SetKubelet(%s): binary %s, configuration\n%s", k, binary, data)
		}
	}
	if err := n.SetKubelet(StockKubelet(filepath.Join(work, "missing"), false)); err == nil {
		t.Error("SetKubelet with a missing binary: no error")
	}
	p, err := startProcess("sleep", filepath.Join(t.TempDir(), "sleep.log"), nil, "sleep", "60")
	if err != nil {
		t.Skipf("cannot start sleep: %v", err)
	}
	defer p.Stop(9, 0)
	n.procs[KubeletService] = p
	if err := n.SetKubelet(StockKubelet(stock, false)); err == nil {
		t.Error("SetKubelet with the kubelet running: no error")
	}
}

func TestParseMountIDs(t *testing.T) {
	// Fields: mount ID, parent ID, major:minor, root, mount point, ...
	const mountinfo = `21 1 8:1 / / rw shared:1 - ext4 /dev/sda1 rw
30 21 0:5 / /var/lib/kubelet rw shared:2 - tmpfs tmpfs rw
31 30 0:6 / /var/lib/kubelet/pods/a/volumes/x rw - tmpfs tmpfs rw
32 30 0:7 / /var/lib/kubelet/pods/a/volumes/my\040vol rw - tmpfs tmpfs rw
33 30 0:8 / /var/lib/kubeletx rw - tmpfs tmpfs rw
34 31 0:9 / /var/lib/kubelet/pods/a/volumes/x rw - tmpfs tmpfs rw
`
	for _, tc := range []struct {
		name  string
		roots []string
		want  map[string]string
	}{
		{name: "the root itself and everything under it", roots: []string{"/var/lib/kubelet"}, want: map[string]string{
			"/var/lib/kubelet": "30", "/var/lib/kubelet/pods/a/volumes/x": "34", "/var/lib/kubelet/pods/a/volumes/my vol": "32",
		}},
		{name: "a trailing slash", roots: []string{"/var/lib/kubelet/pods/a/"}, want: map[string]string{
			"/var/lib/kubelet/pods/a/volumes/x": "34", "/var/lib/kubelet/pods/a/volumes/my vol": "32",
		}},
		{name: "/ holds every mount", roots: []string{"/"}, want: map[string]string{
			"/": "21", "/var/lib/kubelet": "30", "/var/lib/kubelet/pods/a/volumes/x": "34",
			"/var/lib/kubelet/pods/a/volumes/my vol": "32", "/var/lib/kubeletx": "33",
		}},
		{name: "several roots", roots: []string{"/var/lib/kubeletx", "/var/lib/kubelet/pods/a/volumes/my vol"}, want: map[string]string{
			"/var/lib/kubeletx": "33", "/var/lib/kubelet/pods/a/volumes/my vol": "32",
		}},
		{name: "nothing mounted there", roots: []string{"/srv"}, want: map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseMountIDs(mountinfo, tc.roots); !maps.Equal(got, tc.want) {
				t.Errorf("parseMountIDs(%q) = %v, want %v", tc.roots, got, tc.want)
			}
		})
	}
	if ids, err := MountIDs("/"); err != nil || ids["/"] == "" || len(ids) < 2 {
		t.Errorf("MountIDs(\"/\") = %v, %v; want / and the mounts under it (/proc at least)", ids, err)
	}
	for in, want := range map[string]string{
		`/plain`:               "/plain",
		`/with\040space`:       "/with space",
		`/tab\011and\134slash`: "/tab\tand\\slash",
		`/short\04`:            `/short\04`,
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestKubeletBinary(t *testing.T) {
	out := t.TempDir()
	// Unset, the series' base release; set, another release's kubelet.
	for env, want := range map[string]string{"": filepath.Join(out, "bin", "kubelet"), "/some/kubelet-v1.37.2": "/some/kubelet-v1.37.2"} {
		t.Setenv(KubeletEnv, env)
		if got := KubeletBinary(out); got != want || (Kubelet{}).Binary(out) != want {
			t.Errorf("$%s=%q: KubeletBinary() = %q, want %q", KubeletEnv, env, got, want)
		}
	}
	if got := StockKubelet("", false).Binary(out); got != filepath.Join(out, "bin", "kubelet-stock") {
		t.Errorf("upstream's kubelet is %s by default, want make kubelet-stock's", got)
	}
}

// TestFeatureGates: the series' kubelet always gets EventedVolumeManager's
// value, then its further gates sorted; upstream's refuses any of them.
func TestFeatureGates(t *testing.T) {
	for _, tc := range []struct {
		kind, gates string
		want        string
	}{
		{kind: "series", want: "featureGates:\n  EventedVolumeManager: false\n  EventedPLEG: false\n"},
		{kind: "series", gates: "EventedVolumeManager=true, EventedPLEG=true", want: "featureGates:\n  EventedVolumeManager: true\n  EventedPLEG: true\n"},
		{kind: "stock", want: "featureGates:\n  EventedPLEG: false\n"},
		{kind: "stock", gates: "EventedPLEG=true", want: "featureGates:\n  EventedPLEG: true\n"},
		{kind: "series", gates: "VolumesInUseNodeStatusUpdate=true,EventedVolumeManager=true,RelistOnPodTermination=true",
			want: "featureGates:\n  EventedVolumeManager: true\n  RelistOnPodTermination: true\n  VolumesInUseNodeStatusUpdate: true\n  EventedPLEG: false\n"},
		{kind: "series", gates: "VolumesInUseNodeStatusUpdate=true,RelistOnPodTermination=false",
			want: "featureGates:\n  EventedVolumeManager: false\n  RelistOnPodTermination: false\n  VolumesInUseNodeStatusUpdate: true\n  EventedPLEG: false\n"},
		{kind: "stock", gates: "EventedVolumeManager=false"},
		{kind: "stock", gates: "EventedPLEG=true,RelistOnPodTermination=false"},
		{kind: "series", gates: "EventedVolumeManager"},
		{kind: "upstream"},
	} {
		k, err := ParseKubelet(tc.kind, "", tc.gates)
		if (err != nil) != (tc.want == "") || err == nil && k.featureGates() != tc.want {
			t.Errorf("ParseKubelet(%s, %q) = %q, %v; want %q", tc.kind, tc.gates, k.featureGates(), err, tc.want)
		}
		if err != nil {
			continue
		}
		var back Kubelet
		data, err := json.Marshal(k)
		if err != nil || json.Unmarshal(data, &back) != nil || back.featureGates() != tc.want || back.Stock() != k.Stock() {
			t.Errorf("%s in JSON, %s, reads back as %s", k, data, back)
		}
	}
	if err := json.Unmarshal([]byte(`{"stock": true, "gates": {"EventedVolumeManager": false}}`), new(Kubelet)); err == nil {
		t.Error("upstream's kubelet with the series' gate read from JSON")
	}
}

func TestRuntimeFlags(t *testing.T) {
	for _, tc := range []struct {
		name        string
		env, events string
		args        []string
		want        Runtime
		wantErr     bool
	}{
		{name: "defaults", want: Containerd()},
		{name: "env", env: "crio", events: "false", want: CRIO(false)},
		{name: "flags override env", env: "crio", events: "false", args: []string{"-runtime", "containerd", "-crio-pod-events"}, want: Containerd()},
		{name: "CRI-O's events from the env", events: "false", args: []string{"-runtime", "crio"}, want: CRIO(false)},
		{name: "unknown runtime", args: []string{"-runtime", "docker"}, wantErr: true},
		{name: "bad env", events: "maybe", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(RuntimeEnv, tc.env)
			t.Setenv(PodEventsEnv, tc.events)
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			runtime := RuntimeFlags(fs)
			must(t, fs.Parse(tc.args))
			rt, err := runtime()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %t", err, tc.wantErr)
			}
			if err == nil && rt != tc.want {
				t.Errorf("got %s, want %s", rt.Label(), tc.want.Label())
			}
		})
	}
}

func TestFirstLines(t *testing.T) {
	for in, want := range map[string]string{
		"one":                    "one",
		"a\nb\nc":                "a\nb\nc",
		"a\nb\nc\nd\ne":          "a\nb\nc\n... (2 more lines)",
		strings.Repeat("x", 400): strings.Repeat("x", 300) + "... (100 more bytes)",
	} {
		if got := firstLines(in, 3); got != want {
			t.Errorf("firstLines(%.20q) = %q, want %q", in, got, want)
		}
	}
}
