#!/usr/bin/env bash
# Builds _output/bin/kubelet (_output/bin/kubelet-<release> for another
# KUBE_VERSION) from the assembled tree, with version ldflags the way
# upstream's hack/lib/version.sh sets them. The version is the release plus
# our suffix: v1.37.0-evm.<commits past the tag>+<commit>[-dirty].

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -d "${TREE}/.git" ] || die "${TREE#"${ROOT}/"} does not exist: run make first."

commit=$(tree_git rev-parse HEAD)
count=$(tree_git rev-list --count "${KUBE_VERSION}..HEAD")
state=clean
if [ -n "$(tree_git status --porcelain --untracked-files=no)" ]; then
  state=dirty
fi
version="${KUBE_VERSION}-evm.${count}+${commit:0:12}"
[ "${state}" = clean ] || version="${version}-dirty"
# The build date is the commit's, so the same tree builds the same binary.
build_date=$(TZ=UTC tree_git show -s --date=format-local:'%Y-%m-%dT%H:%M:%SZ' --format=%cd HEAD)
major=${KUBE_VERSION#v}; major=${major%%.*}
minor=${KUBE_VERSION#v}; minor=${minor#*.}; minor=${minor%%.*}

ldflags=""
for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
  ldflags+=" -X '${pkg}.gitVersion=${version}'"
  ldflags+=" -X '${pkg}.gitCommit=${commit}'"
  ldflags+=" -X '${pkg}.gitTreeState=${state}'"
  ldflags+=" -X '${pkg}.buildDate=${build_date}'"
  ldflags+=" -X '${pkg}.gitMajor=${major}'"
  ldflags+=" -X '${pkg}.gitMinor=${minor}'"
done

step "building ${KUBELET#"${ROOT}/"} ${version} (cold: about 7 minutes on 2 cores)"
mkdir -p "$(dirname "${KUBELET}")"
(cd "${TREE}" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags}" -o "${KUBELET}.new" ./cmd/kubelet) ||
  die "the kubelet does not build from ${TREE#"${ROOT}/"}; fix the tree (or the patch) and rerun make."
mv "${KUBELET}.new" "${KUBELET}"
"${KUBELET}" --version
step_done
