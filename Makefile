# Evented volume manager: a patch series against Kubernetes v1.37.0.
# `make help` lists every target and the variables it takes; README.md
# describes the workflow.

SHELL := /usr/bin/env bash

.PHONY: all assemble kubelet kubelet-stock update-patches verify test bench rebase-check node-deps node-smoke node-test node-up node-bench cluster-deps node-bench-cluster node-test-cluster test-e2e-node node-conformance clean help

## Every target takes KUBE_VERSION=v1.37.N: the series on another v1.37 patch release, in _output/kubernetes-v1.37.N.
## The real-node targets take NODE_RUNTIME=crio: CRI-O instead of containerd.
##
## all: the default: make kubelet
all: kubelet

## assemble: rebuild _output/kubernetes from the module proxy and apply patches/ (idempotent; FORCE=1 discards tree commits that are not in patches/)
assemble:
	@hack/assemble.sh

## kubelet: build _output/bin/kubelet from the assembled tree
kubelet: assemble
	@hack/build-kubelet.sh

## kubelet-stock: build _output/bin/kubelet-stock, upstream's kubelet from the tree's release tag without the series
kubelet-stock: assemble
	@hack/build-stock-kubelet.sh

## update-patches: write the tree's commits to patches/
update-patches:
	@hack/update-patches.sh

## verify: check the series against the tree and upstream's checks, and shellcheck hack/ (VERIFY_EACH_COMMIT=0, VERIFY_EACH_PR=0 skip the slowest)
verify: assemble
	@hack/verify.sh

## test: run the project's tests and upstream's tests of the touched packages; as root also the real-node smoke test (NODE_SMOKE=0 skips it)
test: kubelet
	@hack/test.sh

## rebase-check: apply the series with git am -3 to v1.38.0-alpha.0 (or REBASE_VERSION), report per patch, build the kubelet, test the changed packages with the gates declared at that release
rebase-check:
	@hack/rebase-check.sh

## bench: the in-tree side-by-side benchmark, gate off vs on (110 and 500 pods); tables and charts in _output/bench
bench: assemble
	@hack/bench.sh

## node-deps: build containerd, runc, crictl (pinned) and the pause, busybox and agnhost images, offline
node-deps: assemble
	@hack/node-deps.sh

## node-smoke: run the patched kubelet (gate on) on containerd with one static pod (root)
node-smoke: kubelet node-deps
	@EVM_NODE=smoke hack/node-test.sh

## node-test: the real-node tests: smoke, the runtime killed 10 times, kubelet restart, churn floods (100 pods; 250 with 125 exiting), gate flips, binary swap to upstream's kubelet and back (root)
node-test: kubelet kubelet-stock node-deps
	@EVM_NODE=full hack/node-test.sh

## node-up: a node to try the gate on by hand, until Ctrl-C: NODE_UP_PODS pods (10), gate NODE_UP_GATE (false), --v NODE_UP_V (3) (root)
node-up: kubelet node-deps
	@hack/node-up.sh

## node-bench: the real-node benchmark, stock vs gate off vs gate on vs all gates; table and charts in _output/node-bench (root; NODE_BENCH_SIZES="110 250 500" for the scale matrix, NODE_BENCH_STOCK=0 without stock, NODE_BENCH_FLAGS="-configs gate-off,gate-on" to choose)
node-bench: kubelet node-deps
	@[ "$${NODE_BENCH_STOCK:-1}" = 0 ] || hack/build-stock-kubelet.sh
	@hack/node-bench.sh

## cluster-deps: etcd, kube-apiserver and kube-controller-manager from the tree, and the project's CSI driver
cluster-deps: assemble
	@hack/cluster-deps.sh

## node-bench-cluster: the benchmark on a cluster node, gate off vs gate on vs node-status gate vs all gates; table and charts in _output/node-bench-cluster (root; NODE_BENCH_CLUSTER_FLAGS="-configs gate-off,gate-on" to choose)
node-bench-cluster: kubelet node-deps cluster-deps
	@hack/node-bench-cluster.sh

## node-test-cluster: the real-node tests on a cluster node, every gate off and on: CSI attach, reconstruction, detach, gate flips, a 30 s API server outage (root; EVM_TOKEN_ROTATION=false skips the token rotation's 9 minutes)
node-test-cluster: kubelet node-deps cluster-deps
	@EVM_NODE=cluster hack/node-test.sh

## test-e2e-node: upstream's node e2e suite, locally and offline: the gate's specs and upstream's volume conformance specs (root; FOCUS=REGEXP, SKIP=REGEXP, PARALLELISM=3 Ginkgo processes, GATE=false or stock, TIMEOUT=45m, RESULTS=DIR)
test-e2e-node: kubelet node-deps
	@hack/test-e2e-node.sh

## node-conformance: upstream's [NodeConformance] node e2e specs, offline, on stock v1.37.0 and with the gate on (GATES="stock all": every gate), and the table (root; about 50 minutes; SLOW=true adds [Slow] and [Serial])
node-conformance: kubelet kubelet-stock node-deps
	@hack/node-conformance.sh

## clean: remove everything make built
clean:
	rm -rf _output

## help: list the targets and their variables
help:
	@sed -n 's/^##\( \|$$\)//p' $(MAKEFILE_LIST)
