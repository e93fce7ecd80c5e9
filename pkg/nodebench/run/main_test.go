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
	"fmt"
	"slices"
	"testing"

	"evented-volume-manager/pkg/nodebench"
)

const (
	stock = nodebench.Stock
	off   = nodebench.GateOff
	on    = nodebench.GateOn
)

func TestRoundOrder(t *testing.T) {
	for _, tc := range []struct {
		round int
		stock bool
		want  []nodebench.Config
	}{
		{1, true, []nodebench.Config{stock, off, on}},
		{2, true, []nodebench.Config{on, off, stock}},
		{3, true, []nodebench.Config{off, on, stock}},
		{4, true, []nodebench.Config{stock, on, off}},
		{5, true, []nodebench.Config{on, stock, off}},
		{6, true, []nodebench.Config{off, stock, on}},
		{7, true, []nodebench.Config{stock, off, on}},
		{8, true, []nodebench.Config{on, off, stock}},
		{1, false, []nodebench.Config{off, on}},
		{2, false, []nodebench.Config{on, off}},
		{3, false, []nodebench.Config{off, on}},
		{4, false, []nodebench.Config{on, off}},
		{5, false, []nodebench.Config{on, off}},
		{6, false, []nodebench.Config{off, on}},
	} {
		if got := roundOrder(tc.round, tc.stock); !slices.Equal(got, tc.want) {
			t.Errorf("roundOrder(%d, stock %t) = %v, want %v", tc.round, tc.stock, got, tc.want)
		}
	}
}

// TestRoundOrderBalances: each configuration goes first in one of the first
// three rounds; rounds 1 to 6 run every order once; and over each pair of
// rounds every configuration's places add up alike, with stock or without,
// so that a drift of the node within a round weighs on all of them alike.
func TestRoundOrderBalances(t *testing.T) {
	firsts := map[nodebench.Config]bool{}
	for round := 1; round <= 3; round++ {
		firsts[roundOrder(round, true)[0]] = true
	}
	if len(firsts) != len(nodebench.Configs) {
		t.Errorf("rounds 1 to 3 start with %v, want every configuration", firsts)
	}
	orders := map[string]bool{}
	for round := 1; round <= 6; round++ {
		orders[fmt.Sprint(roundOrder(round, true))] = true
	}
	if len(orders) != 6 {
		t.Errorf("rounds 1 to 6 run %d different orders, want all 6: %v", len(orders), orders)
	}
	for _, withStock := range []bool{true, false} {
		for round := 1; round <= 12; round += 2 {
			configs := 2
			if withStock {
				configs = 3
			}
			places := map[nodebench.Config]int{}
			for _, r := range []int{round, round + 1} {
				order := roundOrder(r, withStock)
				if len(order) != configs {
					t.Fatalf("roundOrder(%d, stock %t) = %v, want %d configurations", r, withStock, order, configs)
				}
				for place, c := range order {
					places[c] += place
				}
			}
			// Places 0 and configs-1, or the middle twice.
			for c, sum := range places {
				if sum != configs-1 {
					t.Errorf("stock %t, rounds %d and %d: %s's places add up to %d, want %d", withStock, round, round+1, c, sum, configs-1)
				}
			}
		}
	}
}
