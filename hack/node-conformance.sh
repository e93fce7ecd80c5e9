#!/usr/bin/env bash
# make node-conformance: upstream's [NodeConformance] node e2e specs, offline,
# on upstream's v1.37.0 kubelet (make kubelet-stock) and on the series' with
# the EventedVolumeManager gate on, one after the other on the same runtime
# (NODE_RUNTIME=crio for CRI-O), through make test-e2e-node. Then the table:
# specs run, passed, failed and skipped for each, and every spec whose outcome
# differs. It fails if a spec that passed on stock did not pass with the gate
# on.
#
# The specs are upstream's node conformance presubmit's: [NodeConformance]
# without [Flaky], [Slow] or [Serial]. SLOW=true adds the [Slow] and [Serial]
# ones. The specs that cannot run on this machine are skipped as listed, each
# with its reason, in hack/node-conformance-offline.txt.
#
#   PARALLELISM=8    Ginkgo processes (upstream's default)
#   FOCUS=REGEXP     a narrower set (--ginkgo.focus), such as
#                    'Containers Lifecycle.*\[NodeConformance\]'; the skips
#                    above still apply
#   GATES="stock true"  the configurations, in order (GATE of make
#                    test-e2e-node: all is every gate on); the first is the
#                    reference
#
# Each configuration's log and JUnit report, and the table (report.md), go to
# _output/node-conformance/<runtime>. About 40 minutes a configuration on two
# cores. Needs root.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_root "the node e2e suite" "it runs a container runtime, runc and a kubelet"
runtime="${NODE_RUNTIME:-containerd}"
results="${OUT}/node-conformance/${runtime}"
offline="${ROOT}/hack/node-conformance-offline.txt"
total_start=$(date +%s)

skip='\[Flaky\]'
[ "${SLOW:-false}" = true ] || skip='\[Flaky\]|\[Slow\]|\[Serial\]'
reasons=""
while IFS=$'\t' read -r regexp reason; do
  [[ -z "${regexp}" || "${regexp}" == \#* ]] && continue
  skip="${skip}|${regexp}"
  reasons+="- \`${regexp}\`: ${reason}"$'\n'
done <"${offline}"

rm -rf "${results}"
mkdir -p "${results}"
runs=()
failed=()
for gate in ${GATES:-stock true}; do
  step "NodeConformance on ${runtime}, GATE=${gate}"
  FOCUS="${FOCUS:-\[NodeConformance\]}" SKIP="${skip}" GATE="${gate}" PARALLELISM="${PARALLELISM:-8}" \
    TIMEOUT="${TIMEOUT:-100m}" RESULTS="${results}/${gate}" "${ROOT}/hack/test-e2e-node.sh" || failed+=("${gate}")
  case "${gate}" in
    stock) label="stock ${KUBE_VERSION}" ;;
    true) label="gate on" ;;
    all) label="all gates" ;;
    *) label="gate off" ;;
  esac
  runs+=("${label}=${results}/${gate}")
  step_done
done

rc=0
step "the table: ${results#"${ROOT}/"}/report.md"
{
  echo "### NodeConformance on ${runtime}: $(IFS=' '; echo "${GATES:-stock true}")"
  echo
  echo "Focus \`${FOCUS:-\\[NodeConformance\\]}\`; skipped: \`${skip}\`. Skipped because they cannot run here:"
  echo
  printf '%s' "${reasons}"
  echo
  (cd "${ROOT}" && go run ./cmd/junit-compare "${runs[@]}")
} >"${results}/report.md" || rc=$?
sed 's/^/    /' "${results}/report.md"
step_done
[ "${rc}" = 0 ] || die "a spec that passed on the first configuration did not pass on another (listed above)."
[ "${#failed[@]}" = 0 ] || echo "    specs failed with GATE=${failed[*]}, on stock too where the table says so"
printf 'make node-conformance done in %ss\n' "$(( $(date +%s) - total_start ))"
