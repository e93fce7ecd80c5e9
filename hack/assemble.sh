#!/usr/bin/env bash
# Assembles _output/kubernetes: pristine Kubernetes v1.37.0 (or KUBE_VERSION, into
# _output/kubernetes-<release>) rebuilt offline from
# the Go module proxy (k8s.io/kubernetes plus the k8s.io/* staging modules), as a
# git repository tagged with the release, with one commit per patch of patches/ on top.
#
# It is idempotent:
#   - an unchanged series reuses the tree as it is (with any commits made there);
#   - a series just exported from the tree is recognised and reused;
#   - a changed series rebuilds the commits from the tag, unless the tree holds
#     work that is not in patches/ (then it stops; FORCE=1 discards that work).
# A patch that does not apply is named, and the tree is left as it was.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STAMP_SERIES="${TREE}/.git/evm-series"
STAMP_HEAD="${TREE}/.git/evm-head"

series_hash() {
  series_files | xargs -r cat | sha256sum | cut -d' ' -f1
}

record_stamp() {
  series_hash > "${STAMP_SERIES}"
  tree_git rev-parse HEAD > "${STAMP_HEAD}"
}

# apply_series DIR: resets DIR's branch to the tag and applies every patch.
# On failure it names the patch, restores the previous HEAD and fails.
apply_series() {
  local dir="$1" orig
  step "applying the series ($(series_files | wc -l) patches)"
  orig=$(git -C "${dir}" rev-parse HEAD)
  git -C "${dir}" checkout -q -f -B "${TREE_BRANCH}" "${KUBE_VERSION}"
  if ! am_series "${dir}"; then
    git -C "${dir}" checkout -q -f -B "${TREE_BRANCH}" "${orig}"
    die "patch ${FAILED_PATCH} does not apply to ${KUBE_VERSION}; the tree was left at its previous HEAD.
  Fix the patch (or rebase the tree and run make update-patches), then rerun make."
  fi
  step_done
}

# exported_matches: whether exporting the tree now would reproduce patches/.
exported_matches() {
  local tmp rc=0
  tmp=$(mktemp -d "${OUT}/export.XXXXXX")
  "${ROOT}/hack/update-patches.sh" --to "${tmp}" >/dev/null
  diff -r -q "${tmp}" "${PATCHES}" --exclude='*.md' >/dev/null 2>&1 || rc=1
  rm -rf "${tmp}"
  return "${rc}"
}

main() {
  mkdir -p "${OUT}" "${PATCHES}"
  if [ ! -d "${TREE}/.git" ] || ! tree_git rev-parse -q --verify "refs/tags/${KUBE_VERSION}" >/dev/null; then
    local tmp="${TREE}.tmp"
    rm -rf "${tmp}"
    trap 'rm -rf "${TREE}.tmp"' EXIT
    make_pristine "${tmp}"
    apply_series "${tmp}"
    rm -rf "${TREE}"
    mv "${tmp}" "${TREE}"
    trap - EXIT
    record_stamp
    return
  fi

  step "checking ${TREE#"${ROOT}/"} against patches/"
  if [ "$(cat "${STAMP_SERIES}" 2>/dev/null)" = "$(series_hash)" ]; then
    echo "    the series is unchanged: reusing the tree"
  elif exported_matches; then
    echo "    patches/ was exported from the tree: reusing it"
    record_stamp
  else
    local clean=1
    [ -z "$(tree_git status --porcelain --untracked-files=no)" ] || clean=0
    [ "$(tree_git rev-parse HEAD)" = "$(cat "${STAMP_HEAD}" 2>/dev/null)" ] || clean=0
    if [ "${clean}" = 0 ] && [ "${FORCE:-0}" != 1 ]; then
      die "the series changed, but ${TREE#"${ROOT}/"} holds commits or edits that are not in patches/.
  Keep them: commit them in the tree and run 'make update-patches'. Discard them: rerun with FORCE=1."
    fi
    echo "    the series changed: rebuilding the commits from ${KUBE_VERSION}"
    step_done
    apply_series "${TREE}"
    record_stamp
    return
  fi
  step_done
}

main "$@"
