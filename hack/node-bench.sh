#!/usr/bin/env bash
# make node-bench: the real-node side-by-side benchmark (cmd/node-bench). The
# same workload, 110 static pods x 4 volumes on containerd and runc, runs on
# a fresh node with three kubelets in each round: stock, upstream's v1.37.0
# kubelet built from the tree's tag without the series
# (_output/bin/kubelet-stock, hack/build-stock-kubelet.sh, which make
# node-bench runs first), and the series' kubelet with the
# EventedVolumeManager gate off and on. The order changes from round to
# round: odd rounds take the rotations of stock, off, on in turn (1: stock,
# off, on; 3: off, on, stock; 5: on, stock, off) and each even round runs the
# round before it backwards. It prints a markdown table (stock, gate off and
# gate on with their spread across rounds, stock/on and off/on, and the rows
# where stock and gate off differ beyond that spread) and writes
# results.json, report.md and charts to _output/node-bench. Last in each
# configuration, -exit-pods pods (20) with restartPolicy Never, the same 4
# volumes and a container that sleeps 3 to 8 s and exits 0 on its own, which
# nothing deletes, give the row "container exited on its own -> volumes
# unmounted": p50 and p99 of the time from the container's finishedAt
# (crictl inspect) to no mount left under the pod's volumes directory in
# /proc/self/mountinfo, read every -exit-poll (5ms); -exit-pods 0 leaves it
# out. About 8 minutes per configuration, 23 per round.
#
#   NODE_BENCH_FLAGS="-rounds 2 -windows 3 -window 60s -profile 60s -singles 55 -gap 1s -pods 110 -exit-pods 20 -exit-poll 5ms"
#
# With NODE_RUNTIME=crio it runs on CRI-O, and NODE_CRIO_POD_EVENTS=false
# turns CRI-O's container events off: the exit row with the gate on, events
# on against off, is that ablation.
#
# NODE_BENCH_STOCK=0 leaves stock out: gate off and on only, as before stock
# was measured (it passes -stock=false).
#
# NODE_BENCH_SIZES="110 250 500" runs the scale matrix instead (it passes
# -sizes): the benchmark at each size (its -pods), every configuration in one
# run per size, each into _output/node-bench/pods-N, then the scale table
# (scale.md) and the chart of the idle volume manager CPU against pods
# (vm-cpu-vs-pods.png) of every pods-N there.
#
# Needs root. Each node restores the host when it stops.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$(id -u)" = 0 ] || die "node-bench needs root (it runs containerd, runc and a kubelet)."

# The command's flags for stock; NODE_BENCH_FLAGS come after them and win.
if [ "${NODE_BENCH_STOCK:-1}" = 0 ]; then
  stock_flags=(-stock=false)
  configs="gate off and on"
else
  [ -x "${STOCK_KUBELET}" ] || die "${STOCK_KUBELET#"${ROOT}/"} is missing: run hack/build-stock-kubelet.sh (make node-bench does), or set NODE_BENCH_STOCK=0."
  stock_flags=(-stock-kubelet "${STOCK_KUBELET}")
  configs="stock, gate off and gate on"
fi

sizes_flags=()
if [ -n "${NODE_BENCH_SIZES:-}" ]; then
  sizes_flags=(-sizes "${NODE_BENCH_SIZES}")
  configs="${configs} at ${NODE_BENCH_SIZES} pods"
fi
step "real-node benchmark, ${configs} (flags: ${NODE_BENCH_FLAGS:-defaults})"
# shellcheck disable=SC2086 # the flags are words
(cd "${ROOT}" && EVM_KUBELET="${KUBELET}" go run ./cmd/node-bench -out "${OUT}" -dir "${OUT}/node-bench" "${stock_flags[@]}" ${NODE_BENCH_FLAGS:-} "${sizes_flags[@]}") ||
  die "node-bench failed; the nodes' logs are under _output/node-bench/work-* (with NODE_BENCH_SIZES, pods-N/work-*)/logs."
step_done
