#!/usr/bin/env bash
# Applies the series with git am -3 to another upstream release, by default
# v1.38.0-alpha.0 (master as of August 2026), the way a reviewer would rebase
# it: each patch on its own, a conflicting one reported and left out. It
# reports, per patch, whether it applied cleanly, applied only with a
# three-way merge, or conflicts (and in which files), and, when every patch
# applies, builds the kubelet, vets the changed packages and runs their tests
# with the series' gates declared at the release's binary version
# (DefaultKubeBinaryVersion), as upstream declares a new gate at the release
# it merges into.
#
#   make rebase-check                               # v1.38.0-alpha.0
#   make rebase-check REBASE_VERSION=v1.37.2
#
# The tree is _output/rebase-<release>, the report _output/rebase-<release>.md.

export KUBE_VERSION="${REBASE_VERSION:-v1.38.0-alpha.0}"
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dir="${OUT}/rebase-${KUBE_VERSION}"
report="${OUT}/rebase-${KUBE_VERSION}.md"
log="${OUT}/rebase-${KUBE_VERSION}.am.log"
total_start=$(date +%s)

if [ ! -d "${dir}/.git" ] || ! git -C "${dir}" rev-parse -q --verify "refs/tags/${KUBE_VERSION}" >/dev/null; then
  rm -rf "${dir}.tmp"
  trap 'rm -rf "${dir}.tmp"' EXIT
  make_pristine "${dir}.tmp"
  rm -rf "${dir}"
  mv "${dir}.tmp" "${dir}"
  trap - EXIT
fi

# git am -3 falls back to a three-way merge only if it finds the blobs the
# patches were made against: fetch the series' base from its tree.
base_tree="${OUT}/kubernetes"
if [ -d "${base_tree}/.git" ]; then
  git -C "${dir}" fetch -q --no-tags "${base_tree}" "refs/tags/${SERIES_BASE}:refs/tags/base-${SERIES_BASE}" ||
    echo "warning: cannot fetch ${SERIES_BASE} from ${base_tree#"${ROOT}/"}; git am -3 cannot fall back to a three-way merge" >&2
else
  echo "warning: ${base_tree#"${ROOT}/"} does not exist (run make first); git am -3 cannot fall back to a three-way merge" >&2
fi

step "applying $(series_files | wc -l) patches to ${KUBE_VERSION} with git am -3"
git -C "${dir}" am --abort >/dev/null 2>&1 || true
git -C "${dir}" checkout -q -f -B rebase-check "${KUBE_VERSION}"
conflicts=0
rows=""
while IFS= read -r p; do
  name=$(basename "${p}")
  if git -C "${dir}" am -3 --committer-date-is-author-date --keep-non-patch "${p}" >"${log}" 2>&1; then
    if grep -q "Falling back to patching base and 3-way merge" "${log}"; then
      outcome="applies with a three-way merge"
    else
      outcome="applies cleanly"
    fi
  else
    files=$(git -C "${dir}" diff --name-only --diff-filter=U | tr '\n' ' ')
    [ -n "${files}" ] || files=$(grep -E '^(error|fatal):' "${log}" | head -3 | tr '\n' ' ')
    git -C "${dir}" am --abort >/dev/null 2>&1 || true
    outcome="conflicts: ${files% }"
    conflicts=$((conflicts + 1))
  fi
  printf '    %-72s %s\n' "${name}" "${outcome}"
  rows+="| \`${name}\` | ${outcome} |"$'\n'
done < <(series_files)
step_done

built="not built: ${conflicts} patch(es) conflict"
if [ "${conflicts}" = 0 ]; then
  step "building the kubelet on ${KUBE_VERSION} and vetting the packages the series changes"
  mapfile -t pkgs < <(changed_packages "${KUBE_VERSION}..HEAD" "${dir}")
  if (cd "${dir}" && CGO_ENABLED=0 go build -trimpath -o "${OUT}/bin/kubelet-rebase-${KUBE_VERSION}" ./cmd/kubelet) &&
    (cd "${dir}" && go vet "${pkgs[@]}"); then
    built="built (\`$("${OUT}/bin/kubelet-rebase-${KUBE_VERSION}" --version)\`), and \`go vet\` passes on the changed packages"
  else
    built="does not build or vet: see the output above"
    conflicts=-1
  fi
  step_done
fi

tested="not run"
if [ "${conflicts}" = 0 ]; then
  # The release's binary version: master keeps the last release's until it is
  # bumped (v1.38.0-alpha.0 is still 1.37).
  minor=$(sed -n 's/^[[:space:]]*DefaultKubeBinaryVersion = "\(.*\)"$/\1/p' "${dir}/staging/src/k8s.io/component-base/version/base.go")
  [ -n "${minor}" ] || die "cannot read DefaultKubeBinaryVersion in ${dir#"${ROOT}/"}/staging/src/k8s.io/component-base/version/base.go."
  mapfile -t gates < <(git -C "${dir}" diff "${KUBE_VERSION}..HEAD" -- pkg/features/kube_features.go |
    sed -n 's/^+\t\([A-Za-z0-9]*\) featuregate\.Feature = .*/\1/p')
  series_minor=$(echo "${SERIES_BASE#v}" | cut -d. -f1,2)
  if [ "${minor}" != "${series_minor}" ] && [ "${#gates[@]}" -gt 0 ]; then
    step "declaring the series' gates (${gates[*]}) at ${minor}"
    alt=$(IFS='|'; echo "${gates[*]}")
    (cd "${dir}" &&
      perl -0pi -e "s/(\t(?:${alt}): \{\n\t\t\{Version: version\.MustParse\(\")${series_minor//./\\.}\"/\${1}${minor}\"/g" pkg/features/kube_features.go &&
      perl -0pi -e "s/(- name: (?:${alt})\n  versionedSpecs:\n(?:  .*\n)*?    version: \")${series_minor//./\\.}\"/\${1}${minor}\"/g" test/compatibility_lifecycle/reference/versioned_feature_list.yaml &&
      perl -pi -e "s/^(\| (?:${alt}) \|(?: [^|]* \|)*? )${series_minor//./\\.}–/\${1}${minor}–/" test/compatibility_lifecycle/reference/feature_list.md)
    declared=$(git -C "${dir}" diff --numstat | awk '{n += $1} END {print n + 0}')
    [ "${declared}" = $(( 3 * ${#gates[@]} )) ] ||
      die "re-declaring ${#gates[@]} gates at ${minor} changed ${declared} lines, not $(( 3 * ${#gates[@]} )): see git -C ${dir#"${ROOT}/"} diff."
    git -C "${dir}" commit -q -a -m "features: declare the series' gates at ${minor}"
    step_done
  fi
  step "testing the packages the series changes on ${KUBE_VERSION} (pkg/kubelet takes several minutes)"
  mapfile -t test_pkgs < <(printf '%s\n' "${pkgs[@]}" | grep -v -e '^$' -e '^\./test/e2e_node')
  echo "    ${test_pkgs[*]}"
  if (cd "${dir}" && go test -count=1 -timeout 30m -skip "${KNOWN_FLAKE_SKIP}" "${test_pkgs[@]}"); then
    tested="pass, with the gates declared at ${minor} (the node e2e specs are vetted only; upstream's known flake is skipped as in make test)"
  else
    tested="fail: see the output above"
    conflicts=-1
  fi
  step_done
fi

{
  echo "### The series on ${KUBE_VERSION} (\`make rebase-check\`)"
  echo
  echo "| patch | \`git am -3\` |"
  echo "|---|---|"
  printf '%s' "${rows}"
  echo
  echo "The kubelet: ${built}."
  echo
  echo "The changed packages' tests: ${tested}."
} >"${report}"
echo "    report: ${report#"${ROOT}/"}"
printf 'rebase-check on %s done in %ss\n' "${KUBE_VERSION}" "$(( $(date +%s) - total_start ))"
[ "${conflicts}" = 0 ] || die "the series does not apply and build on ${KUBE_VERSION} as it is: see ${report#"${ROOT}/"}."
