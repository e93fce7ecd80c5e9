#!/usr/bin/env bash
# Shared helpers for the project's scripts. Source it; do not run it.

set -o errexit
set -o nounset
set -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT="${ROOT}/_output"
PATCHES="${ROOT}/patches"
# Every go command the scripts run compiles, links and vets with GOGC=400
# (hack/tool-gogc.sh); what they run keeps go's default.
export GOFLAGS="-toolexec=${ROOT}/hack/tool-gogc.sh${GOFLAGS:+ ${GOFLAGS}}"

# The upstream release the series is kept against: patches/ is exported from
# its tree. `make KUBE_VERSION=v1.37.2` assembles, builds and tests the series
# on another release, in a tree and with a kubelet of its own; the staging
# modules follow the release (v1.37.2: v0.37.2).
SERIES_BASE=v1.37.0
KUBE_VERSION=${KUBE_VERSION:-${SERIES_BASE}}
STAGING_VERSION=${STAGING_VERSION:-v0.${KUBE_VERSION#v1.}}
# VERSION_SUFFIX names what is built per release: empty on the series' base.
VERSION_SUFFIX=""
[ "${KUBE_VERSION}" = "${SERIES_BASE}" ] || VERSION_SUFFIX="-${KUBE_VERSION}"
TREE="${OUT}/kubernetes${VERSION_SUFFIX}"
# shellcheck disable=SC2034 # read by the scripts that source lib.sh
KUBELET="${OUT}/bin/kubelet${VERSION_SUFFIX}"
# Upstream's kubelet of the release, built from the tree's tag without the
# series, for node-bench's stock column.
# shellcheck disable=SC2034 # read by the scripts that source lib.sh
STOCK_KUBELET="${OUT}/bin/kubelet-stock${VERSION_SUFFIX}"
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
# is_root: whether the script runs as root.
is_root() {
  [ "$(id -u)" = 0 ]
}
# require_root WHAT [HOW]: fails unless the script runs as root, saying that
# WHAT needs root, and HOW to do without it if given.
require_root() {
  is_root || die "$1 needs root${2:+: $2}."
}
# apt_install PACKAGE[=VERSION]...: installs Debian packages, as root.
apt_install() {
  require_root "installing $*" "run 'apt-get install -y $*' as root, then rerun"
  echo "    installing $*"
  apt-get update -qq >/dev/null || die "apt-get update failed: check the network to Debian's mirrors."
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null ||
    die "apt-get install $* failed: 'apt-cache policy ${1%%=*}' lists the versions Debian offers."
}
# use_runtime NAME: sources hack/runtimes/NAME.sh, the container runtime's
# part of the scripts (runtime_deps, runtime_e2e_skip); NAME is what
# NODE_RUNTIME takes, and empty means containerd.
use_runtime() {
  local file="${ROOT}/hack/runtimes/${1:-containerd}.sh"
  [ -f "${file}" ] ||
    die "NODE_RUNTIME=$1: no such runtime; hack/runtimes has $(cd "${ROOT}/hack/runtimes" && echo *.sh | sed 's/\.sh//g')."
  # shellcheck source=/dev/null # one of hack/runtimes/*.sh
  source "${file}"
}
# require_tree: fails unless make has assembled the tree.
require_tree() {
  [ -d "${TREE}/.git" ] || die "${TREE#"${ROOT}/"} does not exist: run make first."
}
# The upstream test cases that flake on pristine v1.37.0 on machines of this
# kind (kubernetes#136255): their 10 or 20 goroutines each report only their
# own volume as in use, overwriting one another. make test runs them on
# pristine and on the series side by side; its other runs and make verify's
# per-PR runs skip them (KNOWN_FLAKE_SKIP, a go test -skip pattern that also
# names their gate-on re-runs).
KNOWN_PRISTINE_FAILURES_TOP='TestWaitForAllPodsUnmount'
KNOWN_PRISTINE_FAILURES_CASES=('concurrent_unmount_-_multiple_pods_\(10\)_with_timeout_errors' 'concurrent_unmount_-_many_pods_\(20\)_with_timeout_errors')
KNOWN_PRISTINE_FAILURES_SUB="($(IFS='|'; echo "${KNOWN_PRISTINE_FAILURES_CASES[*]}"))"
KNOWN_FLAKE_SKIP="^${KNOWN_PRISTINE_FAILURES_TOP}\$/^${KNOWN_PRISTINE_FAILURES_SUB}|^TestVolumeManagerTestsWithGateOn\$/^${KNOWN_PRISTINE_FAILURES_TOP}\$/^${KNOWN_PRISTINE_FAILURES_SUB}"
export KNOWN_FLAKE_SKIP
# Upstream's reconciler tests that leave a reconciler spinning at 1 ns per
# subtest with the gate off, and time out under load (kubernetes#140352; see
# docs/testing.md). The other runs skip them, and spinning_tests runs them.
SPINNING_UPSTREAM_TESTS='Test_UncertainDeviceGlobalMounts|Test_UncertainVolumeMountState'
export SPINNING_UPSTREAM_TESTS
# test_failures LOG: go test's output in LOG without klog's lines, which it
# prints whole for a failing package and which would bury the failures.
test_failures() {
  grep -vE '^ *([^ ]+\.go:[0-9]+: )?[IWEF][0-9]{4} [0-9:.]+[] ]|^=== (RUN|PAUSE|CONT|NAME)|^ *--- PASS|^ok |no test files' "$1"
}
# spinning_tests DIR LOG [FLAG...]: runs SPINNING_UPSTREAM_TESTS with the gate
# off in the tree DIR, and once more if they fail, appending go test's output
# to LOG. Any other failure of theirs, or of another test, is not retried.
spinning_tests() {
  local dir="$1" log="$2" attempt
  shift 2
  for attempt in 1 2; do
    (cd "${dir}" && exec go test "$@" -count=1 -run "^(${SPINNING_UPSTREAM_TESTS})\$" ./pkg/kubelet/volumemanager/reconciler/) >>"${log}" 2>&1 &&
      return 0
    echo "spinning_tests: attempt ${attempt} failed (kubernetes#140352)" >>"${log}"
  done
  return 1
}
# changed_packages RANGE [DIR]: the packages that the commits RANGE (A..B) of
# the repository DIR (the tree by default) change: ./dir for each directory of
# a changed Go file that still holds Go code at B, and ./dir/... for the
# nearest directory holding Go code above any other changed file (generated
# lists, anything under testdata).
changed_packages() {
  local range="$1" dir="${2:-${TREE}}" f d
  git -C "${dir}" diff --name-only "${range}" | while IFS= read -r f; do
    d=$(dirname "${f}")
    case "${f}" in
      */testdata/*) d="${f%%/testdata/*}" ;;
      *.go)
        if holds_go "${dir}" "${range#*..}" "${d}"; then echo "./${d}"; fi
        continue
        ;;
    esac
    while [ "${d}" != . ] && ! holds_go "${dir}" "${range#*..}" "${d}"; do
      d=$(dirname "${d}")
    done
    if [ "${d}" != . ]; then echo "./${d}/..."; fi
  done | LC_ALL=C sort -u
}
# kill_tree PID: stops PID and the processes it started.
kill_tree() {
  local c
  for c in $(pgrep -P "$1"); do kill_tree "${c}"; done
  kill "$1" 2>/dev/null || true
}
# holds_go REPO COMMIT DIR: whether DIR holds Go files at COMMIT.
holds_go() {
  git -C "$1" ls-tree --name-only "$2" "$3/" | grep '\.go$' >/dev/null
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
      # shellcheck disable=SC2034 # read by the scripts that source lib.sh
      FAILED_PATCH="${p#"${ROOT}/"}"
      return 1
    fi
    echo "    $(git -C "${dir}" log -1 --format='%h %s')"
  done < <(series_files)
}

# try_module_dir PATH VERSION: downloads a module through the module proxy
# and prints its directory in the module cache; on failure it prints the
# proxy's answer and fails.
try_module_dir() {
  local mod="$1" ver="$2" json dir
  if ! json=$(cd "${OUT}" && GOFLAGS=-mod=mod go mod download -json "${mod}@${ver}" 2>&1); then
    printf '%s\n' "${json}"
    return 1
  fi
  dir=$(printf '%s\n' "${json}" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
  if [ -z "${dir}" ] || [ ! -d "${dir}" ]; then
    printf '%s\n' "${json}"
    return 1
  fi
  printf '%s\n' "${dir}"
}

# module_dir PATH VERSION: try_module_dir, or fail with what to do next.
module_dir() {
  local out
  out=$(try_module_dir "$1" "$2") ||
    die "cannot fetch module $1@$2 through the Go module proxy: ${out}
  Check GOPROXY ($(go env GOPROXY)) and the network, then rerun make."
  printf '%s\n' "${out}"
}

# staging_module_dir PATH: the staging module at STAGING_VERSION or, when the
# proxy refuses that version (it refuses some with 403), at the nearest
# earlier release it serves: an earlier patch release of the same minor or,
# for a pre-release such as v0.38.0-alpha.0, the newest patch release of the
# minor before it. A substitute is printed, and make_pristine names it in the
# pristine commit; the build shows whether the kubelet can use it.
staging_module_dir() {
  local mod="$1" out ver base minor patch candidates=()
  if out=$(try_module_dir "${mod}" "${STAGING_VERSION}"); then
    printf '%s\n' "${out}"
    return
  fi
  base=${STAGING_VERSION%%-*}
  minor=$(echo "${base}" | cut -d. -f2)
  patch=$(echo "${base}" | cut -d. -f3)
  if [ "${base}" != "${STAGING_VERSION}" ]; then
    for patch in 9 8 7 6 5 4 3 2 1 0; do candidates+=("v0.$((minor - 1)).${patch}"); done
  else
    while [ "${patch}" -gt 0 ]; do
      patch=$((patch - 1))
      candidates+=("v0.${minor}.${patch}")
    done
  fi
  for ver in "${candidates[@]}"; do
    if out=$(try_module_dir "${mod}" "${ver}"); then
      echo "    warning: the proxy refuses ${mod}@${STAGING_VERSION}; using ${ver}, the nearest it serves" >&2
      printf '%s\n' "${out}"
      return
    fi
  done
  die "cannot fetch module ${mod}@${STAGING_VERSION}, nor an earlier release of it, through the Go module proxy.
  Check GOPROXY ($(go env GOPROXY)) and the network, then rerun make."
}

# staging_modules GOMOD: the k8s.io/* modules that go.mod replaces with
# ./staging/src/k8s.io/<name>.
staging_modules() {
  sed -n '/^replace (/,/^)/p' "$1" | awk '$2 == "=>" && $3 ~ /^\.\/staging\/src\// {print $1}'
}

# make_pristine DIR: writes the pristine release KUBE_VERSION into DIR as a git
# repository tagged KUBE_VERSION.
make_pristine() {
  local dir="$1" kdir mod sdir name
  step "fetching k8s.io/kubernetes@${KUBE_VERSION} and its staging modules@${STAGING_VERSION}"
  mkdir -p "${OUT}"
  kdir=$(module_dir k8s.io/kubernetes "${KUBE_VERSION}")
  cp -r "${kdir}" "${dir}"
  chmod -R u+w "${dir}"
  local n=0 substitutes=""
  for mod in $(staging_modules "${kdir}/go.mod"); do
    name=${mod#k8s.io/}
    sdir=$(staging_module_dir "${mod}")
    [ "${sdir##*@}" = "${STAGING_VERSION}" ] || substitutes+="${mod}@${sdir##*@} "
    mkdir -p "${dir}/staging/src/k8s.io/${name}"
    cp -r "${sdir}/." "${dir}/staging/src/k8s.io/${name}/"
    n=$((n + 1))
  done
  [ "${n}" -gt 0 ] || die "no staging modules found in the replace block of k8s.io/kubernetes@${KUBE_VERSION}/go.mod"
  chmod -R u+w "${dir}"
  # Module zips drop file modes; give scripts back their executable bit.
  find "${dir}" -type f -name '*.sh' -exec chmod +x {} +
  echo "    k8s.io/kubernetes and ${n} staging modules"
  local note=""
  if [ -n "${substitutes}" ]; then
    echo "    refused by the proxy at ${STAGING_VERSION}, taken at the nearest earlier release: ${substitutes% }"
    note="
Refused by the proxy at ${STAGING_VERSION}, taken at the nearest earlier patch
release: ${substitutes% }."
  fi
  step_done

  step "committing pristine ${KUBE_VERSION}"
  git -C "${dir}" init -q -b "${TREE_BRANCH}"
  git -C "${dir}" config user.name "Evented Volume Manager developers"
  git -C "${dir}" config user.email "dev@evented-volume-manager.invalid"
  git -C "${dir}" config core.abbrev 12
  git -C "${dir}" -c core.safecrlf=false add -A -f .
  GIT_AUTHOR_NAME="Kubernetes Authors" GIT_AUTHOR_EMAIL="kubernetes@kubernetes.invalid" \
    GIT_AUTHOR_DATE="${PRISTINE_DATE}" GIT_COMMITTER_DATE="${PRISTINE_DATE}" \
    git -C "${dir}" commit -q -m "Kubernetes ${KUBE_VERSION}

Rebuilt from the Go module proxy: k8s.io/kubernetes@${KUBE_VERSION} with the
k8s.io/* staging modules@${STAGING_VERSION} under staging/src/k8s.io.${note}"
  git -C "${dir}" tag "${KUBE_VERSION}"
  echo "    $(git -C "${dir}" rev-parse --short "${KUBE_VERSION}") ${KUBE_VERSION}"
  step_done
}

# kube_ldflags DIR: sets KUBE_LDFLAGS to the version ldflags of a binary
# built from DIR's HEAD (the assembled tree, or a worktree of it), the way
# upstream's hack/lib/version.sh sets them, and KUBE_BUILD_VERSION to the
# version: the release plus our suffix,
# v1.37.0-evm.<commits past the tag>+<commit>[-dirty], or on the tag itself
# the release alone, v1.37.0[-dirty], as upstream names a build of a release
# tag. The build date is the commit's, so the same tree builds the same
# binary.
kube_ldflags() {
  local dir="$1" commit count state build_date major minor pkg
  commit=$(git -C "${dir}" rev-parse HEAD)
  count=$(git -C "${dir}" rev-list --count "${KUBE_VERSION}..HEAD")
  state=clean
  if [ -n "$(git -C "${dir}" status --porcelain --untracked-files=no)" ]; then
    state=dirty
  fi
  if [ "${count}" = 0 ]; then
    KUBE_BUILD_VERSION="${KUBE_VERSION}"
  else
    KUBE_BUILD_VERSION="${KUBE_VERSION}-evm.${count}+${commit:0:12}"
  fi
  [ "${state}" = clean ] || KUBE_BUILD_VERSION="${KUBE_BUILD_VERSION}-dirty"
  build_date=$(TZ=UTC git -C "${dir}" show -s --date=format-local:'%Y-%m-%dT%H:%M:%SZ' --format=%cd HEAD)
  major=${KUBE_VERSION#v}; major=${major%%.*}
  minor=${KUBE_VERSION#v}; minor=${minor#*.}; minor=${minor%%.*}
  KUBE_LDFLAGS=""
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    KUBE_LDFLAGS+=" -X '${pkg}.gitVersion=${KUBE_BUILD_VERSION}'"
    KUBE_LDFLAGS+=" -X '${pkg}.gitCommit=${commit}'"
    KUBE_LDFLAGS+=" -X '${pkg}.gitTreeState=${state}'"
    KUBE_LDFLAGS+=" -X '${pkg}.buildDate=${build_date}'"
    KUBE_LDFLAGS+=" -X '${pkg}.gitMajor=${major}'"
    KUBE_LDFLAGS+=" -X '${pkg}.gitMinor=${minor}'"
  done
}

# go_build_kubelet DIR BINARY: builds DIR's ./cmd/kubelet into BINARY with the
# project's flags: static, -trimpath and KUBE_LDFLAGS (run kube_ldflags DIR
# first). -trimpath also keeps the package directories out of the build
# cache's keys, so a worktree of the tree reuses what the tree compiled.
# BINARY is replaced only by a complete build.
go_build_kubelet() {
  local dir="$1" bin="$2"
  mkdir -p "$(dirname "${bin}")"
  (cd "${dir}" && CGO_ENABLED=0 go build -trimpath -ldflags "${KUBE_LDFLAGS}" -o "${bin}.new" ./cmd/kubelet) || return 1
  mv "${bin}.new" "${bin}"
}
