#!/usr/bin/env bash
# make node-deps: everything a real node needs besides the kubelet, pinned,
# from the Go module proxy and Debian's packages only, into _output/bin and
# _output/images:
#   runc ${RUNC_VERSION} (cgo, libseccomp)
#   crictl ${CRICTL_VERSION}
#   busybox ${BUSYBOX_VERSION}, built static with its defconfig from Debian's
#   source archive, as upstream's e2e busybox image has every defconfig
#   applet (Debian's busybox-static lacks some that upstream's node e2e
#   specs use, such as nmeter)
#   pause (the tree's build/pause source), busybox and agnhost (the tree's
#   test/images/agnhost, on busybox's layer) as image archives, imported by
#   each runtime's driver; no registry is ever used
#   the container runtimes' own parts (hack/runtimes/NAME.sh): containerd's,
#   which make test runs on, and NODE_RUNTIME's (crio: CRI-O with conmon).
#   Plain make and make test never build CRI-O.
# Reruns reuse what is already there at the pinned versions.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

RUNC_VERSION=v1.5.2
CRICTL_VERSION=v1.36.0
BUSYBOX_VERSION=1.35.0
BUSYBOX_SHA256=faeeb244c35a348a334f4a59e44626ee870fb07b6884d68c10ae8bc19f83a694
BUSYBOX_URL="http://deb.debian.org/debian/pool/main/b/busybox/busybox_${BUSYBOX_VERSION}.orig.tar.bz2"
BIN="${OUT}/bin"
IMAGES="${OUT}/images"
mkdir -p "${BIN}" "${IMAGES}"
total_start=$(date +%s)

step "Debian packages: libseccomp-dev, pkg-config, containernetworking-plugins, curl, bzip2"
missing=()
for p in libseccomp-dev pkg-config containernetworking-plugins curl bzip2; do
  dpkg -s "${p}" >/dev/null 2>&1 || missing+=("${p}")
done
if [ "${#missing[@]}" -gt 0 ]; then
  apt_install "${missing[@]}"
else
  echo "    already installed"
fi
step_done

# version_of BINARY: the binary's --version output, or nothing.
version_of() {
  "$1" --version 2>/dev/null || true
}

step "runc ${RUNC_VERSION} (cgo, seccomp)"
if [[ "$(version_of "${BIN}/runc")" == *"runc version ${RUNC_VERSION#v}"* ]]; then
  echo "    already built"
else
  GOBIN="${BIN}" CGO_ENABLED=1 GOFLAGS="${GOFLAGS} -mod=mod" go install -tags "seccomp urfave_cli_no_docs" \
    "github.com/opencontainers/runc@${RUNC_VERSION}" ||
    die "building runc ${RUNC_VERSION} failed (it needs gcc and libseccomp-dev)."
fi
echo "    $(version_of "${BIN}/runc" | sed -n 1p)"
step_done

step "crictl ${CRICTL_VERSION}"
if [ -x "${BIN}/crictl" ]; then
  echo "    already built"
else
  # go install fails here: the proxy refuses the module's version list, which
  # go install reads for deprecations. Build from the downloaded module.
  (cd "${OUT}" && GOFLAGS=-mod=mod go mod download "sigs.k8s.io/cri-tools@${CRICTL_VERSION}") ||
    die "cannot download sigs.k8s.io/cri-tools@${CRICTL_VERSION} through the Go module proxy."
  src="${OUT}/src/cri-tools"
  rm -rf "${src}"
  mkdir -p "${OUT}/src"
  cp -r "$(go env GOMODCACHE)/sigs.k8s.io/cri-tools@${CRICTL_VERSION}" "${src}"
  chmod -R u+w "${src}"
  (cd "${src}" && CGO_ENABLED=0 go build -mod=mod -o "${BIN}/crictl" ./cmd/crictl) ||
    die "building crictl ${CRICTL_VERSION} failed."
  rm -rf "${src}"
fi
echo "    ${BIN#"${ROOT}/"}/crictl"
step_done

# The runtimes' own parts: containerd's, which make test runs on, and NODE_RUNTIME's.
for runtime in $(printf '%s\n' containerd "${NODE_RUNTIME:-containerd}" | sort -u); do
  use_runtime "${runtime}"
  runtime_deps
done

step "busybox ${BUSYBOX_VERSION} (defconfig, static) from Debian's source archive"
if [ -x "${BIN}/busybox" ] && [ "$(cat "${BIN}/busybox.stamp" 2>/dev/null)" = "${BUSYBOX_SHA256}" ]; then
  echo "    already built"
else
  src="${OUT}/src/busybox-${BUSYBOX_VERSION}"
  archive="${OUT}/src/busybox_${BUSYBOX_VERSION}.orig.tar.bz2"
  mkdir -p "${OUT}/src"
  curl -sSfL -o "${archive}" "${BUSYBOX_URL}" || die "downloading ${BUSYBOX_URL} failed (is Debian's archive reachable?)."
  echo "${BUSYBOX_SHA256}  ${archive}" | sha256sum -c --quiet - || die "${archive} does not have the pinned SHA-256."
  rm -rf "${src}" && tar -C "${OUT}/src" -xjf "${archive}"
  echo "    compiling (about a minute on two cores)"
  (cd "${src}" && make defconfig >/dev/null &&
    sed -i 's/^# CONFIG_STATIC is not set/CONFIG_STATIC=y/' .config &&
    make -j"$(nproc)" >build.log 2>&1) || die "compiling busybox failed; see ${src}/build.log."
  cp "${src}/busybox" "${BIN}/busybox" && echo "${BUSYBOX_SHA256}" >"${BIN}/busybox.stamp"
fi
echo "    $("${BIN}/busybox" | sed -n 1p)"
step_done

step "agnhost from the tree's test/images/agnhost"
require_tree
# As upstream's image builds it (test/images/image-util.sh bin), with the
# tree's own modules, and with -trimpath as the kubelet is built, so the
# packages they share compile once. go build leaves an up-to-date binary as it
# is (about a second); the first build takes about 3.5 minutes on two cores.
(cd "${TREE}" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "-w -X main.Version=$(cat test/images/agnhost/VERSION)" \
  -o "${IMAGES}/agnhost" ./test/images/agnhost) ||
  die "building test/images/agnhost from the tree failed."
echo "    $("${IMAGES}/agnhost" --version 2>/dev/null | sed -n 1p)"
step_done

step "images: pause from the tree's build/pause, busybox, agnhost on busybox"
gcc -Os -Wall -Werror -static -DVERSION="${KUBE_VERSION}-evm" -o "${IMAGES}/pause" "${TREE}/build/pause/linux/pause.c" ||
  die "compiling build/pause/linux/pause.c failed (gcc with static libc is needed)."
strip "${IMAGES}/pause"
(cd "${ROOT}" && go run ./cmd/build-image -pause "${IMAGES}/pause" -busybox "${BIN}/busybox" \
  -agnhost "${IMAGES}/agnhost" \
  -porter "${TREE}/test/images/agnhost/porter" -out "${IMAGES}")
step_done

printf 'node-deps ready in %ss\n' "$(( $(date +%s) - total_start ))"
