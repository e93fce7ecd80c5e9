#!/usr/bin/env bash
# make node-bench: the real-node side-by-side benchmark, cmd/node-bench (its
# doc comment and -help say what it measures and how). Each round runs the
# same workload, 110 static pods x 4 volumes on containerd and runc, on a
# fresh node for each kubelet: stock, upstream's kubelet built from the tree's
# tag without the series (hack/build-stock-kubelet.sh, which make node-bench
# runs first), and the series' kubelet with the EventedVolumeManager gate off
# and on, and with all the series' gates on (all gates). It prints the report
# and writes results.json, report.md and charts to _output/node-bench. About
# 8 minutes per configuration, 31 per round.
#
#   NODE_BENCH_FLAGS="-rounds 2 -windows 3 -window 60s -singles 55 -gap 1s -pods 110 -exit-pods 20 -exit-poll 5ms"
#   NODE_BENCH_FLAGS="-configs stock,gate-off,gate-on"   the configurations, hyphenated (the flags are split on spaces)
#   NODE_BENCH_STOCK=0            gate off and on only (-stock=false)
#   NODE_BENCH_SIZES="110 250 500" the benchmark at each size, into pods-N, then the scale table (scale.md; -sizes)
#   NODE_RUNTIME=crio             on CRI-O; NODE_CRIO_POD_EVENTS=false turns its container events off
#
# Needs root. Each node restores the host when it stops.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_root node-bench "it runs containerd, runc and a kubelet"

# The command's flags; NODE_BENCH_FLAGS come after them and win.
flags=(-stock-kubelet "${STOCK_KUBELET}")
configs="stock, gate off, gate on and all gates"
if [ "${NODE_BENCH_STOCK:-1}" = 0 ]; then
  flags+=(-stock=false)
  configs="gate off, gate on and all gates"
fi
if [ -n "${NODE_BENCH_SIZES:-}" ]; then
  flags+=(-sizes "${NODE_BENCH_SIZES}")
  configs="${configs} at ${NODE_BENCH_SIZES} pods"
fi
step "real-node benchmark, ${configs} (flags: ${NODE_BENCH_FLAGS:-defaults})"
# Charts of an earlier run would stand beside this run's report.
rm -f "${OUT}/node-bench/"*.png
# shellcheck disable=SC2086 # the flags are words
(cd "${ROOT}" && EVM_KUBELET="${KUBELET}" go run ./cmd/node-bench -out "${OUT}" -dir "${OUT}/node-bench" "${flags[@]}" ${NODE_BENCH_FLAGS:-}) ||
  die "node-bench failed; the nodes' logs are under _output/node-bench/work-* (with NODE_BENCH_SIZES, pods-N/work-*)/logs."
step_done
