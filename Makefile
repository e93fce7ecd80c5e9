# Evented volume manager: a patch series against Kubernetes v1.37.0.
#
#   make          assemble _output/kubernetes (v1.37.0 + patches/) and build _output/bin/kubelet
#   make test     the project's tests and upstream's tests of every package the series touches
#                 (as root also a one-pod real-node smoke test; NODE_SMOKE=0 skips it)
#   make verify   the series applies cleanly, matches the tree, and passes gofmt, vet and gate checks
#   make bench    side-by-side benchmark of the volume manager, gate off vs on
#   make export   write the tree's commits (v1.37.0..HEAD) to patches/
#   make node-deps  containerd, runc, crictl and local images for a real node
#   make node-smoke one static pod on containerd and the patched kubelet (root)
#   make node-test  the real-node tests: smoke, runtime restarts, kubelet restart, churn flood, gate flips (root)
#   make node-up    a node to try the gate on by hand: 10 pods, gate off, until Ctrl-C (root;
#                   NODE_UP_PODS, NODE_UP_GATE=true)
#   make node-bench the real-node benchmark, 110 pods x 4 volumes (root): upstream's v1.37.0 kubelet
#                   (stock, _output/bin/kubelet-stock) vs the series' with the gate off and on;
#                   NODE_BENCH_SIZES="110 250 500" runs it at each size and reports the scale matrix;
#                   NODE_BENCH_STOCK=0 skips stock
#   make kubelet-stock  build _output/bin/kubelet-stock: upstream's kubelet from the tree's v1.37.0 tag, no series
#   make cluster-deps  etcd, kube-apiserver, kube-controller-manager and the project's CSI driver, for a cluster node
#   make node-bench-cluster  the benchmark on a cluster node (API server, attach/detach controller, CSI), gate off vs on (root)
#   make node-test-cluster   the real-node tests on a cluster node: CSI attach, reconstruction, detach, configMap and token (root)
#   make e2e-node   upstream's node e2e suite, offline: the gate's tests, "Kubelet Volume Manager" and upstream's volume conformance specs (root)
#   make rebase-check  apply the series with git am -3 to v1.38.0-alpha.0 (REBASE_VERSION=...), report, build the kubelet
#   make KUBE_VERSION=v1.37.2 [test|verify]  the same on another v1.37 patch release, in _output/kubernetes-v1.37.2
#   make clean    remove _output/

SHELL := /usr/bin/env bash

.PHONY: all assemble kubelet kubelet-stock export verify test bench rebase-check node-deps node-smoke node-test node-up node-bench cluster-deps node-bench-cluster node-test-cluster e2e-node clean help

all: kubelet

## assemble: rebuild _output/kubernetes from the module proxy and apply patches/ (idempotent)
assemble:
	@hack/assemble.sh

## kubelet: build _output/bin/kubelet from the assembled tree
kubelet: assemble
	@hack/build-kubelet.sh

## kubelet-stock: build _output/bin/kubelet-stock, upstream's kubelet from the tree's release tag without the series
kubelet-stock: assemble
	@hack/build-stock-kubelet.sh

## export: write the tree's commits to patches/
export:
	@hack/export.sh

## verify: check the series against the tree and upstream's checks
verify: assemble
	@hack/verify.sh

## test: run the project's tests and upstream's tests of the touched packages
test: kubelet
	@hack/test.sh

## rebase-check: apply the series with git am -3 to v1.38.0-alpha.0 (or REBASE_VERSION), report per patch, build the kubelet
rebase-check:
	@hack/rebase-check.sh

## bench: the in-tree side-by-side benchmark, gate off vs on (110 and 500 pods); tables and charts in _output/bench
bench: assemble
	@hack/bench.sh

## node-deps: build containerd, runc, crictl (pinned) and the pause and busybox images, offline
node-deps: assemble
	@hack/node-deps.sh

## node-smoke: run the patched kubelet (gate on) on containerd with one static pod (root)
node-smoke: kubelet node-deps
	@EVM_NODE=smoke hack/node-test.sh

## node-test: the real-node tests: smoke, the runtime killed 10 times, kubelet restart, churn flood, gate flips (root)
node-test: kubelet node-deps
	@EVM_NODE=full hack/node-test.sh

## node-up: a node to try the gate on by hand, until Ctrl-C: NODE_UP_PODS pods (10), gate NODE_UP_GATE (false) (root)
node-up: kubelet node-deps
	@hack/node-up.sh

## node-bench: the real-node benchmark, stock vs gate off vs gate on; table and charts in _output/node-bench (root; NODE_BENCH_SIZES="110 250 500" for the scale matrix, NODE_BENCH_STOCK=0 without stock)
node-bench: kubelet node-deps
	@[ "$${NODE_BENCH_STOCK:-1}" = 0 ] || hack/build-stock-kubelet.sh
	@hack/node-bench.sh

## cluster-deps: etcd, kube-apiserver and kube-controller-manager from the tree, and the project's CSI driver
cluster-deps: assemble
	@hack/cluster-deps.sh

## node-bench-cluster: the benchmark on a cluster node, gate off vs on; table and charts in _output/node-bench-cluster (root)
node-bench-cluster: kubelet node-deps cluster-deps
	@hack/node-bench-cluster.sh

## node-test-cluster: the real-node tests on a cluster node, gate off and on (root)
node-test-cluster: kubelet node-deps cluster-deps
	@EVM_NODE=cluster hack/node-test.sh

## e2e-node: upstream's node e2e suite, locally and offline: the gate's tests and upstream's volume conformance specs, gate on (root)
e2e-node: kubelet node-deps
	@hack/e2e-node.sh

## clean: remove everything make built
clean:
	rm -rf _output

help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST)
