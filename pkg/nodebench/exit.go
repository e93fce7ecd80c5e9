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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"maps"
	"path/filepath"
	"strings"
	"time"

	"evented-volume-manager/pkg/bench"
	"evented-volume-manager/pkg/node"
)

// The exiting pods' containers sleep from exitMin to exitMax, spread evenly,
// so that their exits do not coincide.
const exitMin, exitMax = 3 * time.Second, 8 * time.Second

// exitTimeout bounds the wait for every exiting pod's volumes to go.
const exitTimeout = 3 * time.Minute

// exitAfter is how long the i-th of n exiting pods' container sleeps.
func exitAfter(i, n int) time.Duration {
	if n < 2 {
		return exitMin
	}
	return exitMin + (exitMax-exitMin)*time.Duration(i)/time.Duration(n-1)
}

// measureExits adds count pods with restartPolicy Never whose container
// exits on its own (node.ExitingPodManifest) and returns, for each, the
// seconds from its container's finishedAt, as the runtime reports it, to the
// first look at /proc/self/mountinfo, every poll, that finds no mount left
// under the pod's volumes directory. Nothing deletes the pods.
func measureExits(ctx context.Context, n *node.Node, count int, poll time.Duration, logf func(string, ...any)) ([]float64, error) {
	logf("adding %d pods with restartPolicy Never whose container exits on its own after %v to %v", count, exitMin, exitMax)
	names := map[string]bool{}
	for i := range count {
		name := fmt.Sprintf("x-%03d", i)
		names[n.PodName(name)] = true
		if err := n.AddPod(name, node.ExitingPodManifest(name, n.HostPathDir(), exitAfter(i, count))); err != nil {
			return nil, err
		}
	}
	podsDir := filepath.Join(n.KubeletRoot(), "pods")
	uids := map[string]bool{}      // the exiting pods', from the kubelet's /pods
	seen := map[string]bool{}      // UIDs seen with a mount
	gone := map[string]time.Time{} // when a seen UID's last mount was found gone
	// exited holds each exited container as the runtime reported it: the
	// kubelet may remove a terminal pod's container soon after its volumes
	// are unmounted, so the runtime is asked while the pods exit.
	exited := map[string]exitedContainer{}
	deadline := time.Now().Add(exitTimeout)
	var listed time.Time
	for len(gone) < count {
		if (len(uids) < count || len(exited) < count) && time.Since(listed) >= 200*time.Millisecond {
			listed = time.Now()
			pods, err := n.Pods(ctx)
			if err != nil {
				return nil, err
			}
			for _, p := range pods {
				if names[p.Name] {
					uids[p.UID] = true
				}
			}
			if err := inspectExits(ctx, n, exited); err != nil {
				return nil, err
			}
		}
		at := time.Now()
		ids, err := node.MountIDs(podsDir)
		if err != nil {
			return nil, err
		}
		mounted := mountedPods(maps.Keys(ids), podsDir)
		for uid := range uids {
			if _, done := gone[uid]; done {
				continue
			}
			if mounted[uid] {
				seen[uid] = true
			} else if seen[uid] {
				gone[uid] = at
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("after %v, %d of %d exiting pods had their volumes unmounted (%d known to the kubelet, %d seen mounted); see %s",
				exitTimeout, len(gone), count, len(uids), len(seen), n.KubeletLog())
		}
		if err := sleep(ctx, poll); err != nil {
			return nil, err
		}
	}
	if err := inspectExits(ctx, n, exited); err != nil {
		return nil, err
	}
	var latencies []float64
	for _, e := range exited {
		at, ok := gone[e.podUID]
		if !ok {
			continue
		}
		if e.state != "CONTAINER_EXITED" || e.exitCode != 0 {
			return nil, fmt.Errorf("pod %s's container is %s with exit code %d, want CONTAINER_EXITED with 0", e.podUID, e.state, e.exitCode)
		}
		latencies = append(latencies, at.Sub(e.finishedAt).Seconds())
	}
	if len(latencies) < count {
		return nil, fmt.Errorf("the runtime reported %d of %d exiting pods' containers exited", len(latencies), count)
	}
	logf("container exited → volumes unmounted: p50 %.0f ms, p99 %.0f ms over %d pods (mountinfo every %v)",
		1000*bench.Quantile(latencies, 0.5), 1000*bench.Quantile(latencies, 0.99), len(latencies), poll)
	return latencies, nil
}

// mountedPods are the UIDs of the pods that have a mount in mounts under
// their volumes directory, podsDir/<uid>/volumes.
func mountedPods(mounts iter.Seq[string], podsDir string) map[string]bool {
	pods := map[string]bool{}
	for m := range mounts {
		rest, ok := strings.CutPrefix(m, strings.TrimSuffix(podsDir, "/")+"/")
		if !ok {
			continue
		}
		if uid, sub, _ := strings.Cut(rest, "/"); sub == "volumes" || strings.HasPrefix(sub, "volumes/") {
			pods[uid] = true
		}
	}
	return pods
}

// exitedContainer is a container as crictl inspect reports it.
type exitedContainer struct {
	podUID     string
	state      string
	exitCode   int32
	finishedAt time.Time
}

// inspectExits adds the exit containers the runtime reports exited to
// exited, by pod UID.
func inspectExits(ctx context.Context, n *node.Node, exited map[string]exitedContainer) error {
	ids, err := n.Crictl(ctx, "ps", "--all", "--quiet", "--name", "^"+node.ExitContainer+"$")
	if err != nil || strings.TrimSpace(ids) == "" {
		return err
	}
	out, err := n.Crictl(ctx, append([]string{"inspect", "--output", "json"}, strings.Fields(ids)...)...)
	if err != nil {
		// A container removed since ps: the next poll asks again.
		return ctx.Err()
	}
	cs, err := parseInspect([]byte(out))
	if err != nil {
		return err
	}
	for _, c := range cs {
		if c.state == "CONTAINER_EXITED" {
			exited[c.podUID] = c
		}
	}
	return nil
}

// parseInspect reads crictl inspect --output json: one object for one
// container, a list of them for more. finishedAt is the CRI's, in
// nanoseconds, as RFC 3339.
func parseInspect(out []byte) ([]exitedContainer, error) {
	type inspected struct {
		Status struct {
			State      string            `json:"state"`
			ExitCode   int32             `json:"exitCode"`
			FinishedAt time.Time         `json:"finishedAt"`
			Labels     map[string]string `json:"labels"`
		} `json:"status"`
	}
	var list []inspected
	out = bytes.TrimSpace(out)
	if len(out) > 0 && out[0] == '{' {
		out = append(append([]byte{'['}, out...), ']')
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("crictl inspect: %w", err)
	}
	cs := make([]exitedContainer, len(list))
	for i, c := range list {
		cs[i] = exitedContainer{podUID: c.Status.Labels["io.kubernetes.pod.uid"], state: c.Status.State,
			exitCode: c.Status.ExitCode, finishedAt: c.Status.FinishedAt}
	}
	return cs, nil
}
