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

package bench

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot/vg"
)

func TestQuantiles(t *testing.T) {
	for _, tc := range []struct {
		xs               []float64
		median, p50, p99 float64
	}{
		{[]float64{3, 1, 2}, 2, 2, 3},
		{[]float64{4, 1, 3, 2}, 2.5, 2, 4},
		{[]float64{0.25, 0.125}, 0.1875, 0.125, 0.25},
		{[]float64{7}, 7, 7, 7},
	} {
		if got := Median(tc.xs); got != tc.median {
			t.Errorf("Median(%v) = %v, want %v", tc.xs, got, tc.median)
		}
		if p50, p99 := Quantile(tc.xs, 0.5), Quantile(tc.xs, 0.99); p50 != tc.p50 || p99 != tc.p99 {
			t.Errorf("Quantile(%v) = %v (0.5), %v (0.99); want %v, %v", tc.xs, p50, p99, tc.p50, tc.p99)
		}
	}
	if !math.IsNaN(Median(nil)) || !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("the median of nothing is not NaN")
	}
}

func TestCells(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{Cell(1234.5, "ms"), "1234 ms"}, {Cell(12.34, "ms"), "12.3 ms"}, {Cell(0.5, "%"), "0.50 %"}, {Cell(0.05, "s"), "0.050 s"},
		{Cell(math.NaN(), "ms"), "n/a"}, {Ratio(10, 2, true), "5.0x"}, {Ratio(10, 2, false), "0.2x"}, {Ratio(1, 0, true), "n/a"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestCDFChart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cdf.png")
	if err := CDFChart(file, "title", "ms", Series{Name: "a", Seconds: []float64{0.1, 0.2}, Color: OnColor},
		Series{Name: "empty", Color: OffColor}, Series{Name: "b", Seconds: []float64{0}, Color: StockColor, Dashes: []vg.Length{2, 2}}); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(file); err != nil || st.Size() == 0 {
		t.Errorf("chart not written: %v", err)
	}
	if err := CDFChart(file, "title", "ms", Series{Name: "empty"}); err == nil {
		t.Error("a chart without latencies gave no error")
	}
}
