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

package volumemanager

import (
	"context"
	"flag"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/kubelet/config"
	"k8s.io/utils/clock"
)

var attachProbeRounds = flag.Int("attach-probe-rounds", 5, "rounds of TestControllerAttachLatencySideBySide")

// nodeStatusUpdatePeriod is the kubelet's default nodeStatusUpdateFrequency.
const nodeStatusUpdatePeriod = 10 * time.Second

// TestControllerAttachLatencySideBySide measures how long after the attach
// the volume manager mounts a volume, gate off and on, with and without the
// node informer's wake, which must be no slower than polling (p50).
func TestControllerAttachLatencySideBySide(t *testing.T) {
	rounds := *attachProbeRounds
	if rounds < 1 {
		t.Fatalf("-attach-probe-rounds=%d: want 1 or more", rounds)
	}
	p50 := map[string]time.Duration{}
	for _, mode := range []struct {
		name           string
		gate, informer bool
	}{{"gate=off", false, false}, {"gate=on informer-wake", true, true}, {"gate=on no-wake", true, false}} {
		var latencies []time.Duration
		for range rounds {
			latencies = append(latencies, probeControllerAttach(t, mode.gate, mode.informer))
		}
		slices.Sort(latencies)
		p50[mode.name] = latencies[len(latencies)/2]
		t.Logf("controller attach -> mounted: %s rounds=%d p50=%v max=%v all=%v", mode.name, rounds,
			p50[mode.name].Round(time.Millisecond), latencies[len(latencies)-1].Round(time.Millisecond), latencies)
	}
	if wake, poll := p50["gate=on informer-wake"], p50["gate=off"]; wake > poll {
		t.Errorf("with the gate on and the node informer's wake the volume mounted after %v (p50), slower than polling with the gate off (%v)", wake, poll)
	}
}

func probeControllerAttach(t *testing.T, gate, informer bool) time.Duration {
	featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, features.EventedVolumeManager, gate)
	h := newAttachHarnessOn(t, clock.RealClock{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.vm.Run(ctx, config.NewSourcesReady(func(sets.Set[string]) bool { return true }))
	}()
	defer func() { cancel(); <-done }()
	h.podManager.AddPod(h.pod)
	h.wakeups.NotifyPods(h.pod.UID)
	// The kubelet's node status sync reports the volume in use once the
	// desired state has it, as simulateVolumeInUseUpdate does.
	for range 20 {
		time.Sleep(100 * time.Millisecond)
		h.vm.MarkVolumesAsReportedInUse([]v1.UniqueVolumeName{attachedVolume})
	}
	if h.podMounted() {
		t.Fatal("the volume mounted before the controller attached it")
	}
	h.controllerAttaches()
	landed := time.Now()
	if informer {
		h.wakeups.NotifyNodeVolumesAttached()
	}
	for !h.podMounted() {
		if time.Since(landed) > nodeStatusUpdatePeriod {
			t.Fatalf("the volume was not mounted %v after the attach (gate %t, informer wake %t)", nodeStatusUpdatePeriod, gate, informer)
		}
		time.Sleep(time.Millisecond)
	}
	return time.Since(landed)
}
