#!/usr/bin/env bash
# make node-smoke: a short real-node smoke run of the patched kubelet against
# containerd (from make node-deps), standalone, with one static pod using
# emptyDir, hostPath and downwardAPI volumes. It checks that the container sees
# its volumes, prints the volume manager's log lines and metrics, deletes the
# pod and checks that its volume directories are gone.
#
#   GATE=true|false (default true)   the EventedVolumeManager gate
#   IDLE=seconds (default 20)        how long the pod runs before deletion
#
# Needs root. It changes host state only as the recipe says a kubelet does,
# and restores it on exit, Ctrl-C included: the sysctls the kubelet sets, the
# fixed host paths it and containerd create (only those that did not exist
# before), and every mount under _output/node. It never adds iptables chains
# (makeIPTablesUtilChains: false).

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
set +o errexit

BIN="${OUT}/bin"
W="${OUT}/node"
[ "$(id -u)" = 0 ] || die "node-smoke needs root (it runs containerd and a kubelet)."
for b in kubelet containerd ctr runc crictl; do
  [ -x "${BIN}/${b}" ] || die "${BIN#"${ROOT}/"}/${b} is missing: run make and make node-deps first."
done
[ -f "${OUT}/images/busybox.tar" ] || die "the node images are missing: run make node-deps first."
if curl -s -m 1 http://127.0.0.1:10248/healthz >/dev/null 2>&1 || pgrep -x kubelet >/dev/null || pgrep -x containerd >/dev/null; then
  die "a kubelet or containerd is already running on this host; stop it first."
fi

SYSCTLS="vm.overcommit_memory kernel.panic kernel.panic_on_oops"
declare -A SAVED
for k in ${SYSCTLS}; do SAVED[$k]=$(sysctl -n "$k"); done
HOST_PATHS="/var/lib/kubelet /var/log/containers /var/log/pods /run/containerd /var/lib/cni /usr/libexec/kubernetes"
CREATED=""
for p in ${HOST_PATHS}; do [ -e "$p" ] || CREATED="${CREATED} $p"; done
CPID=""; KPID=""
cleanup() {
  echo "==> cleanup: stopping the kubelet and containerd, restoring the host"
  [ -n "${KPID}" ] && kill "${KPID}" 2>/dev/null && wait "${KPID}" 2>/dev/null
  if [ -n "${CPID}" ]; then
    "${BIN}/crictl" -c "${W}/crictl.yaml" rmp -af >/dev/null 2>&1
    kill "${CPID}" 2>/dev/null; wait "${CPID}" 2>/dev/null
  fi
  pkill -f "${BIN}/containerd-shim-runc-v2" 2>/dev/null
  for k in ${SYSCTLS}; do sysctl -qw "$k=${SAVED[$k]}"; done
  awk -v w="${W}" '$2 ~ "^"w || $2 ~ "^/run/containerd" {print $2}' /proc/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null
  for p in ${CREATED}; do rm -rf "$p"; done
  echo "    sysctls: $(for k in ${SYSCTLS}; do printf '%s=%s ' "$k" "$(sysctl -n "$k")"; done)"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
GATE=${GATE:-true}
echo "==> containerd and the kubelet (EventedVolumeManager=${GATE}) under ${W#"${ROOT}/"}"
rm -rf $W; mkdir -p $W/{containerd,logs,kubelet/manifests,kubelet/root,kubelet/pki,kubelet/podlogs,kubelet/volume-plugins,cni/bin,cni/net.d,runc-root,hostpath-src}
echo "from-the-host" > $W/hostpath-src/greeting
cat > $W/containerd/config.toml <<TOML
version = 3
root = "$W/containerd/root"
state = "$W/containerd/state"
[grpc]
  address = "$W/containerd.sock"
[ttrpc]
  address = "$W/containerd.sock.ttrpc"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "localhost/pause:local"
[plugins.'io.containerd.cri.v1.runtime']
  enable_selinux = false
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "$BIN/runc"
        SystemdCgroup = false
        Root = "$W/runc-root"
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["$W/cni/bin"]
    conf_dir = "$W/cni/net.d"
[plugins.'io.containerd.nri.v1.nri']
  disable = true
TOML
printf 'runtime-endpoint: unix://%s/containerd.sock\nimage-endpoint: unix://%s/containerd.sock\ntimeout: 10\n' $W $W > $W/crictl.yaml
PATH=$BIN:$PATH $BIN/containerd --config $W/containerd/config.toml > $W/logs/containerd.log 2>&1 & CPID=$!
for i in $(seq 50); do [ -S $W/containerd.sock ] && break; sleep 0.1; done
$BIN/ctr --address $W/containerd.sock -n k8s.io images import --platform linux/amd64 $OUT/images/pause.tar
$BIN/ctr --address $W/containerd.sock -n k8s.io images import --platform linux/amd64 $OUT/images/busybox.tar
cat > $W/kubelet/config.yaml <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: $W/kubelet/manifests
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
makeIPTablesUtilChains: false
containerRuntimeEndpoint: unix://$W/containerd.sock
imageServiceEndpoint: unix://$W/containerd.sock
podLogsDir: $W/kubelet/podlogs
volumePluginDir: $W/kubelet/volume-plugins
address: 127.0.0.1
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
resolvConf: /etc/resolv.conf
featureGates:
  EventedVolumeManager: ${GATE}
YAML
$BIN/kubelet --config $W/kubelet/config.yaml --root-dir $W/kubelet/root --cert-dir $W/kubelet/pki --hostname-override smoke --v=3 > $W/logs/kubelet.log 2>&1 & KPID=$!
for i in $(seq 100); do curl -s http://127.0.0.1:10248/healthz 2>/dev/null | grep -q ok && break; sleep 0.2; done
echo "== kubelet healthz: $(curl -s http://127.0.0.1:10248/healthz)"
cat > $W/kubelet/.sp1.yaml <<POD
apiVersion: v1
kind: Pod
metadata: {name: sp1, namespace: default, labels: {app: smoke}}
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 0
  containers:
  - name: bb
    image: localhost/busybox:local
    imagePullPolicy: Never
    command: ["sh", "-c", "echo written-by-container > /data/hello; sleep 3600"]
    volumeMounts:
    - {name: scratch, mountPath: /data}
    - {name: host, mountPath: /host}
    - {name: info, mountPath: /etc/podinfo}
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: host, hostPath: {path: $W/hostpath-src, type: Directory}}
  - name: info
    downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}
POD
mv $W/kubelet/.sp1.yaml $W/kubelet/manifests/sp1.yaml
for i in $(seq 150); do $BIN/crictl -c $W/crictl.yaml ps 2>/dev/null | grep -q " bb " && break; sleep 0.2; done
CID=$($BIN/crictl -c $W/crictl.yaml ps -q --name bb | head -1)
echo "== container $CID"
sleep 1
FAILED=0
# check WHAT GOT WANT: compares what the container sees with what it should.
check() {
  if [ "$2" = "$3" ]; then echo "    ok: $1 = $2"; else echo "    FAIL: $1 = '$2', want '$3'"; FAILED=1; fi
}
[ -n "$CID" ] || { echo "FAIL: the static pod's container did not start"; tail -20 $W/logs/kubelet.log; exit 1; }
check "hostPath /host/greeting" "$($BIN/crictl -c $W/crictl.yaml exec $CID cat /host/greeting)" "from-the-host"
check "emptyDir /data/hello" "$($BIN/crictl -c $W/crictl.yaml exec $CID cat /data/hello)" "written-by-container"
check "downwardAPI /etc/podinfo/labels" "$($BIN/crictl -c $W/crictl.yaml exec $CID cat /etc/podinfo/labels)" 'app="smoke"'
UID_=$(ls $W/kubelet/root/pods | head -1)
echo "== pod volumes: $(ls $W/kubelet/root/pods/$UID_/volumes)"
grep -E "Waiting for volumes to attach|All volumes are attached and mounted" $W/logs/kubelet.log | grep sp1 | cut -c1-60
sleep ${IDLE:-20}
echo "== metrics"
curl -sk https://127.0.0.1:10250/metrics | grep -E "^volume_manager_(loop_iterations_total|loop_period_seconds|runtime_event_stream_connected|runtime_event_stream_connections_total|runtime_events_total|loop_missed_signals_total)" 
rm $W/kubelet/manifests/sp1.yaml
for i in $(seq 100); do [ -d $W/kubelet/root/pods/$UID_/volumes/kubernetes.io~empty-dir ] || break; sleep 0.1; done
for i in $(seq 100); do [ -d $W/kubelet/root/pods/$UID_ ] || break; sleep 0.1; done
check "the pod's directory after deletion" "$([ -d $W/kubelet/root/pods/$UID_ ] && echo present || echo removed)" removed
grep -E "Waiting for volumes to unmount|All volumes are unmounted|TearDown succeeded" $W/logs/kubelet.log | cut -c1-70
[ "$FAILED" = 0 ] && echo "node-smoke passed (EventedVolumeManager=${GATE})" || { echo "node-smoke FAILED: see ${W#"${ROOT}/"}/logs"; exit 1; }
