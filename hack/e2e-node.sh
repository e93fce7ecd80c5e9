#!/usr/bin/env bash
# make e2e-node: upstream's node e2e suite, run locally and offline against
# the container runtime from make node-deps (containerd, or CRI-O with
# NODE_RUNTIME=crio; NODE_CRIO_POD_EVENTS=false turns its events off) and the
# patched kubelet (pkg/nodee2e/run).
# It builds e2e_node.test from the assembled tree (about 4 minutes warm,
# longer cold), puts the kubelet beside it, tags the local busybox, pause and
# agnhost images with the names the e2e framework expects, and runs, with the
# gate on, the EventedVolumeManager tests, upstream's "Kubelet Volume Manager"
# test and upstream's [NodeConformance] volume specs: [sig-storage] ConfigMap,
# Secrets, Downward API volume, EmptyDir volumes, Projected configMap, secret,
# downwardAPI and combined, and HostPath. etcd and the API server run inside
# the test binary.
#
#   E2E_FOCUS=REGEXP   the tests to run (--ginkgo.focus); the default is above
#   E2E_SKIP=REGEXP    the tests not to run (--ginkgo.skip); by default upstream's
#                      [Flaky] and [Slow] specs, and its storage specs that are
#                      [Serial], [Disruptive] or behind a [Feature:...]. The
#                      gate's own specs are [Serial] and [Feature:OffByDefault]
#                      (an alpha gate), one of them [Disruptive], so a plain
#                      "\[Serial\]|\[Disruptive\]|\[Feature:" would skip them all.
#                      E2E_SKIP= (empty) skips nothing.
#   E2E_GATE=true      the gate's value; with false the gate's own specs are
#                      skipped by default (they would restart the kubelet
#                      through systemd to turn the gate on)
#   E2E_PROCS=3        the Ginkgo processes that run the specs (ginkgo --procs,
#                      with the Ginkgo CLI built at the tree's version); the
#                      first starts the suite's services and kubelet, [Serial]
#                      specs run alone at the end. E2E_PROCS=1 runs the test
#                      binary by itself, as before.
#
# Needs root. The host is restored when it stops (the kubelet root is
# /var/lib/kubelet, as the suite requires).

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$(id -u)" = 0 ] || die "the node e2e suite needs root (it runs a container runtime, runc and a kubelet)."
[ -d "${TREE}/.git" ] || die "${TREE#"${ROOT}/"} does not exist: run make first."
[ -f "${OUT}/images/agnhost.tar" ] || die "_output/images/agnhost.tar is missing: run make node-deps first."
E2E_PROCS="${E2E_PROCS:-3}"
[[ "${E2E_PROCS}" =~ ^[1-9][0-9]*$ ]] || die "E2E_PROCS=${E2E_PROCS}: want a number of processes, 1 or more."
E2E="${OUT}/e2e-node"
mkdir -p "${E2E}"
total_start=$(date +%s)

step "building e2e_node.test from the tree (about 4 minutes warm)"
(cd "${TREE}" && go test -c -o "${E2E}/e2e_node.test" ./test/e2e_node/) ||
  die "building test/e2e_node failed; see the compiler's output above."
ln -sf "${KUBELET}" "${E2E}/kubelet"
step_done

if [ "${E2E_PROCS}" -gt 1 ]; then
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
E2E_FOCUS="${E2E_FOCUS:-${default_focus}}"
: "${E2E_GATE:=true}"
if [ "${E2E_GATE}" = false ]; then
  # The gate's own specs need the gate on. With it off they would turn it on
  # by restarting the kubelet through systemd (sudo systemctl), which a host
  # without systemd cannot do: with the gate off they are skipped.
  default_skip="${default_skip}|Evented Volume Manager"
fi
if [ "${NODE_RUNTIME:-containerd}" = crio ]; then
  # CRI-O gives a privileged container every capability up to cap_last_cap;
  # containerd gives it the capabilities it has itself. Where the host's
  # bounding set lacks one (CAP_SYS_RESOURCE on the project's machines), runc
  # cannot raise it, and privileged containers never start on CRI-O.
  bounding=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
  last_cap=$(cat /proc/sys/kernel/cap_last_cap)
  if [ $((16#${bounding})) != $(( (1 << (last_cap + 1)) - 1 )) ]; then
    echo "    this host's capability bounding set (CapBnd ${bounding}) lacks capabilities up to cap_last_cap ${last_cap}:"
    echo "    CRI-O's privileged containers cannot start, so upstream's privileged HostPath specs are skipped"
    default_skip="${default_skip}|HostPath should support (r/w|subPath)"
  fi
fi
E2E_SKIP="${E2E_SKIP-${default_skip}}"
step "node e2e (EventedVolumeManager=${E2E_GATE})"
echo "    focus: ${E2E_FOCUS}"
echo "    skip:  ${E2E_SKIP}"
echo "    procs: ${E2E_PROCS}"
(cd "${ROOT}" && go run ./pkg/nodee2e/run -out "${OUT}" -test "${E2E}/e2e_node.test" \
  -procs "${E2E_PROCS}" -ginkgo "${E2E}/ginkgo" -focus "${E2E_FOCUS}" -skip "${E2E_SKIP}" -gate="${E2E_GATE}" "${image_flags[@]}") ||
  die "the node e2e suite failed; its log is ${E2E#"${ROOT}/"}/e2e.log and the JUnit report is under ${E2E#"${ROOT}/"}/report."
step_done
printf 'make e2e-node done in %ss\n' "$(( $(date +%s) - total_start ))"
