#!/usr/bin/env bash
# make test: the project's own tests (the root module, which also drives the
# built kubelet), then upstream's tests of every in-tree package the series
# touches. Each step prints its duration.

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ -d "${TREE}/.git" ] || die "${TREE#"${ROOT}/"} does not exist: run make first."
[ -x "${OUT}/bin/kubelet" ] || die "_output/bin/kubelet does not exist: run make first."
total_start=$(date +%s)

# touched_packages: the in-tree packages the series touches: the directory of
# every changed Go file, and for other changed files (generated lists, test
# data) every package under the nearest directory that holds Go code.
touched_packages() {
  local f d
  tree_git diff --name-only "${KUBE_VERSION}..HEAD" | while IFS= read -r f; do
    d=$(dirname "${f}")
    case "${f}" in
      *.go)
        [ -d "${TREE}/${d}" ] && echo "./${d}"
        ;;
      *)
        while [ "${d}" != "." ] && ! compgen -G "${TREE}/${d}/*.go" >/dev/null; do
          d=$(dirname "${d}")
        done
        [ "${d}" != "." ] && echo "./${d}/..."
        ;;
    esac
  done | LC_ALL=C sort -u
}

step "root module: go vet and go test ./... (drives _output/bin/kubelet)"
(cd "${ROOT}" && go vet ./...)
(cd "${ROOT}" && EVM_KUBELET="${OUT}/bin/kubelet" EVM_REQUIRE_BINARIES=1 go test -count=1 ./...)
step_done

pkgs=$(touched_packages)
step "in-tree tests of every package the series touches, with -race (cold: a few minutes to build)"
echo "    ${pkgs}" | tr '\n' ' '; echo
if [ -n "${pkgs}" ]; then
  (cd "${TREE}" && go test -race -count=1 ${pkgs})
fi
step_done

# The series' benchmarks, briefly: they must run, and their numbers are
# printed. Performance claims come from make bench, not from here.
step "benchmarks of the wakeup package (brief)"
(cd "${TREE}" && go test -run '^$' -bench . -benchtime 200ms -count 1 ./pkg/kubelet/volumemanager/wakeup/)
step_done

step "fuzzing the runtime event handler (${FUZZTIME:-10s})"
(cd "${TREE}" && go test -run '^$' -fuzz '^FuzzHandleEvent$' -fuzztime "${FUZZTIME:-10s}" ./pkg/kubelet/volumemanager/wakeup/)
step_done

printf 'make test passed in %ss\n' "$(( $(date +%s) - total_start ))"
