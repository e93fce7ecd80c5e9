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
#      machine-specific paths);
#   6. the KEP names exactly the metrics the series registers: KEP.md's
#      metrics table (names, types, labels) and kep.yaml's metrics list
#      against the k8s.io/component-base/metrics constructors in the Go files
#      the series adds or changes (go/ast, pkg/kep); kep.yaml parses and
#      names the feature gate for the kubelet;
#   7. no commit of the series adds a line that a later commit deletes or
#      changes (git blame of every line the series deletes);
#   8. every commit of the series builds the kubelet and passes go vet on the
#      packages it changes (VERIFY_EACH_COMMIT=0 skips it);
#   9. the top commit of each pull request of the stack (PR_TOPS, PR.md)
#      passes the tests of the packages its PR changes (VERIFY_EACH_PR=0
#      skips it).
# It also reports, without failing on them, the lines of the series' own
# files (target 2000 besides tests) and the exported identifiers it adds.
# Checks 6 to 9 run to the end and fail verify after reporting everything.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -d "${TREE}/.git" ] || die "${TREE#"${ROOT}/"} does not exist: run make first."
total_start=$(date +%s)
# The commit every step checks, taken once: the tree may move meanwhile.
head=$(tree_git rev-parse HEAD)
# Checks that report everything before they fail add a line here; verify
# fails at the end if there is any.
failures=()

# shape CMD ARGS: the series' shape checks (pkg/series/shape) on
# KUBE_VERSION..head. The exports step builds it once per run (go run
# would add its own "exit status" line to the report).
SHAPE="${OUT}/series-shape${VERSION_SUFFIX}"
shape() {
  local cmd="$1"
  shift
  "${SHAPE}" "${cmd}" -repo "${TREE}" -base "${KUBE_VERSION}" -head "${head}" "$@"
}

# The KEP's metrics check (pkg/kep/metricscheck), built by its step.
KEPCHECK="${OUT}/kep-metricscheck${VERSION_SUFFIX}"

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
  rm -rf "${OUT}/verify-export" "${SHAPE}" "${KEPCHECK}"
}
trap cleanup EXIT
cleanup
tree_git worktree add -q --detach "${wt}" "${KUBE_VERSION}"
am_series "${wt}" >/dev/null || die "patch ${FAILED_PATCH} does not apply to pristine ${KUBE_VERSION}."
want=$(tree_git rev-parse "${head}^{tree}")
got=$(git -C "${wt}" rev-parse 'HEAD^{tree}')
if [ "${want}" != "${got}" ]; then
  git -C "${wt}" diff --stat HEAD "${head}" >&2 || true
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
OWN_LINES_TARGET=2000
echo "    the series' own files: $(printf '%s\n' "${new_files}" | grep -v '_test\.go' | awk 'NF == 3 {n += $1; f++} END {printf "%d lines in %d files", n, f}') besides tests (target ${OWN_LINES_TARGET}, not checked), $(printf '%s\n' "${new_files}" | grep '_test\.go' | awk 'NF == 3 {n += $1; f++} END {printf "%d lines in %d test files", n, f}')"
[ "${upstream_lines}" -lt "${UPSTREAM_LINES_LIMIT}" ] ||
  die "the series changes ${upstream_lines} lines of upstream's files: move the mechanism into new files."
step_done

step "exported identifiers the series adds (go/ast; reported, not checked)"
(cd "${ROOT}" && go build -o "${SHAPE}" ./pkg/series/shape) ||
  die "pkg/series/shape does not build: fix it (go build ./pkg/series/shape) and rerun."
shape exports -top 5 | sed 's/^/    /' ||
  die "could not count the exported identifiers (see above): run 'go run ./pkg/series/shape exports -repo ${TREE#"${ROOT}/"} -base ${KUBE_VERSION}' to see why."
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

step "the KEP's metrics (KEP.md's table, kep.yaml) are the metrics the series registers; kep.yaml names the gate"
(cd "${ROOT}" && go test -count=1 ./pkg/kep/ >"${OUT}/verify-kep.log" 2>&1 && go build -o "${KEPCHECK}" ./pkg/kep/metricscheck) || {
  cat "${OUT}/verify-kep.log" >&2
  die "pkg/kep does not pass its tests or build: fix it (go test ./pkg/kep/...) and rerun."
}
rc=0
(cd "${ROOT}" && "${KEPCHECK}" -repo "${TREE}" -base "${KUBE_VERSION}" -head "${head}" -kep KEP.md -kepyaml kep.yaml) |
  sed 's/^/    /' || rc=$?
case "${rc}" in
  0) ;;
  1) failures+=("KEP.md or kep.yaml does not name the metrics the series registers, or kep.yaml is incomplete (see \"the KEP's metrics...\" above).
    Make KEP.md's metrics table (one row per metric: name, type, labels) and kep.yaml's metrics list match the code.") ;;
  *) die "the KEP's metrics check could not run (see above): rerun 'go run ./pkg/kep/metricscheck -repo ${TREE#"${ROOT}/"} -base ${KUBE_VERSION}' to see why." ;;
esac
step_done

step "no commit adds lines that a later commit deletes (git blame of every line the series deletes)"
rc=0
shape churn -top 3 | sed 's/^/    /' || rc=$?
case "${rc}" in
  0) ;;
  1) failures+=("commits of the series add lines that later commits delete or change (see \"no commit adds lines...\" above).
    Fold each later change into the commit that adds the lines: in ${TREE#"${ROOT}/"}, git rebase -i ${KUBE_VERSION}
    with fixup/edit, until this check reports 0 lines; then make export.") ;;
  *) die "the churn check could not run (see above): rerun 'go run ./pkg/series/shape churn -repo ${TREE#"${ROOT}/"} -base ${KUBE_VERSION}' to see why." ;;
esac
step_done

if [ "${VERIFY_EACH_COMMIT:-1}" = 0 ]; then
  step "each commit builds and vets"
  echo "    SKIPPED: VERIFY_EACH_COMMIT=0"
  step_done
else
  # In the verify worktree, one commit after the other. -trimpath and
  # CGO_ENABLED=0, as hack/build-kubelet.sh builds, key the build cache by
  # module rather than by directory: the worktree reuses the tree's builds,
  # and each commit rebuilds only what it changes.
  step "each commit builds the kubelet (go build ./cmd/kubelet) and vets the packages it changes (about 3 minutes on 2 cores with a warm build cache; VERIFY_EACH_COMMIT=0 skips)"
  rc=0
  shape commits -worktree "${wt}" -build ./cmd/kubelet \
    -env CGO_ENABLED=0 -buildflag -trimpath -buildflag -buildvcs=false | sed 's/^/    /' || rc=$?
  case "${rc}" in
    0) ;;
    1) failures+=("commits of the series do not build or vet (see \"each commit builds...\" above).
    Every commit must build for git bisect: in ${TREE#"${ROOT}/"}, git rebase -i ${KUBE_VERSION}, edit the failing
    commits (or move the code they need before them), then make export.") ;;
    *) die "the per-commit build could not run (see above); VERIFY_EACH_COMMIT=0 skips it." ;;
  esac
  step_done
fi

# The stack of pull requests PR.md describes: the number of the last patch of
# each PR, in merge order. Each PR's top commit must pass the tests of the
# packages its PR changes; the last PR's is HEAD, which make test covers.
PR_TOPS=(3 5 7 9)
if [ "${VERIFY_EACH_PR:-1}" = 0 ]; then
  step "each PR's top commit passes its packages' tests"
  echo "    SKIPPED: VERIFY_EACH_PR=0"
  step_done
else
  step "each PR's top commit passes the tests of the packages its PR changes (about 8 minutes; VERIFY_EACH_PR=0 skips)"
  mapfile -t commits < <(tree_git rev-list --reverse "${KUBE_VERSION}..${head}")
  [ "${#commits[@]}" = "${PR_TOPS[-1]}" ] ||
    die "the series has ${#commits[@]} commits, but PR_TOPS in hack/verify.sh ends at ${PR_TOPS[-1]}: update it and PR.md together."
  base="${KUBE_VERSION}"
  for i in $(seq 0 $(( ${#PR_TOPS[@]} - 2 ))); do
    top="${commits[$(( PR_TOPS[i] - 1 ))]}"
    pkgs=$(tree_git diff --name-only --diff-filter=ACMR "${base}..${top}" -- '*.go' | grep -v '^test/e2e' |
      xargs -r -n1 dirname | LC_ALL=C sort -u | sed 's|^|./|')
    echo "    PR $(( i + 1 )) at $(tree_git log -1 --format='%h %s' "${top}")"
    git -C "${wt}" checkout -q --detach "${top}"
    log="${OUT}/verify-pr$(( i + 1 ))${VERSION_SUFFIX}.log"
    # shellcheck disable=SC2086 # one argument per package
    if (cd "${wt}" && go test -count=1 ${pkgs} >"${log}" 2>&1); then
      echo "      $(grep -c '^ok' "${log}") packages pass: $(echo ${pkgs})"
    else
      grep -v '^ok\|no test files' "${log}" | tail -40 | sed 's/^/      /'
      failures+=("PR $(( i + 1 ))'s top commit does not pass the tests of the packages it changes (see above).
    Every PR must merge on its own: fix the failing commit in ${TREE#"${ROOT}/"} with git rebase -i ${KUBE_VERSION}, then make export.")
    fi
    base="${top}"
  done
  step_done
fi

if [ "${#failures[@]}" -gt 0 ]; then
  printf 'error: %s\n' "${failures[@]}" >&2
  printf 'verify FAILED in %ss: %d of its checks failed (see error: above)\n' "$(( $(date +%s) - total_start ))" "${#failures[@]}" >&2
  exit 1
fi
printf 'verify passed in %ss\n' "$(( $(date +%s) - total_start ))"
