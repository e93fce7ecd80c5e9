#!/usr/bin/env bash
# make node-test / make node-smoke: the real-node tests in test/node, which
# drive containerd, runc and the patched kubelet (gate on) through pkg/node.
#
#   EVM_NODE=full   every test (make node-test): a smoke pod, the runtime
#                   killed and restarted ten times (five on CRI-O), a kubelet
#                   restart that must reconstruct its volumes, 100 pods added
#                   and deleted at once, 250 pods of which 125 exit on
#                   their own beside 125 deletions (TestChurnWithExits), the
#                   gate flipped four times with
#                   32 pods running (TestGateFlip), and the kubelet's binary
#                   swapped from upstream's (make kubelet-stock) to the
#                   series' and back (TestBinarySwap)
#   EVM_NODE=smoke  the smoke pod only (make node-smoke, and make test as root)
#   EVM_NODE=cluster  the cluster-node tests (make node-test-cluster): etcd,
#                   kube-apiserver, kube-controller-manager, the CSI driver and
#                   attacher; every gate off, then on. EVM_TOKEN_ROTATION=false skips
#                   the wait for a 600 s token's rotation (about 9 minutes),
#                   the gate flipped off, on and off with CSI volumes
#                   attached (TestClusterGateFlip), and kube-apiserver
#                   stopped for 30 s while CSI pods come and go
#                   (TestAPIOutage).
#
# Needs root. Each test restores the host when it stops, and checks that it
# did: sysctls, fixed host paths, mounts, cgroups, processes. go test's
# output is kept in _output/node-test-<mode>.log.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mode="${EVM_NODE:-full}"
require_root "the real-node tests" "they run containerd, runc and a kubelet"
case "${mode}" in
  full) about="gate on; about 10 minutes" ;;
  cluster) about="gate off, then on; about $([ "${EVM_TOKEN_ROTATION:-}" = false ] && echo 6 || echo 15) minutes" ;;
  *) about="gate on; about 10 seconds" ;;
esac
step "real-node tests (EVM_NODE=${mode}, ${about})"
rc=0
(cd "${ROOT}" && EVM_KUBELET="${KUBELET}" EVM_NODE="${mode}" go test -count=1 -v -timeout 40m ./test/node/ 2>&1) |
  tee "${OUT}/node-test-${mode}.log" | grep -vE '^=== (RUN|PAUSE|CONT)' | sed 's/^/    /' || rc=$?
[ "${rc}" = 0 ] || die "the real-node tests failed; the nodes' logs are under _output/node/<test>/logs."
step_done
