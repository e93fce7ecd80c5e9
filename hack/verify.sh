#!/usr/bin/env bash
# Checks that patches/ is the product it should be:
#   1. the series applies cleanly to the pristine release (v1.37.0, or
#      KUBE_VERSION) and gives exactly the assembled tree's HEAD, and on
#      v1.37.0 re-exporting the tree reproduces patches/;
#   2. the lines the series changes in upstream's own files stay few
#      (EventedVolumeManager's PRs together under UPSTREAM_LINES_LIMIT, each
#      related PR under RELATED_PR_LINES_LIMIT): the mechanism lives in new
#      files;
#   3. gofmt and go vet pass on the packages the series changes;
#   4. upstream's feature-gate list checks pass;
#   5. every patch follows the series rules (upstream-style subjects, no
#      machine-specific paths);
#   6. the KEP names exactly the metrics the series defines and registers:
#      kep.yaml's metrics list and KEP.md's metrics table against the metrics
#      options literals and Register calls in the packages the series changes
#      (cmd/kep-check, pkg/kep; the real-node smoke test compares them with the kubelet's
#      /metrics, types and labels included); kep.yaml parses and names the
#      feature gate for the kubelet;
#   7. no commit of the series adds a line that a later commit deletes or
#      changes (numstat: per file, the commits change no more lines than the
#      series' diff);
#   8. every commit of the series builds the kubelet and passes go vet on the
#      packages it changes (VERIFY_EACH_COMMIT=0 skips it);
#   9. the top commit of each pull request of the stack (PR_TOPS, PR.md)
#      passes the tests of the packages its PR changes, beside the builds of
#      step 8 (VERIFY_EACH_PR=0 skips it);
#  10. shellcheck passes on hack/*.sh, hack/runtimes/*.sh and .ci/run.
# It also checks the series' budgets (cmd/series-budget): non-test Go lines
# per PR (at most 700) and in all (at most 1,800), exported
# identifiers (at most 40), metrics (at most 3) and KEP.md's words (at most
# 4,000), and the harness's Go lines in cmd/, pkg/ and test/ (at most 13,500).
# Checks 6 to 10 run to the end and fail verify after reporting everything.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_tree
total_start=$(date +%s)
# The commit every step checks, taken once: the tree may move meanwhile.
head=$(tree_git rev-parse HEAD)
# Checks that report everything before they fail add a line here; verify
# fails at the end if there is any.
failures=()

# churn DIR BASE HEAD: checks that no commit of BASE..HEAD in the repository
# DIR adds lines that a later commit deletes or changes, by numstat
# arithmetic. Each diff is minimal, so per file the lines the commits add and
# delete one after the other add up to more than the series' own diff
# exactly when a commit undoes lines of an earlier one. Files the series
# renames are followed (log -M): a rename is not churn. Prints each file with
# churn and what each commit changes in it; returns 1 if there is any.
churn() {
  local dir="$1" base="$2" head="$3" net commits
  if ! net=$(git -C "${dir}" diff --no-renames --numstat "${base}" "${head}") ||
    ! commits=$(git -C "${dir}" log --reverse --first-parent -M --numstat --format='commit %h' "${base}..${head}"); then
    die "git cannot list the changes of ${base}..${head} in ${dir} (see above)."
  fi
  printf '%s\n' "${commits}" | NET="${net}" awk -F'\t' '
    # path(p, side): the old (side 1) or new (side 2) path of a numstat
    # path, which writes a rename "a => b" or "dir/{a => b}/file".
    function path(p, side,   i, j, ab) {
      if (!index(p, " => ")) return p
      i = index(p, "{"); j = index(p, "}")
      if (!i || j < i) { split(p, ab, " => "); return ab[side] }
      split(substr(p, i + 1, j - i - 1), ab, " => ")
      p = substr(p, 1, i - 1) ab[side] substr(p, j + 1)
      gsub(/\/\/+/, "/", p); sub(/^\//, "", p)
      return p
    }
    BEGIN {
      n = split(ENVIRON["NET"], lines, "\n")
      for (i = 1; i <= n; i++) { split(lines[i], col, "\t"); want[col[3]] = col[1] + col[2] }
      n = 0
    }
    /^commit / { commit = sprintf("%04d %s", ++n, substr($0, 8)); next }
    NF == 3 {
      from = path($3, 1); to = path($3, 2)
      if (from != to) { sum[to] = sum[from]; by[to] = by[from]; delete sum[from]; delete by[from] }
      sum[to] += $1 + $2; total += $1 + $2
      by[to] = by[to] sprintf(", %s +%d -%d", commit, $1, $2)
    }
    END {
      for (f in sum) if (sum[f] > want[f]) {
        printf "    %s: the commits change %d lines, the series %d: %s\n", f, sum[f], want[f], substr(by[f], 3)
        excess += sum[f] - want[f]
      }
      printf "    %d commits change %d lines one after the other, %d more than the series changes\n", n, total, excess
      exit excess > 0
    }'
}

# check_commit COMMIT: checks COMMIT out in the verify worktree, builds the
# kubelet as hack/build-kubelet.sh does, and vets the packages the commit
# changes. A commit that fails is reported and added to failed_commits, and
# the next is checked.
failed_commits=()
check_commit() {
  local commit pkgs out start=${SECONDS}
  git -C "${wt}" checkout -q --detach "$1"
  commit=$(git -C "${wt}" log -1 --format='%h %s')
  mapfile -t pkgs < <(changed_packages HEAD^..HEAD "${wt}")
  if out=$(cd "${wt}" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -o /dev/null ./cmd/kubelet 2>&1 &&
    { [ "${#pkgs[@]}" = 0 ] || CGO_ENABLED=0 go vet -trimpath -buildvcs=false "${pkgs[@]}" 2>&1; }); then
    echo "    ok    ${commit} ($(( SECONDS - start ))s; vet: ${pkgs[*]:-no package})"
  else
    echo "    FAIL  ${commit}"
    printf '%s\n' "${out}" | tail -30 | sed 's/^/          /'
    failed_commits+=("${commit}")
  fi
}

# The per-PR runs skip upstream's known flakes (lib.sh), and run the spinning
# tests on their own.
PR_TEST_SKIP="${KNOWN_FLAKE_SKIP}|^(${SPINNING_UPSTREAM_TESTS})\$"
# pr_test I: tests, in the worktree pr_wt, the packages that PR I+1 changes,
# at its top commit, and writes the outcome to verify-prN.result.
pr_test() {
  local i="$1" top base pkgs log result
  top="${commits[$(( PR_TOPS[i] - 1 ))]}"
  base="${KUBE_VERSION}"
  [ "${i}" = 0 ] || base="${commits[$(( PR_TOPS[i - 1] - 1 ))]}"
  log="${OUT}/verify-pr$(( i + 1 ))${VERSION_SUFFIX}.log"
  result="${OUT}/verify-pr$(( i + 1 ))${VERSION_SUFFIX}.result"
  mapfile -t pkgs < <(changed_packages "${base}..${top}" | grep -v '^\./test/e2e')
  git -C "${pr_wt}" checkout -q --detach "${top}"
  echo "    PR $(( i + 1 )) at $(tree_git log -1 --format='%h %s' "${top}")" >"${result}"
  # Static and -trimpath, as the per-commit builds, whose packages it reuses.
  if (cd "${pr_wt}" && CGO_ENABLED=0 go test -trimpath -count=1 -skip "${PR_TEST_SKIP}" "${pkgs[@]}" >"${log}" 2>&1) &&
    { ! printf '%s\n' "${pkgs[@]}" | grep -qx '\./pkg/kubelet/volumemanager/reconciler' ||
      CGO_ENABLED=0 spinning_tests "${pr_wt}" "${log}" -trimpath; }; then
    echo "      $(awk '/^ok/ { print $2 }' "${log}" | sort -u | wc -l) packages pass: ${pkgs[*]}" >>"${result}"
    ! grep -q '^spinning_tests: attempt' "${log}" ||
      echo "      upstream's ${SPINNING_UPSTREAM_TESTS//|/ and } failed once, then passed (kubernetes#140352)" >>"${result}"
  else
    {
      test_failures "${log}" | tail -40 | sed 's/^/      /'
      echo "      (the whole log: ${log#"${ROOT}/"})"
      echo FAIL
    } >>"${result}"
  fi
}

step "the series applies to pristine ${KUBE_VERSION} and gives the tree's HEAD"
if [ -n "$(tree_git status --porcelain --untracked-files=no)" ]; then
  echo "    warning: the tree has uncommitted edits; verifying its HEAD only" >&2
fi
wt="${OUT}/verify-worktree${VERSION_SUFFIX}"
pr_wt="${OUT}/verify-pr-worktree${VERSION_SUFFIX}"
pr_fifo="${OUT}/verify-pr${VERSION_SUFFIX}.fifo"
cleanup() {
  [ -z "${pr_worker:-}" ] || kill_tree "${pr_worker}"
  rm -f "${pr_fifo}" "${OUT}/verify-pr"*"${VERSION_SUFFIX}.result"
  tree_git worktree remove --force "${wt}" >/dev/null 2>&1 || rm -rf "${wt}"
  tree_git worktree remove --force "${pr_wt}" >/dev/null 2>&1 || rm -rf "${pr_wt}"
  tree_git worktree prune >/dev/null 2>&1 || true
  rm -rf "${OUT}/verify-export"
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
  Run 'make update-patches' and commit patches/."
fi
if [ "${KUBE_VERSION}" = "${SERIES_BASE}" ]; then
  "${ROOT}/hack/update-patches.sh" --to "${OUT}/verify-export" >/dev/null
  if ! diff -r -q "${OUT}/verify-export" "${PATCHES}" >/dev/null; then
    diff -r "${OUT}/verify-export" "${PATCHES}" | head -40 >&2 || true
    die "patches/ differs from what 'make update-patches' writes for the tree. Run 'make update-patches' and commit patches/."
  fi
else
  echo "    patches/ is exported against ${SERIES_BASE}; on ${KUBE_VERSION} it has to apply and give the tree"
fi
echo "    $(series_files | wc -l) patches reproduce ${want:0:12}"
step_done

# The lines each pull request of the stack (PR_TOPS, PR.md) changes in
# upstream's files: EventedVolumeManager's PRs (EVM_PRS) together at most
# UPSTREAM_LINES_LIMIT, and each related PR (the EventedPLEG watcher, the
# termination relist, the node status sync) at most RELATED_PR_LINES_LIMIT.
UPSTREAM_LINES_LIMIT=300
RELATED_PR_LINES_LIMIT=100
# The harness (cmd/, pkg/, test/) has at most HARNESS_LINES_LIMIT lines of Go.
HARNESS_LINES_LIMIT=13500
PR_TOPS=(3 4 5 6 7 9 10 11)
EVM_PRS=(1 2 3 4 6)
step "lines changed in upstream's own files (EventedVolumeManager's PRs ${EVM_PRS[*]}: limit ${UPSTREAM_LINES_LIMIT}; each other PR: ${RELATED_PR_LINES_LIMIT})"
# Files that exist in the release and that a PR modifies, with the lines it
# adds and removes; new files are the series' own.
mapfile -t commits < <(tree_git rev-list --reverse "${KUBE_VERSION}..${head}")
[ "${#commits[@]}" = "${PR_TOPS[-1]}" ] ||
  die "the series has ${#commits[@]} commits, but PR_TOPS in hack/verify.sh ends at ${PR_TOPS[-1]}: update it and PR.md together."
evm_lines=0
prev="${KUBE_VERSION}"
for i in "${!PR_TOPS[@]}"; do
  pr=$((i + 1))
  top="${commits[$(( PR_TOPS[i] - 1 ))]}"
  changes=$(tree_git diff --numstat --diff-filter=M "${prev}..${top}")
  lines=$(printf '%s\n' "${changes}" | awk 'NF == 3 {n += $1 + $2} END {print n + 0}')
  echo "    PR ${pr}: ${lines} lines"
  printf '%s\n' "${changes}" | awk 'NF == 3 {printf "      %5d  %s\n", $1 + $2, $3}'
  if [[ " ${EVM_PRS[*]} " == *" ${pr} "* ]]; then
    evm_lines=$((evm_lines + lines))
  elif [ "${lines}" -ge "${RELATED_PR_LINES_LIMIT}" ]; then
    die "PR ${pr} changes ${lines} lines of upstream's files: move its mechanism into new files."
  fi
  prev="${top}"
done
echo "    EventedVolumeManager's PRs: ${evm_lines} lines changed in upstream's files"
[ "${evm_lines}" -lt "${UPSTREAM_LINES_LIMIT}" ] ||
  die "EventedVolumeManager's PRs change ${evm_lines} lines of upstream's files: move the mechanism into new files."
step_done

step "the series' budgets: non-test Go lines (all and per PR), exported identifiers, metrics, KEP.md's words"
if ! (cd "${ROOT}" && go run ./cmd/series-budget -tree "${TREE}" -base "${KUBE_VERSION}" -head "${head}" \
  -pr-tops "$(IFS=,; echo "${PR_TOPS[*]}")" -kep "${ROOT}") | sed 's/^/  /'; then
  failures+=("the series exceeds a budget it must hold (see \"the series' budgets\" above): fewer lines (in a PR or in all), exported identifiers, metrics or KEP words.")
fi
step_done

step "the harness's size: Go lines in cmd/, pkg/ and test/, tests and testdata included (limit ${HARNESS_LINES_LIMIT})"
harness_lines=$(cd "${ROOT}" && find cmd pkg test -name '*.go' -print0 | xargs -0 cat | wc -l)
echo "  ${harness_lines} / ${HARNESS_LINES_LIMIT}"
if [ "${harness_lines}" -gt "${HARNESS_LINES_LIMIT}" ]; then
  failures+=("the harness has ${harness_lines} lines of Go, over its limit of ${HARNESS_LINES_LIMIT}: simplify it before adding to it.")
fi
step_done

step "gofmt on the Go files the series changes"
mapfile -t files < <(tree_git diff --name-only --diff-filter=ACMR "${KUBE_VERSION}..HEAD" -- '*.go')
if [ "${#files[@]}" -gt 0 ]; then
  bad=$(cd "${TREE}" && gofmt -l "${files[@]}")
  [ -z "${bad}" ] || die "gofmt would change: ${bad}
  Run gofmt -w on them in the tree, commit, and make update-patches."
fi
echo "    ${#files[@]} files"
step_done

step "go vet on the packages the series changes"
mapfile -t pkgs < <(changed_packages "${KUBE_VERSION}..HEAD")
if [ "${#pkgs[@]}" -gt 0 ]; then
  # Static and -trimpath, as make test vets the node e2e specs and builds the
  # tests: in go's default mode this vet compiled test/e2e_node's dependencies
  # again (14 minutes cold).
  (cd "${TREE}" && CGO_ENABLED=0 go vet -trimpath "${pkgs[@]}") || die "go vet failed on: ${pkgs[*]}"
fi
echo "    ${pkgs[*]:-no packages}"
step_done

step "upstream feature-gate checks (hack/verify-featuregates.sh, hack/verify-test-featuregates.sh)"
(cd "${TREE}" && bash hack/verify-featuregates.sh >"${OUT}/verify-featuregates.log" 2>&1) || {
  tail -20 "${OUT}/verify-featuregates.log" >&2
  die "the generated feature lists are out of date: run hack/update-featuregates.sh in the tree, commit, and make update-patches."
}
(cd "${TREE}" && bash hack/verify-test-featuregates.sh) ||
  die "a test sets a mutable feature gate directly; use featuregatetesting.SetFeatureGateDuringTest."
step_done

step "series rules: upstream-style subjects, no machine-specific paths"
(cd "${ROOT}" && go test -count=1 ./test/series/) || die "a patch breaks the series rules (see above)."
step_done

step "the KEP's metrics (kep.yaml, KEP.md's table) are the metrics the series defines and registers; kep.yaml names the gate"
kep_log="${OUT}/verify-kep${VERSION_SUFFIX}.log"
kep_rc=0
(cd "${ROOT}" && go run ./cmd/kep-check -tree "${TREE}" -base "${KUBE_VERSION}" -head "${head}") >"${kep_log}" 2>&1 || kep_rc=$?
sed 's/^/    /' "${kep_log}"
if [ "${kep_rc}" != 0 ]; then
  failures+=("the metrics the series defines and registers, kep.yaml's metrics and KEP.md's metrics table differ, or kep.yaml does not name the gate (see \"the KEP's metrics...\" above).
    Make kep.yaml's metrics list and KEP.md's metrics table (one row per metric: name, type, labels) match the code.")
fi
step_done

step "no commit adds lines that a later commit deletes (numstat: per file, the commits change no more lines than the series)"
churn "${TREE}" "${KUBE_VERSION}" "${head}" ||
  failures+=("commits of the series add lines that later commits delete or change (see \"no commit adds lines...\" above).
    Fold each later change into the commit that adds the lines: in ${TREE#"${ROOT}/"}, git rebase -i ${KUBE_VERSION}
    with fixup/edit, until this check reports 0 more lines; then make update-patches.")
step_done

# The stack of pull requests PR.md describes: the number of the last patch of
# each PR. Each PR's top commit must pass the tests of the packages its PR
# changes; the last PR's is HEAD, which make test covers. Upstream's known
# flakes are skipped there (PR_TEST_SKIP above), and the spinning ones run on
# their own. The PRs' tests run in a worker of their own, one PR after the
# other, as the per-commit step below passes each PR's top commit: beside the
# builds of the commits after it (on 2 cores, links and test runs leave one
# idle), and with the packages that build compiled.
# start_due_pr_tests N hands the worker each PR whose top is one of the first
# N commits.
next_pr=0
if [ "${VERIFY_EACH_PR:-1}" != 0 ]; then
  tree_git worktree add -q --detach "${pr_wt}" "${head}"
  mkfifo "${pr_fifo}"
  while read -r i; do pr_test "${i}"; done <"${pr_fifo}" &
  pr_worker=$!
  exec {pr_fd}>"${pr_fifo}"
fi
start_due_pr_tests() {
  [ "${VERIFY_EACH_PR:-1}" != 0 ] || return 0
  while [ "${next_pr}" -lt $(( ${#PR_TOPS[@]} - 1 )) ] && [ "${PR_TOPS[next_pr]}" -le "$1" ]; do
    echo "${next_pr}" >&"${pr_fd}"
    next_pr=$(( next_pr + 1 ))
  done
}

if [ "${VERIFY_EACH_COMMIT:-1}" = 0 ]; then
  step "each commit builds and vets"
  echo "    SKIPPED: VERIFY_EACH_COMMIT=0"
  step_done
else
  # -trimpath and CGO_ENABLED=0, as hack/build-kubelet.sh builds, key the
  # build cache by module rather than by directory: the worktree reuses the
  # tree's builds, and each commit rebuilds only what it changes.
  step "each commit builds the kubelet (go build ./cmd/kubelet) and vets the packages it changes, with each PR's tests beside (about 3 minutes on 2 cores with a warm build cache; VERIFY_EACH_COMMIT=0 skips)"
  for n in "${!commits[@]}"; do
    check_commit "${commits[n]}"
    start_due_pr_tests $(( n + 1 ))
  done
  [ "${#failed_commits[@]}" = 0 ] ||
    failures+=("commits of the series do not build or vet (see \"each commit builds...\" above):
$(printf '      %s\n' "${failed_commits[@]}")
    Every commit must build for git bisect: in ${TREE#"${ROOT}/"}, git rebase -i ${KUBE_VERSION}, edit the failing
    commits (or move the code they need before them), then make update-patches.")
  step_done
fi

if [ "${VERIFY_EACH_PR:-1}" = 0 ]; then
  step "each PR's top commit passes its packages' tests"
  echo "    SKIPPED: VERIFY_EACH_PR=0"
  step_done
else
  step "each PR's top commit passes the tests of the packages its PR changes (about 8 minutes, mostly beside the per-commit builds; VERIFY_EACH_PR=0 skips)"
  start_due_pr_tests "${#commits[@]}"
  exec {pr_fd}>&-
  wait "${pr_worker}" || true
  pr_worker=
  for i in $(seq 1 $(( ${#PR_TOPS[@]} - 1 ))); do
    result="${OUT}/verify-pr${i}${VERSION_SUFFIX}.result"
    [ -s "${result}" ] || printf '    PR %s: its tests did not run (see above)\nFAIL\n' "${i}" >"${result}"
    grep -v '^FAIL$' "${result}"
    ! grep -q '^FAIL$' "${result}" ||
      failures+=("PR ${i}'s top commit does not pass the tests of the packages it changes (see above).
    Every PR must merge on its own: fix the failing commit in ${TREE#"${ROOT}/"} with git rebase -i ${KUBE_VERSION}, then make update-patches.")
  done
  step_done
fi

SHELLCHECK_VERSION=0.9.0-1
step "shellcheck ${SHELLCHECK_VERSION%-*} on hack/*.sh, hack/runtimes/*.sh and .ci/run"
[ "$(dpkg-query -W -f '${Version}' shellcheck 2>/dev/null)" = "${SHELLCHECK_VERSION}" ] ||
  apt_install "shellcheck=${SHELLCHECK_VERSION}"
rc=0
(cd "${ROOT}" && shellcheck --external-sources --source-path=SCRIPTDIR hack/*.sh hack/runtimes/*.sh .ci/run) | sed 's/^/    /' || rc=$?
[ "${rc}" = 0 ] || failures+=("shellcheck finds problems in the scripts (see \"shellcheck...\" above): fix them.")
step_done

if [ "${#failures[@]}" -gt 0 ]; then
  printf 'error: %s\n' "${failures[@]}" >&2
  printf 'verify FAILED in %ss: %d of its checks failed (see error: above)\n' "$(( $(date +%s) - total_start ))" "${#failures[@]}" >&2
  exit 1
fi
printf 'verify passed in %ss\n' "$(( $(date +%s) - total_start ))"
