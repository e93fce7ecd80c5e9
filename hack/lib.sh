#!/usr/bin/env bash
# Shared helpers for the project's scripts. Source it; do not run it.

set -o errexit
set -o nounset
set -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT="${ROOT}/_output"
TREE="${OUT}/kubernetes"
PATCHES="${ROOT}/patches"

# The upstream release the series applies to.
KUBE_VERSION=v1.37.0
STAGING_VERSION=v0.37.0
# The branch in the assembled tree that carries the series.
TREE_BRANCH=evented-volume-manager

# Fixed identities and dates make the pristine commit, and every commit git am
# rebuilds from the series, the same on every machine.
export GIT_COMMITTER_NAME="Evented Volume Manager assembly"
export GIT_COMMITTER_EMAIL="assembly@evented-volume-manager.invalid"
PRISTINE_DATE="2026-01-01T00:00:00Z"

_step_start=0
# step NAME: prints a step header and remembers when it started.
step() {
  _step_name="$*"
  _step_start=$(date +%s)
  printf '==> %s\n' "${_step_name}"
}
# step_done: prints how long the current step took.
step_done() {
  printf '<== %s (%ss)\n' "${_step_name}" "$(( $(date +%s) - _step_start ))"
}
die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}
tree_git() {
  git -C "${TREE}" "$@"
}
# series_files: the patches of the series, in order.
series_files() {
  find "${PATCHES}" -maxdepth 1 -name '*.patch' | LC_ALL=C sort
}
# am_series DIR: applies every patch of the series on DIR's HEAD, printing each
# commit. On failure it prints git am's output, aborts the am, sets
# FAILED_PATCH to the patch's path and returns 1.
am_series() {
  local dir="$1" p
  FAILED_PATCH=""
  while IFS= read -r p; do
    if ! git -C "${dir}" am -q --committer-date-is-author-date --keep-non-patch "${p}" >"${OUT}/am.log" 2>&1; then
      cat "${OUT}/am.log" >&2
      git -C "${dir}" am --abort >/dev/null 2>&1 || true
      FAILED_PATCH="${p#"${ROOT}/"}"
      return 1
    fi
    echo "    $(git -C "${dir}" log -1 --format='%h %s')"
  done < <(series_files)
}
