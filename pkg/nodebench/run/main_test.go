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
	"slices"
	"testing"
)

// TestGateOrderAlternates: over any two consecutive rounds each gate value
// runs once first and once second, so a drift of the node within a round
// weighs on both alike.
func TestGateOrderAlternates(t *testing.T) {
	for _, tc := range []struct {
		round int
		want  []bool
	}{
		{1, []bool{false, true}},
		{2, []bool{true, false}},
		{3, []bool{false, true}},
		{4, []bool{true, false}},
	} {
		if got := gateOrder(tc.round); !slices.Equal(got, tc.want) {
			t.Errorf("gateOrder(%d) = %v, want %v", tc.round, got, tc.want)
		}
	}
}
