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

// Package kep checks the KEP against the series: the metrics that KEP.md's
// metrics table and kep.yaml's metrics list name must be exactly the metrics
// the series registers, with the labels and types the code gives them, and
// kep.yaml must parse and name the feature gate.
//
// RegisteredMetrics finds the metrics in Go source with go/parser: every
// call of a k8s.io/component-base/metrics constructor (NewCounterVec,
// NewGauge, NewHistogramVec, ...) with an options literal, its Namespace,
// Subsystem and Name resolved through the package's string constants, and
// whether the package passes it to a registry's (Must)Register: a metric
// only defined is reported, since the kubelet never exposes it.
// MetricsTable reads KEP.md's table, ParseKEPYAML reads kep.yaml, and Compare
// reports every difference. Command metricscheck runs them for
// hack/verify.sh.
package kep
