#!/usr/bin/env bash
# Builds _output/bin/kubelet (_output/bin/kubelet-<release> for another
# KUBE_VERSION) from the assembled tree, with version ldflags the way
# upstream's hack/lib/version.sh sets them. The version is the release plus
# our suffix: v1.37.0-evm.<commits past the tag>+<commit>[-dirty].

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_tree

kube_ldflags "${TREE}"

step "building ${KUBELET#"${ROOT}/"} ${KUBE_BUILD_VERSION} (cold: about 7 minutes on 2 cores)"
go_build_kubelet "${TREE}" "${KUBELET}" ||
  die "the kubelet does not build from ${TREE#"${ROOT}/"}; fix the tree (or the patch) and rerun make."
"${KUBELET}" --version
step_done
