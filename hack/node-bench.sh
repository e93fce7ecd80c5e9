#!/usr/bin/env bash
# make node-bench: the real-node side-by-side benchmark (pkg/nodebench). The
# same workload, 110 static pods x 4 volumes on containerd and runc, runs on
# a fresh node with the EventedVolumeManager gate off and on, off first in
# odd rounds and on first in even ones. It prints a markdown table and writes
# results.json, report.md and charts to _output/node-bench. About 15 minutes
# per round.
#
#   NODE_BENCH_FLAGS="-rounds 2 -windows 3 -window 60s -profile 60s -singles 55 -gap 1s -pods 110"
#
# NODE_BENCH_SIZES="110 250 500" runs the scale matrix instead: the benchmark
# at each size (its -pods), gate off and on in one run per size, each into
# _output/node-bench/pods-N, then the scale table (scale.md) and the chart of
# the idle volume manager CPU against pods (vm-cpu-vs-pods.png).
#
# Needs root. Each node restores the host when it stops.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$(id -u)" = 0 ] || die "node-bench needs root (it runs containerd, runc and a kubelet)."

if [ -z "${NODE_BENCH_SIZES:-}" ]; then
  step "real-node benchmark, gate off and on (flags: ${NODE_BENCH_FLAGS:-defaults})"
  # shellcheck disable=SC2086 # the flags are words
  (cd "${ROOT}" && EVM_KUBELET="${KUBELET}" go run ./pkg/nodebench/run -out "${OUT}" -dir "${OUT}/node-bench" ${NODE_BENCH_FLAGS:-}) ||
    die "node-bench failed; the nodes' logs are under _output/node-bench/work-gate-*/logs."
  step_done
  exit 0
fi

for pods in ${NODE_BENCH_SIZES}; do
  [[ "${pods}" =~ ^[0-9]+$ ]] || die "NODE_BENCH_SIZES holds '${pods}': want pod counts, for example \"110 250 500\"."
done
for pods in ${NODE_BENCH_SIZES}; do
  dir="${OUT}/node-bench/pods-${pods}"
  step "real-node benchmark at ${pods} pods, gate off and on (flags: ${NODE_BENCH_FLAGS:-defaults})"
  # -pods comes last, so that it wins over one in NODE_BENCH_FLAGS.
  # shellcheck disable=SC2086 # the flags are words
  (cd "${ROOT}" && EVM_KUBELET="${KUBELET}" go run ./pkg/nodebench/run -out "${OUT}" -dir "${dir}" ${NODE_BENCH_FLAGS:-} -pods "${pods}") ||
    die "node-bench at ${pods} pods failed; the nodes' logs are under ${dir}/work-gate-*/logs. The sizes before it are kept; rerun with the rest in NODE_BENCH_SIZES."
  step_done
done
step "scale report of ${NODE_BENCH_SIZES} pods"
(cd "${ROOT}" && go run ./pkg/nodebench/scale -dir "${OUT}/node-bench") || die "the scale report failed; the results are under _output/node-bench/pods-*."
step_done
