#!/usr/bin/env bash
# make update-patches: writes the assembled tree's commits (v1.37.0..HEAD) to
# patches/ with git format-patch. The output is stable: re-exporting an
# unchanged tree changes nothing.
#
#   hack/update-patches.sh            # into patches/
#   hack/update-patches.sh --to DIR   # into DIR (used by verify and assemble)

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dest="${PATCHES}"
if [ "${1:-}" = "--to" ]; then
  dest="$2"
fi

if [ "${dest}" = "${PATCHES}" ] && [ "${KUBE_VERSION}" != "${SERIES_BASE}" ]; then
  die "patches/ is kept against ${SERIES_BASE}: export from its tree (make update-patches, without KUBE_VERSION)."
fi
require_tree
if [ -n "$(tree_git status --porcelain --untracked-files=no)" ]; then
  echo "warning: ${TREE#"${ROOT}/"} has uncommitted edits; only commits are exported." >&2
fi

mkdir -p "${dest}"
find "${dest}" -maxdepth 1 -name '*.patch' -delete
# --zero-commit and --no-signature drop what changes from machine to machine;
# --no-numbered keeps a patch's subject the same when the series grows;
# --full-index lets git am fall back to a three-way merge.
tree_git -c core.abbrev=12 -c diff.noprefix=false -c format.signOff=false format-patch \
  --quiet --zero-commit --no-signature --no-numbered --full-index \
  -o "${dest}" "${KUBE_VERSION}..HEAD"
count=$(find "${dest}" -maxdepth 1 -name '*.patch' | wc -l)
if [ "${dest}" = "${PATCHES}" ]; then
  echo "exported ${count} patches to patches/"
  # The tree now matches the series: record it so that make reuses the tree.
  series_files | xargs -r cat | sha256sum | cut -d' ' -f1 > "${TREE}/.git/evm-series"
  tree_git rev-parse HEAD > "${TREE}/.git/evm-head"
fi
