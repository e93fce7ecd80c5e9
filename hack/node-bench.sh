#!/usr/bin/env bash
# make node-bench: the real-node side-by-side benchmark (pkg/nodebench). The
# same workload, 110 static pods x 4 volumes on containerd and runc, runs on
# a fresh node with the EventedVolumeManager gate off and then on. It prints
# a markdown table and writes results.json, report.md and charts to
# _output/node-bench. About 15 minutes per round.
#
#   NODE_BENCH_FLAGS="-rounds 2 -windows 3 -window 60s -profile 60s -singles 55 -gap 1s -pods 110"
#
# Needs root. Each node restores the host when it stops.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$(id -u)" = 0 ] || die "node-bench needs root (it runs containerd, runc and a kubelet)."
step "real-node benchmark, gate off then on (flags: ${NODE_BENCH_FLAGS:-defaults})"
# shellcheck disable=SC2086 # the flags are words
(cd "${ROOT}" && EVM_KUBELET="${KUBELET}" go run ./pkg/nodebench/run -out "${OUT}" -dir "${OUT}/node-bench" ${NODE_BENCH_FLAGS:-}) ||
  die "node-bench failed; the nodes' logs are under _output/node-bench/work-gate-*/logs."
step_done
