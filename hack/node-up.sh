#!/usr/bin/env bash
# make node-up: a node to try the gate on by hand (cmd/node-up). It starts the
# container runtime and the patched kubelet, gate off unless NODE_UP_GATE=true,
# with NODE_UP_PODS static pods (default 10) x 4 volumes in _output/node-up
# and the kubelet's --v at NODE_UP_V (default 3),
# prints where the kubelet's configuration, log and PID file are and how to
# scrape its metrics, and keeps the node running until Ctrl-C, which stops it
# and restores the host. When the kubelet exits it is started again a second
# later from its configuration file: edit the file's featureGates and kill the
# kubelet to flip the gate, as an operator restarts a kubelet. NODE_RUNTIME=crio
# runs it on CRI-O.
#
# Needs root.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

require_root "node-up" "it runs a container runtime, runc and a kubelet"
step "node-up: ${NODE_UP_PODS:-10} pods x 4 volumes, EventedVolumeManager=${NODE_UP_GATE:-false} (Ctrl-C stops the node)"
cd "${ROOT}" || exit
go build -o "${OUT}/bin/node-up" ./cmd/node-up
rc=0
EVM_KUBELET="${KUBELET}" "${OUT}/bin/node-up" -out _output -pods "${NODE_UP_PODS:-10}" -feature-gates "EventedVolumeManager=${NODE_UP_GATE:-false}" -v "${NODE_UP_V:-3}" || rc=$?
rm -f "${OUT}/bin/node-up"
[ "${rc}" = 0 ] || die "node-up failed; the node's logs are under _output/node-up/logs."
step_done
