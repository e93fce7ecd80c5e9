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

// Package node runs a real node for tests and benchmarks: a container runtime
// from make node-deps (containerd, or CRI-O with conmon, both with runc), and
// the patched kubelet in standalone mode with static pods, all under one work
// directory. It drives the built binaries as processes.
//
// A kubelet changes its host: it sets sysctls, creates fixed paths, mounts
// and cgroups. A Node records the host's state before it starts anything and
// restores it when it stops, on failure and on interrupt too (see
// HandleInterrupts). The record is kept on disk, so a run that was killed
// outright is cleaned up by the next Start.
package node

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options configure a Node.
type Options struct {
	// Out is the project's build output directory, _output: binaries are
	// in Out/bin and images in Out/images.
	Out string
	// Work is the node's work directory, emptied by Start. Empty means
	// Out/node.
	Work string
	// Kubelet is the kubelet to run, with its feature gates. The zero value
	// is the series' kubelet, KubeletBinary(Out), with every gate off.
	Kubelet Kubelet
	// Runtime is the container runtime with its options. The zero value is
	// Containerd().
	Runtime Runtime
	// MaxPods is the kubelet's maxPods. Zero means DefaultMaxPods.
	MaxPods int
	// Verbosity is the kubelet's --v. Zero means DefaultVerbosity.
	Verbosity int
	// Name is the node's name. Empty means DefaultName.
	Name string
	// PodNetwork gives pods that are not hostNetwork a network: a CNI
	// bridge (CNIBridge) without a gateway, masquerading or iptables rules,
	// from Debian's containernetworking-plugins. The kubelet reports the
	// node Ready only with one.
	PodNetwork bool
	// Logf reports progress. Nil discards it.
	Logf func(format string, args ...any)
}

// DefaultName is the node name when Options.Name is empty.
const DefaultName = "evm-node"

// DefaultVerbosity is the kubelet's --v when Options.Verbosity is zero: 3,
// the level of the volume manager's "Waiting for volumes" lines.
const DefaultVerbosity = 3

const (
	kubeletPort = 10250
	healthzPort = 10248
)

// KubeletEnv names the environment variable that, when set, is the kubelet
// binary a Node runs instead of Out/bin/kubelet: make KUBE_VERSION=v1.37.2
// sets it to that release's kubelet.
const KubeletEnv = "EVM_KUBELET"

// KubeletBinary is the kubelet a Node runs: $EVM_KUBELET, or Out/bin/kubelet.
func KubeletBinary(out string) string {
	return cmp.Or(os.Getenv(KubeletEnv), filepath.Join(out, "bin", "kubelet"))
}

// Binaries are the programs in Out/bin any Node may run: the kubelet and
// every runtime's.
var Binaries = func() []string {
	bins := []string{"kubelet"}
	for _, rt := range Runtimes {
		for _, b := range driverFor(rt).binaries {
			if !slices.Contains(bins, b) {
				bins = append(bins, b)
			}
		}
	}
	return bins
}()

// Images a Node imports, as archives in Out/images, and their references.
var Images = map[string]string{
	"pause.tar":   "localhost/pause:local",
	"busybox.tar": BusyboxImage,
}

// BusyboxImage is the image reference test pods use.
const BusyboxImage = "localhost/busybox:local"

// Node is a running container runtime and kubelet.
type Node struct {
	opts    Options
	bin     string
	work    string
	runtime runtimeDriver

	mu      sync.Mutex
	host    *hostState
	procs   [2]*Process // by Service
	stopped bool
	// supervised are the services restarted when they exit (Supervise).
	supervised [2]bool
	// onStop run in order when the node stops, after its runtime.
	onStop []func()
}

// A Service is one of the node's daemons.
type Service int

const (
	// RuntimeService is the container runtime.
	RuntimeService Service = iota
	// KubeletService is the kubelet.
	KubeletService
)

// Supervise starts the services again a second after they exit, as a
// service manager would, until the node stops. An operator then restarts
// the kubelet by killing it (KubeletPIDFile), for example after editing
// KubeletConfig; tests that restart a service on purpose leave it alone.
func (n *Node) Supervise(services ...Service) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, s := range services {
		n.supervised[s] = true
		if p := n.procs[s]; p.Running() {
			go n.restartOnExit(s, p)
		}
	}
}

// OnStop adds f to what Stop runs after it stops the runtime, in the order
// added: a cluster stops its control plane there.
func (n *Node) OnStop(f func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.onStop = append(n.onStop, f)
}

// Logf reports progress as Options.Logf does.
func (n *Node) Logf(format string, args ...any) { n.opts.Logf(format, args...) }

// Bin is the directory of the node's binaries, Out/bin.
func (n *Node) Bin() string { return n.bin }

// StartDaemon starts the binary name from Bin with args, logging to
// name.log beside the kubelet's log, and records it for the host's restore.
func (n *Node) StartDaemon(name string, args ...string) (*Process, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return nil, fmt.Errorf("not starting %s: the node is stopping", name)
	}
	n.opts.Logf("starting %s", name)
	return n.startProcess(name, nil, filepath.Join(n.bin, name), args...)
}

// startProcess starts binary as name, logging to name.log, and records it
// for the host's restore.
func (n *Node) startProcess(name string, env []string, binary string, args ...string) (*Process, error) {
	p, err := startProcess(name, filepath.Join(n.work, "logs", name+".log"), env, binary, args...)
	if err != nil {
		return nil, err
	}
	n.host.notePID(name, p.PID())
	return p, nil
}

// Preflight reports why a node with runtime rt cannot start here, or nil: it
// needs root, the binaries from make and make node-deps, and no other
// kubelet or runtime.
func Preflight(out string, rt Runtime) error {
	if os.Geteuid() != 0 {
		return errors.New("a real node needs root: it runs a container runtime, runc and a kubelet")
	}
	if _, err := os.Stat(KubeletBinary(out)); err != nil && os.Getenv(KubeletEnv) != "" {
		return fmt.Errorf("the kubelet %s ($%s) is missing: run make with the same KUBE_VERSION first", KubeletBinary(out), KubeletEnv)
	} else if err != nil {
		return fmt.Errorf("%s is missing: run make first", filepath.Join("_output", "bin", "kubelet"))
	}
	d := driverFor(rt)
	for _, b := range d.binaries {
		if _, err := os.Stat(filepath.Join(out, "bin", b)); err != nil {
			return fmt.Errorf("%s is missing: run make and NODE_RUNTIME=%s make node-deps first", filepath.Join("_output", "bin", b), rt)
		}
	}
	for _, b := range d.hostBinaries {
		if _, err := os.Stat(b); err != nil {
			return fmt.Errorf("%s is missing: run NODE_RUNTIME=%s make node-deps (it installs it from Debian's packages)", b, rt)
		}
	}
	for image := range Images {
		if _, err := os.Stat(filepath.Join(out, "images", image)); err != nil {
			return fmt.Errorf("the node images are missing (%s): run make node-deps first", image)
		}
	}
	return nil
}

// Start records the host's state, starts the container runtime, imports the
// images and waits until the runtime answers; StartKubelet starts the
// kubelet. On failure Start stops whatever it started and restores the host.
func Start(ctx context.Context, opts Options) (*Node, error) {
	opts, err := withDefaults(opts)
	if err != nil {
		return nil, err
	}
	if err := check(opts); err != nil {
		return nil, err
	}
	n := &Node{opts: opts, bin: filepath.Join(opts.Out, "bin"), work: opts.Work, runtime: driverFor(opts.Runtime)}
	if err := recoverEarlierRun(opts.Work, opts.Logf); err != nil {
		return nil, err
	}
	if err := othersRunning(n.runtime); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(n.work); err != nil {
		return nil, fmt.Errorf("emptying the work directory: %w", err)
	}
	for _, d := range []string{"logs", "kubelet/manifests", "kubelet/root", "kubelet/pki",
		"kubelet/podlogs", "kubelet/volume-plugins", "cni/bin", "cni/net.d", "cni/ipam", "runc-root", "hostpath"} {
		if err := os.MkdirAll(filepath.Join(n.work, d), 0o755); err != nil {
			return nil, err
		}
	}
	if n.host, err = recordHost(n.work, n.runtime.monitors(n.bin)); err != nil {
		return nil, fmt.Errorf("recording the host's state: %w", err)
	}
	live.Store(n, true)
	if err := n.runtime.prepareHost(n.host, opts.Logf); err == nil {
		err = n.start(ctx)
	}
	if err != nil {
		if stopErr := n.Stop(); stopErr != nil {
			opts.Logf("stopping after a failed start: %v", stopErr)
		}
		return nil, err
	}
	return n, nil
}

// withDefaults fills in opts' defaults and makes its paths absolute.
func withDefaults(opts Options) (Options, error) {
	out, err := filepath.Abs(opts.Out)
	if err != nil {
		return opts, err
	}
	opts.Out = out
	opts.Verbosity = cmp.Or(opts.Verbosity, DefaultVerbosity)
	opts.Name = cmp.Or(opts.Name, DefaultName)
	if opts.MaxPods <= 0 {
		opts.MaxPods = DefaultMaxPods
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	opts.Work, err = filepath.Abs(cmp.Or(opts.Work, filepath.Join(out, "node")))
	return opts, err
}

// check says what opts lacks on this host: binaries, images, the kubelet
// or CNI plugins.
func check(opts Options) error {
	if err := Preflight(opts.Out, opts.Runtime); err != nil {
		return err
	}
	if err := opts.Kubelet.check(opts.Out); err != nil {
		return err
	}
	if !opts.PodNetwork {
		return nil
	}
	for _, p := range cniPlugins {
		if _, err := os.Stat(filepath.Join(cniPluginDir, p)); err != nil {
			return fmt.Errorf("the CNI plugin %s is missing: run make node-deps (Debian's containernetworking-plugins)", p)
		}
	}
	return nil
}

// start writes the configurations and starts the runtime, importing the
// images before or after it as the runtime needs.
func (n *Node) start(ctx context.Context) error {
	if err := n.writeConfigs(); err != nil {
		return err
	}
	if !n.runtime.importsOffline {
		if err := n.StartRuntime(ctx); err != nil {
			return err
		}
	}
	for image, ref := range Images {
		if err := n.ImportImage(ctx, filepath.Join(n.opts.Out, "images", image), ref); err != nil {
			return err
		}
	}
	if n.runtime.importsOffline {
		return n.StartRuntime(ctx)
	}
	return nil
}

// ImportImage imports an image archive from make node-deps (Out/images) into
// the runtime's image store as ref.
func (n *Node) ImportImage(ctx context.Context, archive, ref string) error {
	n.opts.Logf("importing %s", ref)
	if err := n.runtime.importImage(ctx, n, archive, ref); err != nil {
		return fmt.Errorf("importing %s: %w", filepath.Base(archive), err)
	}
	return nil
}

// TagImage gives the imported image ref a second name.
func (n *Node) TagImage(ctx context.Context, ref, name string) error {
	n.opts.Logf("tagging %s as %s", ref, name)
	return n.runtime.tagImage(ctx, n, ref, name)
}

// UntagImage removes one of an image's names; the image stays under its
// others.
func (n *Node) UntagImage(ctx context.Context, name string) error {
	n.opts.Logf("removing the name %s", name)
	return n.runtime.untagImage(ctx, n, name)
}

// Work is the node's work directory.
func (n *Node) Work() string { return n.work }

// Name is the node's name.
func (n *Node) Name() string { return n.opts.Name }

// RuntimeLabel names the runtime for reports, with its options.
func (n *Node) RuntimeLabel() string { return n.runtime.label }

// StreamsEvents reports whether the runtime serves CRI container events:
// containerd does, CRI-O only with enable_pod_events.
func (n *Node) StreamsEvents() bool { return n.runtime.streamsEvents }

// RuntimeDroppedEvents returns how many container events the runtime
// dropped, from its own metrics, and false if it counts none.
func (n *Node) RuntimeDroppedEvents(ctx context.Context) (float64, bool, error) {
	name := n.runtime.droppedEventsMetric
	if name == "" {
		return 0, false, nil
	}
	body, err := HTTPGet(ctx, n.runtime.metricsURL)
	if err != nil {
		return 0, false, fmt.Errorf("scraping %s's metrics: %w", n.runtime.name, err)
	}
	m, err := ParseMetrics(body)
	if err != nil {
		return 0, false, err
	}
	if !m.Has(name) {
		return 0, false, fmt.Errorf("%s serves no %s", n.runtime.name, name)
	}
	return m.Sum(name), true, nil
}

// RuntimeProcessName is the runtime daemon's command name.
func (n *Node) RuntimeProcessName() string { return n.runtime.processName }

// Socket is the container runtime's CRI socket.
func (n *Node) Socket() string { return filepath.Join(n.work, n.runtime.socket) }

// KubeletRoot is the kubelet's --root-dir.
func (n *Node) KubeletRoot() string { return filepath.Join(n.work, "kubelet", "root") }

// KubeletLog is the kubelet's log file. It is appended to across restarts.
func (n *Node) KubeletLog() string { return filepath.Join(n.work, "logs", "kubelet.log") }

// KubeletKubeconfig is where a cluster writes the kubelet's kubeconfig.
// With one there, the kubelet registers with that cluster's API server;
// without, it runs standalone.
func (n *Node) KubeletKubeconfig() string {
	return filepath.Join(n.work, "cluster", "kubelet.kubeconfig")
}

// HostPathDir is a directory pods may mount with a hostPath volume.
func (n *Node) HostPathDir() string { return filepath.Join(n.work, "hostpath") }

// RuntimePIDFile holds the process ID of the running container runtime.
func (n *Node) RuntimePIDFile() string { return filepath.Join(n.work, "runtime.pid") }

// KubeletPIDFile holds the process ID of the running kubelet.
func (n *Node) KubeletPIDFile() string { return filepath.Join(n.work, "kubelet.pid") }

// StartRuntime starts the container runtime and waits until it answers.
func (n *Node) StartRuntime(ctx context.Context) error {
	return n.startService(ctx, RuntimeService, 30*time.Second, n.runtime.processName+"'s socket", func() bool {
		return n.runtime.answers(ctx, n)
	})
}

// StartKubelet starts the kubelet and waits until it reports healthy.
func (n *Node) StartKubelet(ctx context.Context) error {
	healthz := fmt.Sprintf("http://127.0.0.1:%d/healthz", healthzPort)
	return n.startService(ctx, KubeletService, 60*time.Second, "the kubelet's healthz", func() bool {
		body, err := HTTPGet(ctx, healthz)
		return err == nil && string(body) == "ok"
	})
}

// startService starts s, writes its PID file, restarts it on exit if it is
// supervised, and waits until ok holds.
func (n *Node) startService(ctx context.Context, s Service, timeout time.Duration, what string, ok func() bool) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return errors.New("the node is stopped")
	}
	name, pidFile := n.runtime.processName, n.RuntimePIDFile()
	if s == KubeletService {
		name, pidFile = "kubelet", n.KubeletPIDFile()
	}
	if n.procs[s].Running() {
		return fmt.Errorf("%s is already running", name)
	}
	binary, args, env := n.command(s)
	p, err := n.startProcess(name, env, binary, args...)
	if err != nil {
		return err
	}
	n.procs[s] = p
	if err := writePIDFile(pidFile, p); err != nil {
		return err
	}
	if n.supervised[s] {
		go n.restartOnExit(s, p)
	}
	n.mu.Unlock()
	defer n.mu.Lock()
	return WaitFor(ctx, timeout, p, what, ok)
}

// command is how s starts, which it logs.
func (n *Node) command(s Service) (binary string, args, env []string) {
	if s == RuntimeService {
		n.opts.Logf("starting %s", n.runtime.label)
		binary, args = n.runtime.command(n)
		return binary, args, []string{"PATH=" + n.bin + ":" + os.Getenv("PATH")}
	}
	if n.supervised[KubeletService] {
		n.opts.Logf("starting the kubelet (its gates as %s says)", filepath.Base(n.KubeletConfig()))
	} else {
		n.opts.Logf("starting %s", n.opts.Kubelet)
	}
	args = []string{
		"--config", n.KubeletConfig(),
		"--root-dir", n.KubeletRoot(),
		"--cert-dir", filepath.Join(n.work, "kubelet", "pki"),
		"--hostname-override", n.opts.Name,
		fmt.Sprintf("--v=%d", n.opts.Verbosity),
	}
	if _, err := os.Stat(n.KubeletKubeconfig()); err == nil {
		// No --node-ip: the kubelet refuses a loopback node IP, and takes
		// the host's default-route address.
		args = append(args, "--kubeconfig", n.KubeletKubeconfig())
	}
	return n.opts.Kubelet.Binary(filepath.Dir(n.bin)), args, nil
}

// restartOnExit starts s again a second after its process p exits, unless
// the node is stopping or s's process is no longer p by then: another
// process runs, or p was stopped on purpose.
func (n *Node) restartOnExit(s Service, p *Process) {
	<-p.done
	time.Sleep(time.Second)
	n.mu.Lock()
	restart := !n.stopped && n.procs[s] == p
	n.mu.Unlock()
	if !restart {
		return
	}
	start := n.StartRuntime
	if s == KubeletService {
		start = n.StartKubelet
	}
	n.opts.Logf("%s exited (%v): starting it again", p.name, p.err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := start(ctx); err != nil {
		n.opts.Logf("starting %s again: %v (see %s)", p.name, err, p.log)
	}
}

// writePIDFile writes p's process ID to path, and removes the file when p
// exits unless a later process wrote its own by then.
func writePIDFile(path string, p *Process) error {
	pid := strconv.Itoa(p.PID())
	if err := os.WriteFile(path, []byte(pid), 0o644); err != nil {
		return err
	}
	go func() {
		<-p.done
		if b, err := os.ReadFile(path); err == nil && string(b) == pid {
			_ = os.Remove(path)
		}
	}()
	return nil
}

// KillRuntime kills the container runtime with SIGKILL, as a crash would,
// and waits for it to exit. Its shims or monitors and containers keep
// running.
func (n *Node) KillRuntime() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.procs[RuntimeService]
	if !p.Running() {
		return fmt.Errorf("%s is not running", n.runtime.processName)
	}
	n.opts.Logf("killing %s (pid %d)", p.name, p.PID())
	p.Stop(syscall.SIGKILL, 0)
	return nil
}

// StopKubelet stops the kubelet with SIGTERM (SIGKILL after 10s). Its pods
// keep running. A kubelet stopped here is not restarted (Supervise).
func (n *Node) StopKubelet() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if p := n.procs[KubeletService]; p.Running() {
		n.opts.Logf("stopping the kubelet (pid %d)", p.PID())
		p.Stop(syscall.SIGTERM, 10*time.Second)
	}
	n.procs[KubeletService] = nil
}

// KubeletPID is the kubelet's process ID, or 0.
func (n *Node) KubeletPID() int { return n.pid(KubeletService) }

// pid is s's process ID, or 0.
func (n *Node) pid(s Service) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.procs[s].Running() {
		return 0
	}
	return n.procs[s].PID()
}

// Stop stops the kubelet, removes every pod sandbox, stops the runtime and
// whatever it left running, and restores the host. It is idempotent.
func (n *Node) Stop() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return nil
	}
	n.stopped = true
	defer live.Delete(n)
	n.opts.Logf("stopping the node and restoring the host")
	n.procs[KubeletService].Stop(syscall.SIGTERM, 10*time.Second)
	if daemon := n.procs[RuntimeService]; daemon.Running() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		// crictl's default 2s per call is too short to stop 100 sandboxes
		// at once on two cores.
		if _, err := n.run(ctx, filepath.Join(n.bin, "crictl"), "--runtime-endpoint", "unix://"+n.Socket(),
			"--timeout", "50s", "rmp", "--all", "--force"); err != nil {
			n.opts.Logf("removing the pod sandboxes (the host's restore stops what is left): %s", firstLines(err.Error(), 3))
		}
		cancel()
		daemon.Stop(syscall.SIGTERM, 10*time.Second)
	}
	for _, f := range n.onStop {
		f()
	}
	return n.host.restore(n.opts.Logf)
}

// run runs a command to completion and returns its standard output.
func (n *Node) run(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// firstLines returns the first n lines of s, each cut at 300 bytes, and how
// many more lines there were.
func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	more := len(lines) - n
	lines = lines[:min(n, len(lines))]
	for i, l := range lines {
		if len(l) > 300 {
			lines[i] = l[:300] + fmt.Sprintf("... (%d more bytes)", len(l)-300)
		}
	}
	if more <= 0 {
		return strings.Join(lines, "\n")
	}
	return fmt.Sprintf("%s\n... (%d more lines)", strings.Join(lines, "\n"), more)
}

// WaitFor polls ok every 100ms until it holds, p exits, ctx ends or timeout
// passes.
func WaitFor(ctx context.Context, timeout time.Duration, p *Process, what string, ok func() bool) error {
	deadline := time.Now().Add(timeout)
	for {
		if ok() {
			return nil
		}
		if !p.Running() {
			return fmt.Errorf("%s exited while waiting for %s: %v; the last lines of its log:\n%s",
				p.name, what, p.exitErr(), p.logTail(20))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer within %v; the last lines of its log:\n%s", what, timeout, p.logTail(20))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// HTTPGet fetches url and returns the body of a 200 answer.
func HTTPGet(ctx context.Context, url string) ([]byte, error) {
	return do(ctx, http.DefaultClient, http.MethodGet, url, nil)
}
