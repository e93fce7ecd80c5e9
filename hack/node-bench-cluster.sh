#!/usr/bin/env bash
# make node-bench-cluster: the side-by-side benchmark on a cluster node
# (pkg/nodebench, RunCluster): etcd, kube-apiserver and kube-controller-manager
# from make cluster-deps, the patched kubelet registered as a node, API pods
# with their service-account token, a configMap, a secret and an emptyDir,
# and single pods with a CSI volume that requires attach (the project's
# driver and attacher, attach after 0 s and 1 s). Gate off, then on, per
# round. It prints a markdown table and writes results.json, report.md and
# charts to _output/node-bench-cluster. About 9 minutes per gate value.
#
#   NODE_BENCH_CLUSTER_FLAGS="-rounds 2 -pods 110 -windows 2 -window 60s -singles 15 -configmaps 20"
#
# Needs root. Each node stops everything it started, by PID, and restores the
# host when it stops.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$(id -u)" = 0 ] || die "node-bench-cluster needs root (it runs containerd, runc, a control plane and a kubelet)."
step "cluster-node benchmark, gate off then on (flags: ${NODE_BENCH_CLUSTER_FLAGS:-defaults})"
# shellcheck disable=SC2086 # the flags are words
(cd "${ROOT}" && EVM_KUBELET="${KUBELET}" go run ./pkg/nodebench/runcluster -out "${OUT}" -dir "${OUT}/node-bench-cluster" ${NODE_BENCH_CLUSTER_FLAGS:-}) ||
  die "node-bench-cluster failed; the nodes' logs are under _output/node-bench-cluster/work-gate-*/logs."
step_done
