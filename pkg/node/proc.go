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
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// userHZ is the unit of /proc/<pid>/stat's CPU times: USER_HZ, which Linux
// fixes at 100 for user space on every architecture the kubelet runs on.
const userHZ = 100

// statFields returns the fields of /proc/<pid>/stat after the command name,
// which may hold spaces and parentheses. Field 3 of proc(5) is index 0.
func statFields(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	return strings.Fields(s[i+1:]), nil
}

// ProcessCPU is the CPU time, user and system, that a process has used.
func ProcessCPU(pid int) (time.Duration, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
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
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	return strconv.ParseUint(f[19], 10, 64) // field 22 of proc(5)
}

// KubeletCPU is the CPU time the running kubelet has used.
func (n *Node) KubeletCPU() (time.Duration, error) { return n.cpu(KubeletService, "the kubelet") }

// RuntimeCPU is the CPU time the running container runtime has used.
func (n *Node) RuntimeCPU() (time.Duration, error) {
	return n.cpu(RuntimeService, n.runtime.processName)
}

// cpu is the CPU time that s, named what, has used.
func (n *Node) cpu(s Service, what string) (time.Duration, error) {
	pid := n.pid(s)
	if pid == 0 {
		return 0, fmt.Errorf("%s is not running", what)
	}
	return ProcessCPU(pid)
}

// ProcessRSS is a process's resident set size and its anonymous part, in
// bytes (VmRSS and RssAnon in /proc/<pid>/status). The rest is mostly the
// binary's pages, which count as resident once mapped and depend on what
// the page cache holds of the file; the anonymous part is what the process
// allocated.
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

// DropCachedPages asks the kernel to drop the page cache's clean pages of the
// file at path (POSIX_FADV_DONTNEED). Before a kubelet starts it makes the
// file-backed part of its RSS depend on what the kubelet touches, not on
// what earlier runs or builds left cached of its binary. Pages a running
// process maps stay.
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

// startProcess starts name's binary with args, appending its output to
// logPath. The process gets its own process group, so that a Ctrl-C on the
// terminal reaches the harness, which stops it in order.
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

// exitErr is how p exited, once it has.
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

// logTail returns the last n lines of p's log.
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
