#!/usr/bin/env bash
# make bench: the in-tree side-by-side benchmark. For each size it runs
# TestVolumeManagerSideBySide (pkg/kubelet/volumemanager) once, which measures
# a real volume manager with the gate off and then on in the same process,
# then TestControllerAttachLatencySideBySide, which fails unless every round
# mounts a late-attached volume after the attach and within 10 s and the
# gate on with the node informer's wake mounts it no slower than polling;
# then cmd/bench-report prints the tables and writes the charts under
# _output/bench.
#
#   BENCH_SIZES="110x4 500x4"  pods x volumes per pod
#   BENCH_IDLE=30s             the idle window per mode
#   BENCH_ATTACH_ROUNDS=5      rounds of the controller-attach probe

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_tree

# The side-by-side benchmark and the controller-attach probe measure the
# series but are not part of it (upstream would not merge them): they live in
# test/kubelet/testdata/volumemanager, and are copied into the tree's package
# for the run and removed when it ends.
inject_dir="${TREE}/pkg/kubelet/volumemanager"
injected=()
for f in "${ROOT}"/test/kubelet/testdata/volumemanager/*_test.go; do
  cp "${f}" "${inject_dir}/"
  injected+=("${inject_dir}/$(basename "${f}")")
done
trap 'rm -f "${injected[@]}"' EXIT
echo "    copied ${#injected[@]} benchmark files into ${inject_dir#"${ROOT}/"} for this run"

BENCH="${OUT}/bench"
mkdir -p "${BENCH}"
total_start=$(date +%s)
results=()
for size in ${BENCH_SIZES:-110x4 500x4}; do
  pods=${size%x*}; volumes=${size#*x}
  step "side by side, gate off then on: ${pods} pods x ${volumes} volumes, ${BENCH_IDLE:-30s} idle (a few minutes)"
  out="${BENCH}/P${pods}-V${volumes}.json"
  rm -f "${out}"
  (cd "${TREE}" && go test -count=1 -timeout 60m -run '^TestVolumeManagerSideBySide$' -v ./pkg/kubelet/volumemanager/ \
    -args -side-by-side-out="${out}" -side-by-side-pods="${pods}" -side-by-side-volumes="${volumes}" -side-by-side-idle="${BENCH_IDLE:-30s}" \
    >"${BENCH}/P${pods}-V${volumes}.log" 2>&1) || {
    grep -E "^(---|FAIL|panic)|sidebyside_test.go" "${BENCH}/P${pods}-V${volumes}.log" | tail -20 >&2
    die "the benchmark failed; its log is ${BENCH#"${ROOT}/"}/P${pods}-V${volumes}.log"
  }
  grep -E "sidebyside_test.go:[0-9]+: gate=" "${BENCH}/P${pods}-V${volumes}.log" | sed 's/^ */    /'
  results+=("${out}")
  step_done
done

# A volume the attach/detach controller attaches 2s after its pod was added:
# how long after the node's status lists it the volume is mounted, gate off
# against gate on (with and without the node informer's wake), real clock.
# The test fails if a round mounts it before the attach or not within 10 s,
# or if the gate on with the wake is slower than polling (p50).
step "controller attach landing late: attach -> mounted, gate off vs on, ${BENCH_ATTACH_ROUNDS:-5} rounds (about 40 seconds)"
(cd "${TREE}" && go test -count=1 -timeout 10m -run '^TestControllerAttachLatencySideBySide$' -v ./pkg/kubelet/volumemanager/ \
  -args -attach-probe-rounds="${BENCH_ATTACH_ROUNDS:-5}" >"${BENCH}/controller-attach.log" 2>&1) || {
  grep -E "^(---|FAIL|panic)|attach_probe_test.go" "${BENCH}/controller-attach.log" | tail -20 >&2
  die "the controller-attach probe failed; its log is ${BENCH#"${ROOT}/"}/controller-attach.log"
}
grep -E "attach_probe_test.go:[0-9]+: controller attach" "${BENCH}/controller-attach.log" | sed 's/^ */    /'
step_done

step "report: tables and charts under _output/bench"
(cd "${ROOT}" && go run ./cmd/bench-report -out "${BENCH}" "${results[@]}")
step_done
printf 'make bench done in %ss; charts and report.md in _output/bench\n' "$(( $(date +%s) - total_start ))"
