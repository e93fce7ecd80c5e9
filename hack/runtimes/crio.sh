#!/usr/bin/env bash
# CRI-O's part of the real node's scripts, sourced by them after lib.sh when
# NODE_RUNTIME=crio:
#   runtime_deps      installs conmon ${CONMON_VERSION} from Debian and builds
#                     CRI-O ${CRIO_VERSION} (crio, pinns, and CRI-O's
#                     test/copyimg as crio-copyimg, which imports the images
#                     into CRI-O's storage) into _output/bin (make node-deps);
#   runtime_e2e_skip  prints what the node e2e suite cannot run on this host
#                     with CRI-O, as a regular expression to skip.
# pkg/node's CRI-O driver runs it.

CRIO_VERSION=v1.34.0
CONMON_VERSION=2.1.6+ds1-1
# CRI-O's build tags without gpgme (openpgp instead), btrfs or ostree.
CRIO_TAGS="containers_image_openpgp containers_image_ostree_stub exclude_graphdriver_btrfs btrfs_noversion seccomp"

runtime_deps() {
  step "conmon ${CONMON_VERSION} (Debian)"
  if [ "$(dpkg-query -W -f '${Version}' conmon 2>/dev/null)" = "${CONMON_VERSION}" ]; then
    echo "    already installed"
  else
    apt_install "conmon=${CONMON_VERSION}"
  fi
  echo "    $(conmon --version | sed -n 1p)"
  step_done

  step "CRI-O ${CRIO_VERSION} (crio, pinns, crio-copyimg; cold: about 3 minutes)"
  if [[ "$(version_of "${BIN}/crio" | sed -n 1p)" == "crio version ${CRIO_VERSION#v}" ]] &&
    [ -x "${BIN}/pinns" ] && [ -x "${BIN}/crio-copyimg" ]; then
    echo "    already built"
  else
    (cd "${OUT}" && GOFLAGS=-mod=mod go mod download "github.com/cri-o/cri-o@${CRIO_VERSION}") ||
      die "cannot download github.com/cri-o/cri-o@${CRIO_VERSION} through the Go module proxy."
    local src="${OUT}/src/cri-o"
    rm -rf "${src}"
    mkdir -p "${OUT}/src"
    cp -r "$(go env GOMODCACHE)/github.com/cri-o/cri-o@${CRIO_VERSION}" "${src}"
    chmod -R u+w "${src}"
    (cd "${src}" && CGO_ENABLED=1 go build -mod=mod -tags "${CRIO_TAGS}" -o "${BIN}/crio" ./cmd/crio &&
      CGO_ENABLED=1 go build -mod=mod -tags "${CRIO_TAGS}" -o "${BIN}/crio-copyimg" ./test/copyimg) ||
      die "building CRI-O ${CRIO_VERSION} failed (it needs gcc and libseccomp-dev); see the compiler's output above."
    make -s -C "${src}/pinns" CC=gcc >/dev/null || die "building CRI-O's pinns failed (it needs gcc and a static libc)."
    cp "${src}/bin/pinns" "${BIN}/pinns"
    rm -rf "${src}"
  fi
  echo "    $(version_of "${BIN}/crio" | sed -n 1p)"
  step_done
}

# CRI-O gives a privileged container every capability up to cap_last_cap;
# containerd gives it the capabilities it has itself. Where the host's
# bounding set lacks one (CAP_SYS_RESOURCE on the project's machines), runc
# cannot raise it, and privileged containers never start on CRI-O: upstream's
# privileged HostPath specs are skipped.
runtime_e2e_skip() {
  local bounding last_cap
  bounding=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
  last_cap=$(cat /proc/sys/kernel/cap_last_cap)
  if [ $((16#${bounding})) != $(( (1 << (last_cap + 1)) - 1 )) ]; then
    echo "    this host's capability bounding set (CapBnd ${bounding}) lacks capabilities up to cap_last_cap ${last_cap}:" >&2
    echo "    CRI-O's privileged containers cannot start, so upstream's privileged HostPath specs are skipped" >&2
    echo 'HostPath should support (r/w|subPath)'
  fi
}
