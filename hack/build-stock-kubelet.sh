#!/usr/bin/env bash
# Builds _output/bin/kubelet-stock (_output/bin/kubelet-stock-<release> for
# another KUBE_VERSION): upstream's kubelet of the release, from the assembled
# tree's release tag without the series, for node-bench's stock column. It
# builds in a temporary git worktree of the tree at the tag, with the same Go
# flags and build cache as build-kubelet.sh, and removes the worktree
# afterwards. The tag's commit and the Go version are recorded in
# kubelet-stock.stamp beside the binary; while they match, the binary is kept.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_tree
commit=$(tree_git rev-parse -q --verify "refs/tags/${KUBE_VERSION}^{commit}") ||
  die "${TREE#"${ROOT}/"} has no tag ${KUBE_VERSION}: run make (it assembles the tree from the tag)."
stamp="${STOCK_KUBELET}.stamp"
want="${commit} $(go env GOVERSION)"

step "upstream's kubelet ${KUBE_VERSION} without the series: ${STOCK_KUBELET#"${ROOT}/"}"
if [ -x "${STOCK_KUBELET}" ] && [ "$(cat "${stamp}" 2>/dev/null)" = "${want}" ]; then
  echo "    already built from ${KUBE_VERSION} (${commit:0:12}) with $(go env GOVERSION): keeping it"
  "${STOCK_KUBELET}" --version | sed 's/^/    /'
  step_done
  exit 0
fi
if [ -e "${stamp}" ]; then
  echo "    built from $(cat "${stamp}"), want ${want}: rebuilding"
else
  echo "    not built yet"
fi
step_done

wt="${OUT}/stock-worktree${VERSION_SUFFIX}"
cleanup() {
  tree_git worktree remove --force "${wt}" >/dev/null 2>&1 || rm -rf "${wt}"
  tree_git worktree prune >/dev/null 2>&1 || true
}
trap cleanup EXIT
cleanup

step "checking out ${KUBE_VERSION} (${commit:0:12}) in a worktree, ${wt#"${ROOT}/"}"
tree_git worktree add -q --detach "${wt}" "${commit}"
step_done

kube_ldflags "${wt}"
step "building ${STOCK_KUBELET#"${ROOT}/"} ${KUBE_BUILD_VERSION} (the packages the series leaves alone come from the build cache)"
rm -f "${stamp}"
go_build_kubelet "${wt}" "${STOCK_KUBELET}" ||
  die "upstream's kubelet does not build from ${KUBE_VERSION} in ${wt#"${ROOT}/"}."
echo "${want}" >"${stamp}"
"${STOCK_KUBELET}" --version | sed 's/^/    /'
step_done

step "removing the worktree ${wt#"${ROOT}/"}"
cleanup
trap - EXIT
step_done
