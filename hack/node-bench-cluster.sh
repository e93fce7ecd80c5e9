#!/usr/bin/env bash
# make node-bench-cluster: the side-by-side benchmark on a cluster node
# (cmd/node-bench -cluster): etcd, kube-apiserver and kube-controller-manager
# from make cluster-deps, the patched kubelet registered as a node, API pods
# with their service-account token, a configMap, a secret and an emptyDir,
# and single pods with a CSI volume that requires attach (the project's
# driver and attacher, attach after 0 s and 1 s). Per round gate off, gate
# on, gate on with the VolumesInUseNodeStatusUpdate gate (node-status gate) and
# all the series' gates on (all gates), in an order that changes from round
# to round. Per configuration: idle CPU; configMap updated -> pod file (-configmaps pods at once, in
# -configmap-waves waves) and, at --v=4 during the waves, a pod's sync ->
# its configMap, secret and projected volumes remounted; the single pods'
# mount and unmount times; and the kubelet's API requests by verb and
# resource from kube-apiserver's audit log, idle and during the CSI pod
# churn, a minute and the most in any 1 s. It prints markdown tables and
# writes results.json, report.md and charts to _output/node-bench-cluster.
# About 13 minutes per configuration.
#
#   NODE_BENCH_CLUSTER_FLAGS="-rounds 2 -pods 110 -windows 2 -window 60s -singles 15 -configmaps 110 -configmap-waves 3"
#   NODE_BENCH_CLUSTER_FLAGS="-configs gate-off,gate-on"   the configurations, hyphenated (the flags are split on spaces)
#
# Needs root. Each node stops everything it started, by PID, and restores the
# host when it stops.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_root node-bench-cluster "it runs containerd, runc, a control plane and a kubelet"
step "cluster-node benchmark, gate off, gate on, node-status gate and all gates (flags: ${NODE_BENCH_CLUSTER_FLAGS:-defaults})"
# shellcheck disable=SC2086 # the flags are words
(cd "${ROOT}" && EVM_KUBELET="${KUBELET}" go run ./cmd/node-bench -cluster -out "${OUT}" -dir "${OUT}/node-bench-cluster" ${NODE_BENCH_CLUSTER_FLAGS:-}) ||
  die "node-bench-cluster failed; the nodes' logs are under _output/node-bench-cluster/work-*/logs."
step_done
