#!/usr/bin/env bash
# containerd's part of the real node's scripts, sourced by them after lib.sh:
#   runtime_deps      builds containerd, ctr and containerd-shim-runc-v2
#                     ${CONTAINERD_VERSION} into _output/bin (make node-deps);
#   runtime_e2e_skip  prints what the node e2e suite cannot run on this host
#                     with containerd: nothing.
# pkg/node's containerd driver runs it.

CONTAINERD_VERSION=v2.4.2

runtime_deps() {
  step "containerd ${CONTAINERD_VERSION} (containerd, ctr, containerd-shim-runc-v2)"
  if [[ "$(version_of "${BIN}/containerd")" == *" ${CONTAINERD_VERSION#v}"* ]] &&
    [ -x "${BIN}/ctr" ] && [ -x "${BIN}/containerd-shim-runc-v2" ]; then
    echo "    already built"
  else
    GOBIN="${BIN}" CGO_ENABLED=0 GOFLAGS="${GOFLAGS} -mod=mod" go install -tags no_btrfs \
      "github.com/containerd/containerd/v2/cmd/containerd@${CONTAINERD_VERSION}" \
      "github.com/containerd/containerd/v2/cmd/ctr@${CONTAINERD_VERSION}" \
      "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2@${CONTAINERD_VERSION}" ||
      die "building containerd ${CONTAINERD_VERSION} failed (is the Go module proxy reachable?)."
  fi
  echo "    $(version_of "${BIN}/containerd")"
  step_done
}

runtime_e2e_skip() {
  :
}
