#!/usr/bin/env bash
# make test-e2e-node: upstream's node e2e suite, run locally and offline
# against the container runtime from make node-deps (containerd, or CRI-O with
# NODE_RUNTIME=crio; NODE_CRIO_POD_EVENTS=false turns its events off) and the
# patched kubelet (cmd/e2e-node).
# It builds e2e_node.test from the assembled tree (about 4 minutes warm,
# longer cold), puts the kubelet beside it, tags the local busybox, pause and
# agnhost images with the names the e2e framework expects, and runs, with the
# gate on, the EventedVolumeManager tests, upstream's "Kubelet Volume Manager"
# test and upstream's [NodeConformance] volume specs: [sig-storage] ConfigMap,
# Secrets, Downward API volume, EmptyDir volumes, Projected configMap, secret,
# downwardAPI and combined, and HostPath. etcd and the API server run inside
# the test binary.
#
# FOCUS, SKIP and PARALLELISM mean what they mean to upstream's
# make test-e2e-node:
#   FOCUS=REGEXP     the tests to run (--ginkgo.focus); the default is above
#   SKIP=REGEXP      the tests not to run (--ginkgo.skip); by default upstream's
#                    [Flaky] and [Slow] specs, and its storage specs that are
#                    [Serial], [Disruptive] or behind a [Feature:...]. The
#                    gate's own specs are [Serial] and [Feature:OffByDefault]
#                    (an alpha gate), one of them [Disruptive], so a plain
#                    "\[Serial\]|\[Disruptive\]|\[Feature:" would skip them all.
#                    SKIP= (empty) skips nothing.
#   PARALLELISM=3    the Ginkgo processes that run the specs (ginkgo --procs,
#                    with the Ginkgo CLI built at the tree's version; upstream's
#                    default is 8); the first starts the suite's services and
#                    kubelet, [Serial] specs run alone at the end.
#                    PARALLELISM=1 runs the test binary by itself.
#   GATE=true        the EventedVolumeManager gate; with false the gate's own
#                    specs are skipped by default (they would restart the
#                    kubelet through systemd to turn the gate on). GATE=stock
#                    runs upstream's v1.37.0 kubelet (make kubelet-stock),
#                    which has no such gate, and skips them too. GATE=all
#                    turns on every gate of the series.
#   TIMEOUT=45m      the suite's timeout
#   RESULTS=DIR      also keep the suite's log and JUnit report in DIR
#
# Needs root. The host is restored when it stops (the kubelet root is
# /var/lib/kubelet, as the suite requires).

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_root "the node e2e suite" "it runs a container runtime, runc and a kubelet"
require_tree
[ -f "${OUT}/images/agnhost.tar" ] || die "_output/images/agnhost.tar is missing: run make node-deps first."
# The suite's kubelet evicts pods, and rejects new ones, while its root's
# filesystem has less than 15 % available (the default imagefs.available
# threshold, which applies when the runtime has no separate image
# filesystem): every spec then fails on DiskPressure.
read -r avail size < <(df --output=avail,size -k "$(for d in /var/lib/kubelet /var/lib /; do [ -d "${d}" ] && echo "${d}" && break; done)" | tail -1)
[ $((avail * 100 / size)) -ge 17 ] ||
  die "only $((avail * 100 / size)) % of the disk is free, and the suite's kubelet rejects pods below 15 %: free at least $(((size * 17 / 100 - avail) / 1048576 + 1)) GiB (go clean -cache, make clean) and run it again."
PARALLELISM="${PARALLELISM:-3}"
[[ "${PARALLELISM}" =~ ^[1-9][0-9]*$ ]] || die "PARALLELISM=${PARALLELISM}: want a number of Ginkgo processes, 1 or more."
E2E="${OUT}/e2e-node"
mkdir -p "${E2E}"
total_start=$(date +%s)

step "building e2e_node.test from the tree (about 4 minutes warm)"
(cd "${TREE}" && go test -c -o "${E2E}/e2e_node.test" ./test/e2e_node/) ||
  die "building test/e2e_node failed; see the compiler's output above."
GATE="${GATE:-true}"
case "${GATE}" in
  true | false) ln -sf "${KUBELET}" "${E2E}/kubelet" && kubelet_flags=(-feature-gates "EventedVolumeManager=${GATE}") ;;
  all) ln -sf "${KUBELET}" "${E2E}/kubelet" &&
    kubelet_flags=(-feature-gates "EventedVolumeManager=true,RelistOnPodTermination=true,VolumesInUseNodeStatusUpdate=true") ;;
  stock)
    [ -x "${STOCK_KUBELET}" ] || die "GATE=stock needs upstream's kubelet: run make kubelet-stock first."
    ln -sf "${STOCK_KUBELET}" "${E2E}/kubelet"
    kubelet_flags=(-kubelet stock)
    ;;
  *) die "GATE=${GATE}: want true, false, all or stock." ;;
esac
step_done

if [ "${PARALLELISM}" -gt 1 ]; then
  # At the version the tree's go.mod pins, from the module cache: offline,
  # about 40 s cold and a second or two once built.
  step "building the Ginkgo CLI at the tree's version"
  (cd "${TREE}" && go build -o "${E2E}/ginkgo" github.com/onsi/ginkgo/v2/ginkgo) ||
    die "building the Ginkgo CLI failed; see the compiler's output above."
  echo "    $("${E2E}/ginkgo" version)"
  step_done
fi

step "image names the e2e framework expects"
# A small program in the tree's own (git-ignored) _output directory asks the
# framework for its image names, so they follow the tree's manifest.
mkdir -p "${TREE}/_output/evm-e2e-images"
cat >"${TREE}/_output/evm-e2e-images/main.go" <<'GO'
package main

import (
	"fmt"

	imageutils "k8s.io/kubernetes/test/utils/image"
)

func main() {
	fmt.Printf("busybox=%s\n", imageutils.GetE2EImage(imageutils.BusyBox))
	fmt.Printf("pause=%s\n", imageutils.GetPauseImageName())
	fmt.Printf("agnhost=%s\n", imageutils.GetE2EImage(imageutils.Agnhost))
}
GO
image_flags=()
while IFS= read -r line; do
  echo "    ${line}"
  image_flags+=(-image "${line}")
done < <(cd "${TREE}" && go run ./_output/evm-e2e-images)
[ "${#image_flags[@]}" = 6 ] || die "could not read the e2e framework's image names."
step_done

default_focus='Evented Volume Manager|Kubelet Volume Manager|\[sig-storage\] (ConfigMap|Secrets|Downward API volume|EmptyDir volumes|Projected (configMap|secret|downwardAPI|combined)|HostPath) .*\[NodeConformance\]'
default_skip='\[Flaky\]|\[Slow\]|\[sig-storage\] .*(\[Serial\]|\[Disruptive\]|\[Feature:)'
FOCUS="${FOCUS:-${default_focus}}"
if [ "${GATE}" != true ] && [ "${GATE}" != all ]; then
  # The gate's own specs need the gate on. With it off they would turn it on
  # by restarting the kubelet through systemd (sudo systemctl), which a host
  # without systemd cannot do: with the gate off they are skipped.
  default_skip="${default_skip}|Evented Volume Manager"
fi
use_runtime "${NODE_RUNTIME:-}"
runtime_skip=$(runtime_e2e_skip)
[ -z "${runtime_skip}" ] || default_skip="${default_skip}|${runtime_skip}"
SKIP="${SKIP-${default_skip}}"
step "node e2e (EventedVolumeManager=${GATE})"
status=0
echo "    focus:       ${FOCUS}"
echo "    skip:        ${SKIP}"
echo "    parallelism: ${PARALLELISM}"
(cd "${ROOT}" && go run ./cmd/e2e-node -out "${OUT}" -test "${E2E}/e2e_node.test" \
  -procs "${PARALLELISM}" -ginkgo "${E2E}/ginkgo" -focus "${FOCUS}" -skip "${SKIP}" "${kubelet_flags[@]}" -timeout "${TIMEOUT:-45m}" "${image_flags[@]}") || status=$?
if [ -n "${RESULTS:-}" ]; then
  mkdir -p "${RESULTS}" && cp -r "${E2E}/e2e.log" "${E2E}/report" "${RESULTS}/" &&
    echo "    the log and the JUnit report are in ${RESULTS}"
fi
[ "${status}" = 0 ] ||
  die "the node e2e suite failed; its log is ${E2E#"${ROOT}/"}/e2e.log and the JUnit report is under ${E2E#"${ROOT}/"}/report."
step_done
printf 'make test-e2e-node done in %ss\n' "$(( $(date +%s) - total_start ))"
