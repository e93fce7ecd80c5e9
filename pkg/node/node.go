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
// from make node-deps (containerd, or CRI-O with conmon, both with runc) and
// the patched kubelet in standalone mode with static pods, as processes, all
// under one work directory.
//
// A kubelet changes its host: it sets sysctls, creates fixed paths, mounts
// and cgroups. A Node records the host's state before it starts anything and
// restores it when it stops, on failure and on interrupt too
// (HandleInterrupts). The record is kept on disk, so the next Start cleans up
// after a run that was killed outright.
package node

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
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
	// Out is the project's build output, _output: binaries in Out/bin, images in Out/images.
	Out string
	// Work is the node's work directory, emptied by Start; empty means Out/node.
	Work string
	// Kubelet is the kubelet to run; the zero value is the series' kubelet,
	// KubeletBinary(Out), with every gate off.
	Kubelet Kubelet
	// Runtime is the container runtime; the zero value is Containerd().
	Runtime Runtime
	// MaxPods is the kubelet's maxPods; zero means DefaultMaxPods.
	MaxPods int
	// Verbosity is the kubelet's --v; zero means DefaultVerbosity.
	Verbosity int
	// Name is the node's name; empty means DefaultName.
	Name string
	// PodNetwork gives pods that are not hostNetwork a CNI bridge (CNIBridge),
	// from Debian's containernetworking-plugins: the kubelet reports the node
	// Ready only with one.
	PodNetwork bool
	// Logf reports progress; nil discards it.
	Logf func(format string, args ...any)
}

const (
	// DefaultName is the node name when Options.Name is empty.
	DefaultName = "evm-node"
	// DefaultVerbosity is the kubelet's --v when Options.Verbosity is zero:
	// the level of the volume manager's "Waiting for volumes" lines.
	DefaultVerbosity = 3
	// KubeletEnv, when set, is the kubelet binary a Node runs instead of
	// Out/bin/kubelet: make KUBE_VERSION=v1.37.2 sets it to that release's.
	KubeletEnv = "EVM_KUBELET"

	kubeletPort = 10250
	healthzPort = 10248
)

// KubeletBinary is the kubelet a Node runs: $EVM_KUBELET, or Out/bin/kubelet.
func KubeletBinary(out string) string {
	return cmp.Or(os.Getenv(KubeletEnv), filepath.Join(out, "bin", "kubelet"))
}

// Binaries are the programs in Out/bin any Node may run.
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

	mu         sync.Mutex
	host       *hostState
	procs      [2]*Process // by Service
	supervised [2]bool     // restarted when they exit
	stopped    bool
	onStop     []func()
}

// A Service is one of the node's daemons.
type Service int

// The node's services: the container runtime and the kubelet.
const (
	RuntimeService Service = iota
	KubeletService
)

// Supervise starts the services again a second after they exit, as a
// service manager would, until the node stops: an operator then restarts the
// kubelet by killing it (KubeletPIDFile), after editing KubeletConfig.
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

// startProcess starts binary as name, as StartDaemon does.
func (n *Node) startProcess(name string, env []string, binary string, args ...string) (*Process, error) {
	p, err := startProcess(name, filepath.Join(n.work, "logs", name+".log"), env, binary, args...)
	if err != nil {
		return nil, err
	}
	n.host.notePID(name, p.PID())
	return p, nil
}

// Preflight reports why a node with runtime rt cannot start here, or nil: it
// needs root and the binaries from make and make node-deps.
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
	if err = n.runtime.prepareHost(n.host, opts.Logf); err == nil {
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

// check says what opts lacks on this host.
func check(opts Options) error {
	if err := cmp.Or(Preflight(opts.Out, opts.Runtime), opts.Kubelet.check(opts.Out)); err != nil || !opts.PodNetwork {
		return err
	}
	for _, p := range cniPlugins {
		if _, err := os.Stat(filepath.Join(cniPluginDir, p)); err != nil {
			return fmt.Errorf("the CNI plugin %s is missing: run make node-deps (Debian's containernetworking-plugins)", p)
		}
	}
	return nil
}

// start writes the configurations and starts the runtime, importing the
// images before or after, as the runtime needs.
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

// UntagImage removes one of an image's names, and leaves the image.
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

// RuntimeDroppedEvents returns how many container events the runtime dropped, and false if it counts none.
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

// KubeletKubeconfig is where a cluster writes the kubelet's kubeconfig: with
// one there, the kubelet registers with its API server.
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

// startService starts s, writes its PID file and waits until ok holds.
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

// restartOnExit starts s again a second after p exits, unless the node is
// stopping or s's process is no longer p (p was stopped on purpose).
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
// and waits for it to exit; its monitors and containers keep running.
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

// StopKubelet stops the kubelet with SIGTERM (SIGKILL after 10s), its pods
// left running, and not to be restarted (Supervise).
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

// run runs a command and returns its standard output.
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

// firstLines returns the first n lines of s, each cut at 300 bytes, and how many more there were.
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

// WaitFor polls ok every 100ms until it holds, p exits, ctx ends or timeout passes.
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

// Runtime is a container runtime a Node runs, with its options:
// Containerd(), the zero value, or CRIO with its container events on or off.
type Runtime struct{ crio, podEvents bool }

// Containerd is containerd with runc, from make node-deps: the default.
func Containerd() Runtime { return Runtime{} }

// CRIO is CRI-O with conmon and runc, from make node-deps; podEvents is its
// enable_pod_events: without it, its GetContainerEvents ends at once.
func CRIO(podEvents bool) Runtime { return Runtime{crio: true, podEvents: podEvents} }

// Runtimes are the runtimes a Node can run.
var Runtimes = []Runtime{Containerd(), CRIO(true)}

// String is rt's name as NODE_RUNTIME takes it: containerd or crio.
func (rt Runtime) String() string { return driverFor(rt).processName }

// Label names rt for reports, with its options.
func (rt Runtime) Label() string { return driverFor(rt).label }

// RuntimeEnv and PodEventsEnv are the environment variables RuntimeFromEnv
// reads: NODE_RUNTIME=containerd|crio, NODE_CRIO_POD_EVENTS=true|false.
const (
	RuntimeEnv   = "NODE_RUNTIME"
	PodEventsEnv = "NODE_CRIO_POD_EVENTS"
)

// RuntimeFromEnv returns the runtime NODE_RUNTIME and NODE_CRIO_POD_EVENTS name.
func RuntimeFromEnv() (Runtime, error) {
	return RuntimeFlags(flag.NewFlagSet("", flag.ContinueOnError))()
}

// RuntimeFlags registers -runtime and -crio-pod-events on fs, their defaults
// from the environment; once fs is parsed, the function returned gives the runtime.
func RuntimeFlags(fs *flag.FlagSet) func() (Runtime, error) {
	podEventsEnv, envErr := true, error(nil)
	if v := os.Getenv(PodEventsEnv); v != "" {
		if podEventsEnv, envErr = strconv.ParseBool(v); envErr != nil {
			envErr = fmt.Errorf("%s=%q: want true or false", PodEventsEnv, v)
		}
	}
	name := fs.String("runtime", cmp.Or(os.Getenv(RuntimeEnv), "containerd"), "the container runtime: containerd or crio (default from $"+RuntimeEnv+")")
	podEvents := fs.Bool("crio-pod-events", podEventsEnv, "CRI-O's enable_pod_events (default from $"+PodEventsEnv+")")
	return func() (Runtime, error) {
		switch {
		case envErr != nil:
			return Runtime{}, envErr
		case *name == "containerd":
			return Containerd(), nil
		case *name == "crio":
			return CRIO(*podEvents), nil
		}
		return Runtime{}, fmt.Errorf("unknown container runtime %q (-runtime, $%s): want one of %v", *name, RuntimeEnv, Runtimes)
	}
}

// RuntimeNameOf is the short name (containerd, CRI-O) of the runtime a Label names, or label.
func RuntimeNameOf(label string) string {
	for _, rt := range []Runtime{Containerd(), CRIO(true), CRIO(false)} {
		if d := driverFor(rt); d.label == label {
			return d.name
		}
	}
	return label
}

// runtimeDriver is what differs between the runtimes a Node runs: its
// traits here, its behaviour in runtimeOps.
type runtimeDriver struct {
	runtimeOps
	name, label string // label adds its options
	// processName is the daemon's command name, as the kubelet's
	// --container-runtime-process-name and NODE_RUNTIME take it.
	processName    string
	streamsEvents  bool           // it serves CRI container events
	importsOffline bool           // images go into its store before it starts
	ports          map[int]string // the host ports it listens on, with what for
	// droppedEventsMetric, served at metricsURL, counts the container
	// events it dropped; both are empty if it has none.
	metricsURL, droppedEventsMetric string
	// binaries are the programs it needs in Out/bin; hostBinaries Debian's.
	binaries, hostBinaries []string
	// monitors are the per-container processes it leaves running when it
	// dies (shims, conmon), by executable, given Out/bin.
	monitors func(bin string) []string
	socket   string // its CRI socket's name in the work directory
}

// runtimeOps is how a runtime is set up, started and given images.
type runtimeOps interface {
	// prepareHost changes what it needs of the host, recording it in h.
	prepareHost(h *hostState, logf func(string, ...any)) error
	configs(n *Node) map[string]string // the files to write before it starts, by path
	command(n *Node) (binary string, args []string)
	answers(ctx context.Context, n *Node) bool
	importImage(ctx context.Context, n *Node, archive, ref string) error
	tagImage(ctx context.Context, n *Node, ref, name string) error
	untagImage(ctx context.Context, n *Node, name string) error
}

func driverFor(rt Runtime) runtimeDriver {
	if rt.crio {
		return crioDriver(rt.podEvents)
	}
	return containerdDriver()
}

// containerd is containerd 2 with runc, its images imported with ctr.
type containerd struct{}

func containerdDriver() runtimeDriver {
	return runtimeDriver{
		runtimeOps:    containerd{},
		name:          "containerd",
		label:         "containerd",
		processName:   "containerd",
		streamsEvents: true,
		binaries:      []string{"containerd", "containerd-shim-runc-v2", "ctr", "runc", "crictl"},
		monitors:      func(bin string) []string { return []string{filepath.Join(bin, "containerd-shim-runc-v2")} },
		socket:        "containerd.sock",
	}
}

func (containerd) prepareHost(*hostState, func(string, ...any)) error { return nil }

func (containerd) command(n *Node) (string, []string) {
	return filepath.Join(n.bin, "containerd"), []string{"--config", filepath.Join(n.work, "containerd", "config.toml")}
}

// ctr runs ctr against the node's containerd, in the CRI's namespace.
func ctr(ctx context.Context, n *Node, args ...string) error {
	_, err := n.run(ctx, filepath.Join(n.bin, "ctr"), append([]string{"--address", n.Socket(), "-n", "k8s.io"}, args...)...)
	return err
}

func (containerd) answers(ctx context.Context, n *Node) bool { return ctr(ctx, n, "version") == nil }

func (containerd) importImage(ctx context.Context, n *Node, archive, _ string) error {
	return ctr(ctx, n, "images", "import", "--platform", "linux/amd64", archive)
}

func (containerd) tagImage(ctx context.Context, n *Node, ref, name string) error {
	return ctr(ctx, n, "images", "tag", "--force", ref, name)
}

// untagImage removes the name only: containerd's CRI RemoveImage removes every name.
func (containerd) untagImage(ctx context.Context, n *Node, name string) error {
	return ctr(ctx, n, "images", "rm", name)
}

func (containerd) configs(n *Node) map[string]string {
	w := n.work
	q := strconv.Quote
	return map[string]string{filepath.Join(w, "containerd", "config.toml"): fmt.Sprintf(`version = 3
root = %s
state = %s
[grpc]
  address = %s
[ttrpc]
  address = %s
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = %s
[plugins.'io.containerd.cri.v1.runtime']
  enable_selinux = false
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = %s
        SystemdCgroup = false
        Root = %s
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = [%s]
    conf_dir = %s
[plugins.'io.containerd.nri.v1.nri']
  disable = true
`, q(filepath.Join(w, "containerd", "root")), q(filepath.Join(w, "containerd", "state")),
		q(n.Socket()), q(n.Socket()+".ttrpc"), q(Images["pause.tar"]),
		q(filepath.Join(n.bin, "runc")), q(filepath.Join(w, "runc-root")),
		q(filepath.Join(w, "cni", "bin")), q(filepath.Join(w, "cni", "net.d")))}
}

const (
	// CRIOMetricsPort is where CRI-O serves its Prometheus metrics, on 127.0.0.1.
	CRIOMetricsPort = 9537
	// conmonPath is Debian's conmon, CRI-O's container monitor.
	conmonPath = "/usr/bin/conmon"
)

// crio is CRI-O with conmon and runc, everything it keeps under work/crio.
// CRI-O pulls only from registries: crio-copyimg (its test/copyimg, built
// from the same source) copies images into its storage before it starts.
type crio struct{ podEvents bool }

func crioDriver(podEvents bool) runtimeDriver {
	return runtimeDriver{
		runtimeOps:          crio{podEvents: podEvents},
		name:                "CRI-O",
		label:               fmt.Sprintf("CRI-O (enable_pod_events=%t)", podEvents),
		processName:         "crio",
		streamsEvents:       podEvents,
		importsOffline:      true,
		ports:               map[int]string{CRIOMetricsPort: "CRI-O's metrics"},
		metricsURL:          fmt.Sprintf("http://127.0.0.1:%d/metrics", CRIOMetricsPort),
		droppedEventsMetric: "container_runtime_crio_containers_events_dropped_total",
		binaries:            []string{"crio", "pinns", "crio-copyimg", "runc", "crictl"},
		hostBinaries:        []string{conmonPath},
		monitors:            func(string) []string { return []string{conmonPath} },
		socket:              "crio.sock",
	}
}

// prepareHost gives the hugetlb controller a cgroup v1 hierarchy (mountHugetlb).
func (crio) prepareHost(h *hostState, logf func(string, ...any)) error {
	return h.mountHugetlb(hugetlbCgroupDir, logf)
}

func (crio) command(n *Node) (string, []string) {
	return filepath.Join(n.bin, "crio"), []string{"--config", filepath.Join(n.work, "crio", "crio.conf")}
}

func (crio) answers(ctx context.Context, n *Node) bool {
	_, err := n.Crictl(ctx, "--timeout", "2s", "version")
	return err == nil
}

// copyimg runs crio-copyimg on CRI-O's storage.
func copyimg(ctx context.Context, n *Node, args ...string) error {
	d := filepath.Join(n.work, "crio")
	_, err := n.run(ctx, filepath.Join(n.bin, "crio-copyimg"), append([]string{"--root", filepath.Join(d, "storage"),
		"--runroot", filepath.Join(d, "run"), "--storage-driver", "overlay", "--signature-policy", filepath.Join(d, "policy.json")}, args...)...)
	return err
}

func (crio) importImage(ctx context.Context, n *Node, archive, ref string) error {
	return copyimg(ctx, n, "--image-name", ref, "--import-from", "docker-archive:"+archive)
}

func (crio) tagImage(ctx context.Context, n *Node, ref, name string) error {
	return copyimg(ctx, n, "--image-name", ref, "--add-name", name)
}

// untagImage removes the name through the CRI: CRI-O's RemoveImage of a shared name untags it.
func (crio) untagImage(ctx context.Context, n *Node, name string) error {
	_, err := n.Crictl(ctx, "rmi", name)
	return err
}

func (c crio) configs(n *Node) map[string]string {
	w := n.work
	d := filepath.Join(w, "crio")
	q := strconv.Quote
	list := func(paths ...string) string {
		for i, p := range paths {
			paths[i] = q(p)
		}
		return "[" + strings.Join(paths, ", ") + "]"
	}
	conf := fmt.Sprintf(`# Written by pkg/node: CRI-O for a test node, everything under the work directory.
[crio]
root = %s
runroot = %s
storage_driver = "overlay"
log_dir = %s
version_file = %s
version_file_persist = %s
clean_shutdown_file = %s

[crio.api]
listen = %s

[crio.runtime]
default_runtime = "runc"
cgroup_manager = "cgroupfs"
conmon_cgroup = "pod"
selinux = false
apparmor_profile = ""
pinns_path = %s
namespaces_dir = %s
container_exits_dir = %s
container_attach_socket_dir = %s
hooks_dir = %s
cdi_spec_dirs = %s
decryption_keys_path = %s
irqbalance_config_file = %s
irqbalance_config_restore_file = "disable"
enable_criu_support = false
enable_pod_events = %t

[crio.runtime.runtimes.runc]
runtime_path = %s
runtime_type = "oci"
runtime_root = %s
monitor_path = %s
monitor_cgroup = "pod"

[crio.image]
pause_image = %s
pinned_images = [%s]
signature_policy = %s
signature_policy_dir = %s

[crio.network]
network_dir = %s
plugin_dirs = %s

[crio.metrics]
enable_metrics = true
metrics_host = "127.0.0.1"
metrics_port = %d

[crio.nri]
enable_nri = false
`, q(filepath.Join(d, "storage")), q(filepath.Join(d, "run")), q(filepath.Join(d, "pod-logs")),
		q(filepath.Join(d, "run", "version")), q(filepath.Join(d, "version")), q(filepath.Join(d, "clean.shutdown")),
		q(n.Socket()),
		q(filepath.Join(n.bin, "pinns")), q(filepath.Join(d, "ns")), q(filepath.Join(d, "exits")), q(filepath.Join(d, "attach")),
		list(filepath.Join(d, "hooks.d")), list(filepath.Join(d, "cdi")), q(filepath.Join(d, "keys")),
		q(filepath.Join(d, "irqbalance")), c.podEvents,
		q(filepath.Join(n.bin, "runc")), q(filepath.Join(w, "runc-root")), q(conmonPath),
		q(Images["pause.tar"]), q(Images["pause.tar"]), q(filepath.Join(d, "policy.json")), q(filepath.Join(d, "policies")),
		q(filepath.Join(w, "cni", "net.d")), list(filepath.Join(w, "cni", "bin")), CRIOMetricsPort)
	return map[string]string{
		filepath.Join(d, "crio.conf"): conf,
		// Images come from local archives only; nothing is pulled.
		filepath.Join(d, "policy.json"): `{"default": [{"type": "insecureAcceptAnything"}]}` + "\n",
	}
}
