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
	"fmt"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"

	"evented-volume-manager/pkg/bench"
	"evented-volume-manager/pkg/node"
)

// kindReport is what a report says differently by the node's kind. The
// workloads implement it: reportOf picks the one results were run with.
type kindReport interface {
	// figures are the comparison table's figures.
	figures(r Result) []figure
	// heading writes the report's title and how the run went.
	heading(b *strings.Builder, r Result)
	// cell renders a configuration's value in the table.
	cell(s Stat, unit string) string
	// notes write what follows the table.
	notes(b *strings.Builder, r Result, rows []Row)
	// listsTriggers reports whether the report lists the loops'
	// iterations by trigger.
	listsTriggers() bool
	// gateNote is what the note on a configuration's gates adds.
	gateNote(gates map[string]bool) string
	// chartSeries are c's series in the mount and unmount charts.
	chartSeries(c Config, modes []Mode) (mount, unmount []bench.Series)
	// chartTitles name the node and the mount and unmount charts.
	chartTitles() (where, mount, unmount string)
}

// reportOf is the report of r's node kind.
func reportOf(r Result) kindReport {
	if r.Cluster {
		return Cluster{}
	}
	return Standalone{}
}

func (Standalone) figures(r Result) []figure { return standaloneFigures(r) }

func (Standalone) heading(b *strings.Builder, r Result) {
	m := r.lead()[0]
	fmt.Fprintf(b, "### Real node: %d static pods × %d volumes, %s and runc, standalone kubelet at --v=3 (--v=%d while single pods are deleted and added)\n\n",
		m.Pods, m.Volumes, m.Runtime, m.ChurnVerbosity)
	orders := make([]string, len(r.Orders))
	for i, order := range r.Orders {
		orders[i] = fmt.Sprintf("round %d ran %s", i+1, join(order, ", "))
	}
	fmt.Fprintf(b, "%d round(s) per configuration: %s; %d idle window(s) of %.0f s and a %.0f s profile per round; %d single pods (%d samples per configuration).\n\n",
		len(r.lead()), strings.Join(orders, "; "), len(m.KubeletCPU), m.WindowSeconds, m.ProfileSeconds, len(m.Mount), len(pooled(r.lead(), func(m Mode) []float64 { return m.Mount })))
}

func (Standalone) cell(s Stat, unit string) string { return statCell(s, unit) }

func (Standalone) notes(b *strings.Builder, r Result, rows []Row) { standaloneNotes(b, r, rows) }

func (Standalone) listsTriggers() bool { return false }

func (Standalone) gateNote(gates map[string]bool) string {
	if gates[node.VolumesInUseNodeStatusUpdate] {
		return " (" + node.VolumesInUseNodeStatusUpdate + " acts only with an API server, which a standalone node has not)"
	}
	return ""
}

func (Standalone) chartSeries(c Config, modes []Mode) (mount, unmount []bench.Series) {
	return []bench.Series{{Name: string(c), Seconds: pooled(modes, func(m Mode) []float64 { return m.Mount }), Color: colors[c], Dashes: dashes(c)}},
		[]bench.Series{{Name: string(c), Seconds: pooled(modes, func(m Mode) []float64 { return m.UnmountEndToEnd }), Color: colors[c], Dashes: dashes(c)}}
}

func (Standalone) chartTitles() (where, mount, unmount string) {
	return "Real node", "volume-ready wait of single pods (kubelet log)", "manifest removed → all volumes unmounted (kubelet log)"
}

func (Cluster) figures(r Result) []figure { return clusterFigures(r) }

func (Cluster) heading(b *strings.Builder, r Result) {
	m := r.lead()[0]
	fmt.Fprintf(b, "### Cluster node: %d API pods × %d volumes (projected token, configMap, secret, emptyDir), %s and runc\n\n", m.Pods, m.Volumes, m.Runtime)
	orders := make([]string, len(r.Orders))
	for i, o := range r.Orders {
		orders[i] = fmt.Sprintf("round %d %s first", i+1, o[0])
	}
	singles := 0
	if t := m.Kinds[ClusterPodKinds[0].Key]; t != nil {
		singles = len(t.MountEndToEnd)
	}
	per := "per configuration"
	if slices.Equal(r.configs(), []Config{GateOff, GateOn}) {
		per = "per gate value"
	}
	fmt.Fprintf(b, "etcd, kube-apiserver and kube-controller-manager (attach/detach, PV binder, service accounts, root CA) from the tree; "+
		"the kubelet registered as a node at --v=3; the project's CSI driver (attachRequired) and attacher. "+
		"%d round(s) %s, %s; %d idle window(s) of %.0f s and a %.0f s profile per round; "+
		"%d single pods of each kind per round, %gs apart; %d configMap updates per round, made with the kubelet at --v=%d.\n\n",
		len(r.lead()), per, strings.Join(orders, ", "), len(m.KubeletCPU), m.WindowSeconds, m.ProfileSeconds, singles, m.GapSeconds,
		len(m.ConfigMapUpdate)+m.ConfigMapUpdateMissed, churnVerbosity)
}

func (Cluster) cell(s Stat, unit string) string { return bench.Cell(s.Value, unit) }

func (Cluster) notes(b *strings.Builder, r Result, _ []Row) { clusterNotes(b, r) }

func (Cluster) listsTriggers() bool { return true }

func (Cluster) gateNote(map[string]bool) string { return "" }

func (Cluster) chartSeries(c Config, modes []Mode) (mount, unmount []bench.Series) {
	for i, kind := range ClusterPodKinds {
		if t := pooledKind(modes, kind.Key); t != nil {
			dash := [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}}[i%3]
			mount = append(mount, bench.Series{Name: kind.Key + " " + string(c), Seconds: t.MountEndToEnd, Color: colors[c], Dashes: dash})
			unmount = append(unmount, bench.Series{Name: kind.Key + " " + string(c), Seconds: t.UnmountEndToEnd, Color: colors[c], Dashes: dash})
		}
	}
	return mount, unmount
}

func (Cluster) chartTitles() (where, mount, unmount string) {
	return "Cluster node", "pod created through the API → all volumes mounted", "pod deleted through the API → all volumes unmounted"
}
