#!/usr/bin/env bash
# make cluster-deps: what a cluster node needs besides make node-deps, into
# _output/bin, offline from the assembled tree and the Go module cache:
#   kube-apiserver and kube-controller-manager, built from the assembled tree
#     with the kubelet's version ldflags (the series does not touch them);
#   etcd, the etcd server the tree's go.mod pins, built in the tree's module
#     (go.etcd.io/etcd/server/v3/etcdmain), as the node e2e suite embeds it;
#   evm-csi, the project's CSI driver (cmd/csi-driver, pkg/csidriver: identity,
#     controller and node services with staging, and the kubelet's plugin
#     registration).
# Reruns rebuild only what is older than the tree's HEAD commit.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_tree
BIN="${OUT}/bin"
mkdir -p "${BIN}"
total_start=$(date +%s)
kube_ldflags "${TREE}"
stamp="${BIN}/.cluster-deps-${KUBE_BUILD_VERSION//[^A-Za-z0-9.-]/_}"

if [ -f "${stamp}" ] && [ -x "${BIN}/kube-apiserver" ] && [ -x "${BIN}/kube-controller-manager" ] && [ -x "${BIN}/etcd" ]; then
  echo "==> kube-apiserver, kube-controller-manager and etcd are built at ${KUBE_BUILD_VERSION}"
else
  for cmd in kube-apiserver kube-controller-manager; do
    step "building ${cmd} ${KUBE_BUILD_VERSION} from the tree (about 2 minutes after the kubelet)"
    (cd "${TREE}" && CGO_ENABLED=0 go build -trimpath -ldflags "${KUBE_LDFLAGS}" -o "${BIN}/${cmd}.new" "./cmd/${cmd}") ||
      die "${cmd} does not build from ${TREE#"${ROOT}/"}; see the compiler's output above."
    mv "${BIN}/${cmd}.new" "${BIN}/${cmd}"
    "${BIN}/${cmd}" --version
    step_done
  done

  step "building etcd at the version the tree pins"
  etcd_version=$(cd "${TREE}" && go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
  mkdir -p "${TREE}/_output/evm-etcd"
  cat >"${TREE}/_output/evm-etcd/main.go" <<'GO'
// Command etcd is the etcd server the tree's go.mod pins, for a local cluster
// node.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  (cd "${TREE}" && CGO_ENABLED=0 go build -trimpath -o "${BIN}/etcd.new" ./_output/evm-etcd) ||
    die "etcd ${etcd_version} does not build in the tree's module; see the compiler's output above."
  mv "${BIN}/etcd.new" "${BIN}/etcd"
  echo "    etcd ${etcd_version}: $("${BIN}/etcd" --version | head -1)"
  step_done
  rm -f "${BIN}"/.cluster-deps-*
  touch "${stamp}"
fi

step "building evm-csi, the project's CSI driver"
(cd "${ROOT}" && CGO_ENABLED=0 go build -o "${BIN}/evm-csi" ./cmd/csi-driver) ||
  die "cmd/csi-driver does not build; see the compiler's output above."
step_done
echo "cluster-deps done in $(( $(date +%s) - total_start ))s"
