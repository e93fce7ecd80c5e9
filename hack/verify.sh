#!/usr/bin/env bash
# Checks that patches/ is the product it should be:
#   1. the series applies cleanly to the pristine release (v1.37.0, or
#      KUBE_VERSION) and gives exactly the assembled tree's HEAD, and on
#      v1.37.0 re-exporting the tree reproduces patches/;
#   2. the lines the series changes in upstream's own files stay few (under
#      UPSTREAM_LINES_LIMIT): the mechanism lives in new files;
#   3. gofmt and go vet pass on the packages the series changes;
#   4. upstream's feature-gate list checks pass;
#   5. every patch follows the series rules (upstream-style subjects, no
#      machine-specific paths).

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -d "${TREE}/.git" ] || die "${TREE#"${ROOT}/"} does not exist: run make first."
total_start=$(date +%s)

# changed_go_files: Go files the series adds or modifies.
changed_go_files() {
  tree_git diff --name-only --diff-filter=ACMR "${KUBE_VERSION}..HEAD" -- '*.go'
}
# changed_packages: ./dir for every directory with a changed Go file.
changed_packages() {
  changed_go_files | xargs -r -n1 dirname | LC_ALL=C sort -u | sed 's|^|./|'
}

step "the series applies to pristine ${KUBE_VERSION} and gives the tree's HEAD"
if [ -n "$(tree_git status --porcelain --untracked-files=no)" ]; then
  echo "    warning: the tree has uncommitted edits; verifying its HEAD only" >&2
fi
wt="${OUT}/verify-worktree${VERSION_SUFFIX}"
cleanup() {
  tree_git worktree remove --force "${wt}" >/dev/null 2>&1 || rm -rf "${wt}"
  tree_git worktree prune >/dev/null 2>&1 || true
  rm -rf "${OUT}/verify-export"
}
trap cleanup EXIT
cleanup
tree_git worktree add -q --detach "${wt}" "${KUBE_VERSION}"
am_series "${wt}" >/dev/null || die "patch ${FAILED_PATCH} does not apply to pristine ${KUBE_VERSION}."
want=$(tree_git rev-parse 'HEAD^{tree}')
got=$(git -C "${wt}" rev-parse 'HEAD^{tree}')
if [ "${want}" != "${got}" ]; then
  git -C "${wt}" diff --stat HEAD "$(tree_git rev-parse HEAD)" >&2 || true
  die "patches/ does not reproduce the tree's HEAD (tree ${want}, series ${got}).
  Run 'make export' and commit patches/."
fi
if [ "${KUBE_VERSION}" = "${SERIES_BASE}" ]; then
  "${ROOT}/hack/export.sh" --to "${OUT}/verify-export" >/dev/null
  if ! diff -r -q "${OUT}/verify-export" "${PATCHES}" >/dev/null; then
    diff -r "${OUT}/verify-export" "${PATCHES}" | head -40 >&2 || true
    die "patches/ differs from what 'make export' writes for the tree. Run 'make export' and commit patches/."
  fi
else
  echo "    patches/ is exported against ${SERIES_BASE}; on ${KUBE_VERSION} it has to apply and give the tree"
fi
echo "    $(series_files | wc -l) patches reproduce ${want:0:12}"
step_done

UPSTREAM_LINES_LIMIT=300
step "lines changed in upstream's own files (limit ${UPSTREAM_LINES_LIMIT})"
# Files that exist in the release and that the series modifies, with the
# lines each adds and removes; new files are the series' own.
upstream_changes=$(tree_git diff --numstat --diff-filter=M "${KUBE_VERSION}..HEAD")
printf '%s\n' "${upstream_changes}" | awk 'NF == 3 {printf "    %5d  %s\n", $1 + $2, $3}'
upstream_lines=$(printf '%s\n' "${upstream_changes}" | awk 'NF == 3 {n += $1 + $2} END {print n + 0}')
echo "    ${upstream_lines} lines changed in $(printf '%s\n' "${upstream_changes}" | grep -c . || true) upstream files"
new_files=$(tree_git diff --numstat --diff-filter=A "${KUBE_VERSION}..HEAD")
echo "    the series' own files: $(printf '%s\n' "${new_files}" | grep -v '_test\.go' | awk 'NF == 3 {n += $1; f++} END {printf "%d lines in %d files", n, f}') besides tests, $(printf '%s\n' "${new_files}" | grep '_test\.go' | awk 'NF == 3 {n += $1; f++} END {printf "%d lines in %d test files", n, f}')"
[ "${upstream_lines}" -lt "${UPSTREAM_LINES_LIMIT}" ] ||
  die "the series changes ${upstream_lines} lines of upstream's files: move the mechanism into new files."
step_done

step "gofmt on the Go files the series changes"
files=$(changed_go_files)
if [ -n "${files}" ]; then
  bad=$(cd "${TREE}" && gofmt -l ${files})
  [ -z "${bad}" ] || die "gofmt would change: ${bad}
  Run gofmt -w on them in the tree, commit, and make export."
fi
echo "    $(printf '%s\n' "${files}" | grep -c . || true) files"
step_done

step "go vet on the packages the series changes"
pkgs=$(changed_packages)
if [ -n "${pkgs}" ]; then
  (cd "${TREE}" && go vet ${pkgs}) || die "go vet failed on: ${pkgs}"
fi
echo "    ${pkgs:-no packages}" | tr '\n' ' '; echo
step_done

step "upstream feature-gate checks (hack/verify-featuregates.sh, hack/verify-test-featuregates.sh)"
(cd "${TREE}" && bash hack/verify-featuregates.sh >"${OUT}/verify-featuregates.log" 2>&1) || {
  tail -20 "${OUT}/verify-featuregates.log" >&2
  die "the generated feature lists are out of date: run hack/update-featuregates.sh in the tree, commit, and make export."
}
(cd "${TREE}" && bash hack/verify-test-featuregates.sh) ||
  die "a test sets a mutable feature gate directly; use featuregatetesting.SetFeatureGateDuringTest."
step_done

step "series rules: upstream-style subjects, no machine-specific paths"
(cd "${ROOT}" && go test -count=1 ./test/series/) || die "a patch breaks the series rules (see above)."
step_done

printf 'verify passed in %ss\n' "$(( $(date +%s) - total_start ))"
