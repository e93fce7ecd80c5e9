/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package node

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Sysctls are the kernel settings a kubelet sets when protectKernelDefaults
// is false (the default): see setupKernelTunables in pkg/kubelet/cm.
var Sysctls = []string{
	"vm/overcommit_memory",
	"vm/panic_on_oom",
	"kernel/panic",
	"kernel/panic_on_oops",
	"kernel/keys/root_maxkeys",
	"kernel/keys/root_maxbytes",
	// The CNI bridge plugin may enable forwarding.
	"net/ipv4/ip_forward",
}

// HostPaths are fixed paths outside the work directory that a standalone
// kubelet, a runtime or its shims create whatever their configuration says
// (/var/lib/containers: containers/image's blob cache, from crio-copyimg).
var HostPaths = []string{
	"/var/lib/kubelet",
	"/var/log/containers",
	"/var/log/pods",
	"/run/containerd",
	"/var/lib/cni",
	"/usr/libexec/kubernetes",
	"/var/run/kubernetes",
	"/var/lib/containers",
}

// kubeletCgroups are the top-level cgroups a kubelet with the cgroupfs driver creates.
var kubeletCgroups = []string{"kubepods", "kubepods.slice"}

const stateFile = "host-state.json"

// hostState is the host as it was before a Node started, and the processes
// it started, kept in the work directory for the next run if this one dies.
type hostState struct {
	Work         string               `json:"work"`
	Sysctls      map[string]string    `json:"sysctls"`      // /proc/sys path -> original value
	CreatedPaths []string             `json:"createdPaths"` // HostPaths that did not exist
	Cgroups      []string             `json:"cgroups"`      // kubelet cgroups that existed
	PIDs         map[string]processID `json:"pids"`         // the daemons started, by name
	// Monitors are the executables of the runtime's per-container processes
	// (shims, conmon): those whose command line names Work are stopped.
	Monitors      []string `json:"monitors"`
	HugetlbMount  string   `json:"hugetlbMount,omitempty"` // see mountHugetlb
	CreatedBridge bool     `json:"createdBridge"`          // the CNI bridge did not exist

	mu sync.Mutex
}

// processID names a process across PID reuse.
type processID struct {
	PID   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// recordHost records the host's state in work before a Node changes it.
func recordHost(work string, monitors []string) (*hostState, error) {
	snap := TakeSnapshot()
	h := &hostState{Work: work, Sysctls: snap.Sysctls, PIDs: map[string]processID{}, Monitors: monitors, CreatedBridge: !snap.Bridge}
	for _, p := range HostPaths {
		if !snap.HostPaths[p] {
			h.CreatedPaths = append(h.CreatedPaths, p)
		}
	}
	for _, c := range cgroupDirs() {
		if snap.Cgroups[c] {
			h.Cgroups = append(h.Cgroups, c)
		}
	}
	return h, h.save()
}

func (h *hostState) notePID(name string, pid int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	start, _ := startTime(pid)
	h.PIDs[name] = processID{PID: pid, Start: start}
	_ = h.save()
}

func (h *hostState) save() error {
	data, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(h.Work, stateFile), data, 0o644)
}

// recoverEarlierRun cleans up after a run in work that never stopped.
func recoverEarlierRun(work string, logf func(string, ...any)) error {
	data, err := os.ReadFile(filepath.Join(work, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	h := &hostState{}
	if err := json.Unmarshal(data, h); err != nil {
		return fmt.Errorf("%s is unreadable (%v): remove it after restoring the host by hand", filepath.Join(work, stateFile), err)
	}
	logf("an earlier run in %s did not stop: stopping what it started and restoring the host", work)
	for name, id := range h.PIDs {
		if start, err := startTime(id.PID); err == nil && start == id.Start {
			logf("killing the earlier run's %s (pid %d)", name, id.PID)
			_ = syscall.Kill(id.PID, syscall.SIGKILL)
			waitGone(id.PID, 10*time.Second)
		}
	}
	return h.restore(logf)
}

// restore stops what the daemons left running, unmounts what they mounted,
// removes the cgroups and paths they created and resets the sysctls. It goes
// on after errors and returns them all.
func (h *hostState) restore(logf func(string, ...any)) error {
	var errs []error
	for _, m := range h.Monitors {
		for _, pid := range monitorsOf(m, h.Work) {
			logf("killing %s (pid %d)", filepath.Base(m), pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	var cgroups []string
	for _, c := range cgroupDirs() {
		if _, err := os.Stat(c); err == nil && !slices.Contains(h.Cgroups, c) {
			cgroups = append(cgroups, c)
		}
	}
	for _, c := range cgroups {
		for _, pid := range cgroupProcs(c) {
			logf("killing a leftover container process (pid %d in %s)", pid, c)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	roots := append([]string{h.Work, "/run/containerd"}, h.CreatedPaths...)
	if h.HugetlbMount != "" {
		roots = append(roots, h.HugetlbMount)
	}
	for _, m := range MountsUnder(roots...) {
		if m == h.HugetlbMount {
			continue // after its cgroups are gone, below
		}
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", m, err))
		}
	}
	if h.CreatedBridge && linkExists(CNIBridge) {
		logf("deleting the pod network's bridge %s", CNIBridge)
		if out, err := exec.Command("ip", "link", "delete", CNIBridge).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("deleting the bridge %s: %v: %s", CNIBridge, err, strings.TrimSpace(string(out))))
		}
	}
	for _, c := range cgroups {
		if err := removeCgroup(c, 10*time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if h.HugetlbMount != "" {
		if err := unmountHugetlb(h.HugetlbMount, logf); err != nil {
			errs = append(errs, err)
		}
	}
	for s, v := range h.Sysctls {
		path := filepath.Join("/proc/sys", s)
		if cur, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(cur)) == v {
			continue
		}
		logf("restoring %s=%s", strings.ReplaceAll(s, "/", "."), v)
		if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restoring sysctl %s: %w", s, err))
		}
	}
	for _, p := range h.CreatedPaths {
		if err := os.RemoveAll(p); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", p, err))
		}
	}
	if len(errs) == 0 {
		if err := os.Remove(filepath.Join(h.Work, stateFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	} else {
		errs = append(errs, fmt.Errorf("the host is not fully restored; %s keeps the record, and the next run retries",
			filepath.Join(h.Work, stateFile)))
	}
	return errors.Join(errs...)
}

// hugetlbCgroupDir is where a node on CRI-O mounts the hugetlb controller:
// runc and the kubelet look for cgroup v1 hierarchies there only.
const hugetlbCgroupDir = "/sys/fs/cgroup/hugetlb"

// mountHugetlb mounts the hugetlb controller as a cgroup v1 hierarchy at dir,
// unless one is mounted. On cgroup v1 the kubelet asks for hugetlb limits of
// 0, which CRI-O passes on whenever the kernel has the controller, and runc
// fails the container if no hierarchy has it (containerd drops them:
// tolerate_missing_hugetlb_controller). Hosts like this one leave hugetlb to
// the unused cgroup2 hierarchy; restore gives it back.
func (h *hostState) mountHugetlb(dir string, logf func(string, ...any)) error {
	if hugetlbMounted() {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logf("mounting the hugetlb cgroup controller at %s (CRI-O's containers need it on cgroup v1)", dir)
	if err := syscall.Mount("cgroup", dir, "cgroup", 0, "hugetlb"); err != nil {
		return fmt.Errorf("mounting the hugetlb cgroup controller: %w (CRI-O on cgroup v1 needs it)", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.HugetlbMount = dir
	return h.save()
}

// hugetlbMounted reports whether a cgroup v1 hierarchy has the hugetlb controller.
func hugetlbMounted() bool {
	return slices.ContainsFunc(procTable("/proc/self/mounts"), func(f []string) bool {
		return len(f) >= 4 && f[2] == "cgroup" && slices.Contains(strings.Split(f[3], ","), "hugetlb")
	})
}

// unmountHugetlb unmounts the hierarchy mountHugetlb mounted, which gives
// the controller back to cgroup2 once the hierarchy has no cgroups left.
// The kernel frees a hierarchy only when it is unmounted with no cgroups
// being removed; one unmounted while a removed cgroup was still going away
// lingers, so it is mounted and unmounted again until it is freed.
func unmountHugetlb(dir string, logf func(string, ...any)) error {
	if len(MountsUnder(dir)) > 0 {
		logf("unmounting the hugetlb cgroup controller from %s", dir)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if len(MountsUnder(dir)) > 0 {
			if err := syscall.Unmount(dir, 0); err != nil && !errors.Is(err, syscall.EINVAL) {
				return fmt.Errorf("unmounting the hugetlb cgroup controller at %s: %w", dir, err)
			}
		}
		time.Sleep(200 * time.Millisecond)
		if !hugetlbV1() {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the hugetlb cgroup controller is still bound to a cgroup v1 hierarchy (/proc/cgroups): " +
				"mount it (mount -t cgroup -o hugetlb none DIR), remove the cgroups under it and unmount it")
		}
		if err := syscall.Mount("cgroup", dir, "cgroup", 0, "hugetlb"); err != nil {
			return fmt.Errorf("remounting the hugetlb cgroup controller to free it: %w", err)
		}
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// hugetlbV1 reports whether the hugetlb controller is bound to a cgroup v1
// hierarchy, mounted or not: its hierarchy in /proc/cgroups is not 0.
func hugetlbV1() bool {
	for _, f := range procTable("/proc/cgroups") {
		if len(f) >= 2 && f[0] == "hugetlb" {
			return f[1] != "0"
		}
	}
	return false
}

// procTable is the fields of every line of a /proc table, or none if it
// cannot be read.
func procTable(path string) [][]string {
	data, _ := os.ReadFile(path)
	var lines [][]string
	for line := range strings.Lines(string(data)) {
		lines = append(lines, strings.Fields(line))
	}
	return lines
}

func linkExists(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name))
	return err == nil
}

// othersRunning reports a kubelet or a runtime already on this host, or a
// port the node needs in use.
func othersRunning(d runtimeDriver) error {
	names := []string{"kubelet"}
	for _, rt := range Runtimes {
		names = append(names, rt.String())
	}
	for _, name := range names {
		if pids := processesNamed(name); len(pids) > 0 {
			return fmt.Errorf("a %s is already running on this host (pid %v): stop it first", name, pids)
		}
	}
	ports := map[int]string{kubeletPort: "the kubelet", healthzPort: "the kubelet"}
	maps.Copy(ports, d.ports)
	for port, user := range ports {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			return fmt.Errorf("port %d is in use: %s needs it", port, user)
		}
		l.Close()
	}
	return nil
}

// cgroupDirs are the kubelet's cgroups under every cgroup mount.
func cgroupDirs() []string {
	seen := map[string]bool{}
	var dirs []string
	for _, f := range procTable("/proc/self/mounts") {
		if len(f) < 3 || (f[2] != "cgroup" && f[2] != "cgroup2") {
			continue
		}
		for _, c := range kubeletCgroups {
			d := filepath.Join(unescapeMount(f[1]), c)
			if !seen[d] {
				seen[d] = true
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// cgroupProcs lists the processes in a cgroup tree.
func cgroupProcs(root string) []int {
	var pids []int
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		data, _ := os.ReadFile(path)
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids
}

// removeCgroup removes a cgroup tree, deepest first, retrying while its
// killed processes exit.
func removeCgroup(root string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		var last error
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
				last = err
			}
		}
		if last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("removing cgroup %s: %w", root, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// MountIDs maps every mount point under root, and root itself, to its mount
// ID (the first field of /proc/self/mountinfo). A volume unmounted and
// mounted again gets a new ID. Where mounts are stacked, the last one,
// the one seen, counts.
func MountIDs(root string) (map[string]string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	return parseMountIDs(string(data), []string{root}), nil
}

// parseMountIDs maps every mount point of mountinfo that is one of roots or
// under one to its mount ID.
func parseMountIDs(mountinfo string, roots []string) map[string]string {
	ids := map[string]string{}
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		m := unescapeMount(f[4])
		for _, r := range roots {
			if under(m, r) {
				ids[m] = f[0]
				break
			}
		}
	}
	return ids
}

// under reports whether path is root or lies under it.
func under(path, root string) bool {
	root = strings.TrimSuffix(root, "/")
	return path == root || root == "" || strings.HasPrefix(path, root+"/")
}

// MountsUnder lists the mount points under any of roots, deepest first.
func MountsUnder(roots ...string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	ms := slices.Collect(maps.Keys(parseMountIDs(string(data), roots)))
	slices.SortFunc(ms, func(a, b string) int { return len(b) - len(a) })
	return ms
}

// unescapeMount undoes the octal escapes of /proc mount tables.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ProcessesOf lists the processes running binary.
func ProcessesOf(binary string) []int {
	return processes(func(pid int) bool {
		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		return err == nil && exe == binary
	})
}

// monitorsOf lists the processes running binary whose command line names work.
func monitorsOf(binary, work string) []int {
	return slices.DeleteFunc(ProcessesOf(binary), func(pid int) bool {
		return !strings.Contains(procFile(pid, "cmdline"), work)
	})
}

// processesNamed lists the processes whose command name is name.
func processesNamed(name string) []int {
	return processes(func(pid int) bool { return strings.TrimSpace(procFile(pid, "comm")) == name })
}

// processes lists the processes match selects.
func processes(match func(pid int) bool) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && match(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func procFile(pid int, name string) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, name))
	return string(data)
}

func waitGone(pid int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// live holds the nodes that have not stopped, for HandleInterrupts.
var live sync.Map // *Node -> bool

// HandleInterrupts stops every running Node when the process gets SIGINT or
// SIGTERM, and then exits with status 130; stop uninstalls the handler.
func HandleInterrupts(logf func(string, ...any)) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			logf("%v: stopping the node and restoring the host before exiting", sig)
			live.Range(func(n, _ any) bool {
				if err := n.(*Node).Stop(); err != nil {
					logf("%v", err)
				}
				return true
			})
			os.Exit(130)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// Snapshot is the host state a Node may change, for checking that a
// stopped Node restored it.
type Snapshot struct {
	Sysctls         map[string]string
	HostPaths       map[string]bool
	Cgroups         map[string]bool
	Bridge, Hugetlb bool // the CNI bridge exists; hugetlb is bound to cgroup v1
}

// TakeSnapshot records the host state a Node may change.
func TakeSnapshot() Snapshot {
	s := Snapshot{Sysctls: map[string]string{}, HostPaths: map[string]bool{}, Cgroups: map[string]bool{}}
	for _, k := range Sysctls {
		if data, err := os.ReadFile(filepath.Join("/proc/sys", k)); err == nil {
			s.Sysctls[k] = strings.TrimSpace(string(data))
		}
	}
	for _, p := range HostPaths {
		_, err := os.Lstat(p)
		s.HostPaths[p] = !errors.Is(err, os.ErrNotExist)
	}
	for _, c := range cgroupDirs() {
		_, err := os.Stat(c)
		s.Cgroups[c] = err == nil
	}
	s.Bridge = linkExists(CNIBridge)
	s.Hugetlb = hugetlbV1()
	return s
}

// Restored reports how the host differs from before once the Node with
// build output out and work directory work has stopped, or nil.
func (before Snapshot) Restored(out, work string) error {
	now := TakeSnapshot()
	errs := differences("sysctl %s is %s, was %s", before.Sysctls, now.Sysctls)
	errs = append(errs, differences("%s exists: %t, existed: %t", before.HostPaths, now.HostPaths)...)
	errs = append(errs, differences("cgroup %s exists: %t, existed: %t", before.Cgroups, now.Cgroups)...)
	if now.Hugetlb != before.Hugetlb {
		errs = append(errs, fmt.Errorf("the hugetlb cgroup controller is bound to cgroup v1: %t, was: %t", now.Hugetlb, before.Hugetlb))
	}
	if now.Bridge != before.Bridge {
		errs = append(errs, fmt.Errorf("the bridge %s exists: %t, existed: %t", CNIBridge, now.Bridge, before.Bridge))
	}
	if ms := MountsUnder(work, "/run/containerd"); len(ms) > 0 {
		errs = append(errs, fmt.Errorf("still mounted: %v", ms))
	}
	running := map[string][]int{"conmon": monitorsOf(conmonPath, work)}
	for _, b := range Binaries {
		running[b] = ProcessesOf(filepath.Join(out, "bin", b))
	}
	if kubelet := KubeletBinary(out); kubelet != filepath.Join(out, "bin", "kubelet") {
		running[kubelet] = ProcessesOf(kubelet)
	}
	for name, pids := range running {
		if len(pids) > 0 {
			errs = append(errs, fmt.Errorf("%s still runs (pid %v)", name, pids))
		}
	}
	if _, err := os.Stat(filepath.Join(work, stateFile)); err == nil {
		errs = append(errs, fmt.Errorf("%s remains", filepath.Join(work, stateFile)))
	}
	return errors.Join(errs...)
}

// differences reports, as format (key, now, before), every key whose value changed.
func differences[V comparable](format string, before, now map[string]V) []error {
	var errs []error
	for k, v := range before {
		if now[k] != v {
			errs = append(errs, fmt.Errorf(format, k, now[k], v))
		}
	}
	return errs
}

// userHZ is the unit of /proc/<pid>/stat's CPU times: USER_HZ, which Linux
// fixes at 100 for user space on every architecture the kubelet runs on.
const userHZ = 100

// statFields returns the fields of /proc/<pid>/stat after the command name,
// which may hold spaces and parentheses, at least n of them. Field 3 of
// proc(5) is index 0.
func statFields(pid, n int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	if f := strings.Fields(s[i+1:]); len(f) >= n {
		return f, nil
	}
	return nil, fmt.Errorf("/proc/%d/stat: fewer than %d fields", pid, n)
}

// ProcessCPU is the CPU time, user and system, that a process has used.
func ProcessCPU(pid int) (time.Duration, error) {
	f, err := statFields(pid, 13)
	if err != nil {
		return 0, err
	}
	// utime and stime are fields 14 and 15 of proc(5).
	var ticks uint64
	for _, s := range f[11:13] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += v
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// startTime is a process's start time in clock ticks since boot, which
// tells it apart from a later process with the same PID.
func startTime(pid int) (uint64, error) {
	f, err := statFields(pid, 20)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(f[19], 10, 64) // field 22 of proc(5)
}

// KubeletCPU is the CPU time the running kubelet has used.
func (n *Node) KubeletCPU() (time.Duration, error) { return n.cpu(KubeletService, "the kubelet") }

// RuntimeCPU is the CPU time the running container runtime has used.
func (n *Node) RuntimeCPU() (time.Duration, error) {
	return n.cpu(RuntimeService, n.runtime.processName)
}

func (n *Node) cpu(s Service, what string) (time.Duration, error) {
	pid := n.pid(s)
	if pid == 0 {
		return 0, fmt.Errorf("%s is not running", what)
	}
	return ProcessCPU(pid)
}

// ProcessRSS is a process's resident set size and its anonymous part, what
// it allocated, in bytes (VmRSS and RssAnon in /proc/<pid>/status). The rest
// is mostly the binary's pages, which depend on what the page cache holds.
func ProcessRSS(pid int) (rss, anon int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	found := 0
	for line := range strings.Lines(string(data)) {
		for prefix, v := range map[string]*int64{"VmRSS:": &rss, "RssAnon:": &anon} {
			if kb, ok := strings.CutPrefix(line, prefix); ok {
				n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(kb), " kB"), 10, 64)
				if err != nil {
					return 0, 0, err
				}
				*v, found = n<<10, found+1
			}
		}
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("/proc/%d/status lacks VmRSS or RssAnon", pid)
	}
	return rss, anon, nil
}

// DropCachedPages drops the page cache's clean pages of the file at path
// (POSIX_FADV_DONTNEED): run before a kubelet starts, the file-backed part of
// its RSS depends on what it touches, not on what earlier runs left cached.
func DropCachedPages(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}

// Process is a daemon a Node started.
type Process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

// startProcess starts binary, appending its output to logPath, in a process
// group of its own: a Ctrl-C on the terminal reaches the harness alone, which
// stops it in order.
func startProcess(name, logPath string, env []string, binary string, args ...string) (*Process, error) {
	log, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return p, nil
}

// Name is the name the process was started as.
func (p *Process) Name() string { return p.name }

// PID is the process ID.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Running reports whether p has been started and has not exited.
func (p *Process) Running() bool {
	if p == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func (p *Process) exitErr() error {
	<-p.done
	return p.err
}

// Stop sends sig and waits for p to exit; after grace it sends SIGKILL.
func (p *Process) Stop(sig syscall.Signal, grace time.Duration) {
	if !p.Running() {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	if sig != syscall.SIGKILL {
		select {
		case <-p.done:
			return
		case <-time.After(grace):
		}
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	<-p.done
}

func (p *Process) logTail(n int) string {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
