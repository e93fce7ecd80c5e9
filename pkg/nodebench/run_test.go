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

package nodebench

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"evented-volume-manager/pkg/node"
)

func TestExitAfter(t *testing.T) {
	if got := exitAfter(0, 1); got != exitMin {
		t.Errorf("exitAfter(0, 1) = %v, want %v", got, exitMin)
	}
	var got []time.Duration
	for i := range 5 {
		got = append(got, exitAfter(i, 5))
	}
	want := []time.Duration{3 * time.Second, 4250 * time.Millisecond, 5500 * time.Millisecond, 6750 * time.Millisecond, 8 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("exitAfter(i, 5) = %v, want %v", got, want)
	}
}

// TestExitingPodManifest belongs with pkg/node's TestPodManifest: the
// exiting pods' one container sleeps and exits on its own, with restartPolicy
// Never, which the idle pods do not set.
func TestExitingPodManifest(t *testing.T) {
	var pod struct {
		Spec struct {
			RestartPolicy string
			Containers    []struct {
				Name    string
				Command []string
			}
			Volumes []any
		}
	}
	if err := yaml.Unmarshal([]byte(node.ExitingPodManifest("x-001", "/srv/host", 3250*time.Millisecond)), &pod); err != nil {
		t.Fatal(err)
	}
	s := pod.Spec
	if s.RestartPolicy != "Never" || len(s.Containers) != 1 || s.Containers[0].Name != node.ExitContainer || len(s.Volumes) != node.VolumesPerPod {
		t.Fatalf("spec = %+v", s)
	}
	if cmd := s.Containers[0].Command; len(cmd) != 3 || !strings.HasSuffix(cmd[2], "; sleep 3.250") || strings.Contains(cmd[2], "trap") {
		t.Errorf("command = %q, want one that sleeps 3.250 s and then exits", cmd)
	}
	if m := node.PodManifest("w-001", "/srv/host", nil); strings.Contains(m, "restartPolicy") {
		t.Errorf("PodManifest sets a restartPolicy:\n%s", m)
	}
}

func TestMountedPods(t *testing.T) {
	const pods = "/w/kubelet/root/pods"
	mounts := []string{
		pods + "/uid-1/volumes/kubernetes.io~downward-api/labels",
		pods + "/uid-1/volumes/kubernetes.io~downward-api/annotations",
		pods + "/uid-2/volumes",
		pods + "/uid-3/volume-subpaths/scratch/bb/0", // not a volume's mount
		pods + "/uid-4/volumesx/a",
		pods + "/uid-5",
		"/w/kubelet/root/plugins/x",
		"/other/pods/uid-6/volumes/a",
		pods,
	}
	want := map[string]bool{"uid-1": true, "uid-2": true}
	for _, dir := range []string{pods, pods + "/"} {
		if got := mountedPods(slices.Values(mounts), dir); !maps.Equal(got, want) {
			t.Errorf("mountedPods(%q) = %v, want %v", dir, got, want)
		}
	}
}

func TestParseInspect(t *testing.T) {
	one := `{
  "info": {"pid": 0},
  "status": {
    "id": "c1", "state": "CONTAINER_EXITED", "exitCode": 0,
    "createdAt": "2026-11-26T10:00:00.000000001Z",
    "finishedAt": "2026-11-26T10:00:05.123456789Z",
    "labels": {"io.kubernetes.pod.name": "x-000-node", "io.kubernetes.pod.uid": "uid-1"}
  }
}`
	two := `[` + one + `, {"status": {"state": "CONTAINER_RUNNING", "exitCode": 0, "finishedAt": "0001-01-01T00:00:00Z",
    "labels": {"io.kubernetes.pod.uid": "uid-2"}}}]`
	got, err := parseInspect([]byte(one + "\n"))
	if err != nil || len(got) != 1 {
		t.Fatalf("one container: %+v, %v", got, err)
	}
	wantAt := time.Date(2026, 11, 26, 10, 0, 5, 123456789, time.UTC)
	if c := got[0]; c.podUID() != "uid-1" || c.Status.State != "CONTAINER_EXITED" || c.Status.ExitCode != 0 || !c.Status.FinishedAt.Equal(wantAt) {
		t.Errorf("one container = %+v, want uid-1 exited 0 at %v", c, wantAt)
	}
	got, err = parseInspect([]byte(two))
	if err != nil || len(got) != 2 || got[1].podUID() != "uid-2" || got[1].Status.State != "CONTAINER_RUNNING" || !got[0].Status.FinishedAt.Equal(wantAt) {
		t.Errorf("two containers: %+v, %v", got, err)
	}
	if _, err := parseInspect([]byte("FATA[0000] no such container")); err == nil {
		t.Error("parsing crictl's error gave no error")
	}
}
