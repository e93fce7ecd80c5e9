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

// Command e2e-node runs upstream's node e2e binary (e2e_node.test, built from
// the assembled tree) on this machine, offline, against a container runtime
// from make node-deps and the patched kubelet, for make test-e2e-node.
//
// It starts the runtime through pkg/node, restarting it when it exits as a
// service manager would, and tags the local images with the names the e2e
// framework expects, so nothing is pulled. The test binary runs etcd, the
// API server and the kubelet, which must sit beside it. systemd-run,
// systemctl and journalctl are hidden from the suite, which would use them
// on a host whose PID 1 is not systemd, and --system-cgroups and
// --kubelet-cgroups are cleared so that the kubelet never moves host
// processes into a /system cgroup. With -procs N above 1 the Ginkgo CLI runs
// the test binary in N processes, and [Serial] specs run alone at the end.
//
//	e2e-node -out _output -test _output/e2e-node/e2e_node.test -ginkgo _output/e2e-node/ginkgo -procs 3 -image busybox=NAME -image pause=NAME -image agnhost=NAME -focus REGEXP -skip REGEXP [-kubelet stock] [-feature-gates EventedVolumeManager=false]
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
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

	"evented-volume-manager/pkg/junit"
	"evented-volume-manager/pkg/node"
)

func main() {
	out := flag.String("out", "_output", "the project's build output (binaries and images)")
	testBinary := flag.String("test", filepath.Join("_output", "e2e-node", "e2e_node.test"), "the node e2e test binary; the kubelet must be beside it")
	focus := flag.String("focus", "", "the tests to run (--ginkgo.focus)")
	skip := flag.String("skip", "", "the tests not to run (--ginkgo.skip); empty skips none")
	kubelet := flag.String("kubelet", "series", "the kubelet beside the test binary: series, or stock for upstream's")
	gates := flag.String("feature-gates", "", "the kubelet's feature gates, as its --feature-gates takes them; empty means EventedVolumeManager=true for the series' kubelet, none for upstream's, which takes EventedPLEG alone")
	timeout := flag.Duration("timeout", 45*time.Minute, "the suite's timeout")
	procs := flag.Int("procs", 3, "the Ginkgo processes that run the specs; 1 runs the test binary by itself")
	ginkgoCLI := flag.String("ginkgo", "", "the Ginkgo CLI, for -procs above 1 (default: ginkgo beside the test binary)")
	runtime := node.RuntimeFlags(flag.CommandLine)
	tags := map[string]string{}
	flag.Func("image", "tag a local image (busybox, pause or agnhost) with a name the e2e framework uses: busybox=NAME; repeatable", func(v string) error {
		local, name, ok := strings.Cut(v, "=")
		if !ok {
			return fmt.Errorf("want local=name, got %q", v)
		}
		tags[local] = name
		return nil
	})
	flag.Parse()

	start := time.Now()
	logf := func(format string, args ...any) {
		fmt.Printf("    [%4.0fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	if *gates == "" && *kubelet == "series" {
		*gates = node.EventedVolumeManager + "=true"
	}
	k, err := node.ParseKubelet(*kubelet, filepath.Join(filepath.Dir(*testBinary), "kubelet"), *gates)
	rt, rtErr := runtime()
	if err = cmp.Or(err, rtErr); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-node:", err)
		os.Exit(2)
	}
	// The suite runs the kubelet k; the node runs the runtime alone.
	s := suite{focus: *focus, skip: *skip, timeout: *timeout, procs: *procs, ginkgo: *ginkgoCLI}
	if err := run(*out, *testBinary, s, k, node.Options{Runtime: rt}, tags, logf); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-node:", err)
		os.Exit(1)
	}
	logf("done in %v", time.Since(start).Round(time.Second))
}

// suite is how the suite runs: which specs, for how long, and in how many
// Ginkgo processes (above 1, the Ginkgo CLI ginkgo runs the test binary).
type suite struct {
	focus, skip, ginkgo string
	timeout             time.Duration
	procs               int
}

// agnhostImage is make node-deps' agnhost image, which pkg/node does not import.
const agnhostImage = "localhost/agnhost:local"

// hostPathLeftovers are what upstream's HostPath specs, whose hostPath volume
// is the host's /tmp, may leave there.
var hostPathLeftovers = []string{"/tmp/test-file", "/tmp/sub-path"}

func run(out, testBinary string, s suite, k node.Kubelet, o node.Options, tags map[string]string, logf func(string, ...any)) (err error) {
	out, _ = filepath.Abs(out)
	testBinary, _ = filepath.Abs(testBinary)
	dir := filepath.Dir(testBinary)
	kubeletExe, err := filepath.EvalSymlinks(filepath.Join(dir, "kubelet"))
	if err != nil {
		return fmt.Errorf("the kubelet must be beside the test binary: %w", err)
	}
	if err := s.findGinkgo(dir); err != nil {
		return err
	}
	// Until the suite starts, an interrupt stops the node and exits; then it
	// stops the suite first (runSuite).
	stopInterrupts := sync.OnceFunc(node.HandleInterrupts(logf))
	defer stopInterrupts()
	removeLeftovers := watchLeftovers(logf)
	defer func() {
		if rmErr := removeLeftovers(); rmErr != nil && err == nil {
			err = rmErr
		}
	}()
	before := node.TakeSnapshot()
	o.Out, o.Work, o.PodNetwork, o.Logf = out, filepath.Join(dir, "node"), true, logf
	logf("container runtime: %s; kubelet: %s", o.Runtime.Label(), k)
	// The suite runs its own kubelet, and restarts the runtime as it would
	// a service (systemctl restart): the node only supervises the runtime.
	n, err := node.Start(context.Background(), o)
	if err != nil {
		return err
	}
	n.Supervise(node.RuntimeService)
	defer func() {
		if stopErr := stopNode(n, before, kubeletExe, out, logf); stopErr != nil && err == nil {
			err = stopErr
		}
	}()
	if err := tagImages(n, out, tags); err != nil {
		return err
	}
	path, err := pathWithout(filepath.Join(dir, "path"), "systemd-run", "systemctl", "journalctl")
	if err != nil {
		return err
	}
	args, err := suiteArgs(n, dir, k)
	if err != nil {
		return err
	}
	cmd, err := s.command(testBinary, args)
	if err != nil {
		return err
	}
	cmd.Env = append(os.Environ(), "PATH="+path)
	logf("running %s in %d process(es) (focus %q, skip %q), its output in %s", filepath.Base(testBinary), s.procs, s.focus, s.skip, filepath.Join(dir, "e2e.log"))
	return runSuite(cmd, dir, stopInterrupts, logf)
}

// findGinkgo sets and checks the Ginkgo CLI, by default the one in dir.
func (s *suite) findGinkgo(dir string) error {
	if s.procs <= 1 {
		return nil
	}
	var err error
	if s.ginkgo, err = filepath.Abs(cmp.Or(s.ginkgo, filepath.Join(dir, "ginkgo"))); err != nil {
		return err
	}
	if _, err := os.Stat(s.ginkgo); err != nil {
		return fmt.Errorf("the Ginkgo CLI is needed for -procs %d: %w", s.procs, err)
	}
	return nil
}

// watchLeftovers returns a function that removes those of hostPathLeftovers
// that exist then and do not now.
func watchLeftovers(logf func(string, ...any)) func() error {
	var absent []string
	for _, p := range hostPathLeftovers {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			absent = append(absent, p)
		}
	}
	return func() error {
		var errs []error
		for _, p := range absent {
			if _, err := os.Lstat(p); err != nil {
				continue
			}
			logf("removing %s, left by the HostPath specs", p)
			errs = append(errs, os.RemoveAll(p))
		}
		return errors.Join(errs...)
	}
}

// stopNode stops the kubelet a run cut short left, then the node, and checks the host.
func stopNode(n *node.Node, before node.Snapshot, kubeletExe, out string, logf func(string, ...any)) error {
	for _, pid := range node.ProcessesOf(kubeletExe) {
		logf("stopping the suite's kubelet (pid %d)", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	err := n.Stop()
	if restoreErr := before.Restored(out, n.Work()); restoreErr != nil {
		logf("the host is not as it was: %v", restoreErr)
		return cmp.Or(err, restoreErr)
	}
	logf("the host is as it was")
	return err
}

// tagImages gives the local images the names the e2e framework uses.
func tagImages(n *node.Node, out string, tags map[string]string) error {
	ctx := context.Background()
	localImages := map[string]string{"busybox": node.BusyboxImage, "pause": node.Images["pause.tar"], "agnhost": agnhostImage}
	for local, name := range tags {
		ref, ok := localImages[local]
		if !ok {
			return fmt.Errorf("no local image %q: want busybox, pause or agnhost", local)
		}
		if local == "agnhost" {
			if err := n.ImportImage(ctx, filepath.Join(out, "images", "agnhost.tar"), ref); err != nil {
				return err
			}
		}
		if err := n.TagImage(ctx, ref, name); err != nil {
			return err
		}
		// containerd reports a container's image as its first name (sorted),
		// which the specs compare with the names they asked for: busybox and
		// agnhost keep only those. pause's local name is the sandbox image.
		if local != "pause" {
			if err := n.UntagImage(ctx, ref); err != nil {
				return err
			}
		}
	}
	return nil
}

// suiteArgs writes the node's base kubelet configuration into dir, empties
// its report directory, and returns the suite's arguments.
func suiteArgs(n *node.Node, dir string, k node.Kubelet) ([]string, error) {
	config := filepath.Join(dir, "kubelet-base.yaml")
	if err := os.WriteFile(config, []byte(n.BaseKubeletConfig()), 0o644); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(filepath.Join(dir, "report")); err != nil {
		return nil, err
	}
	args := []string{
		"--container-runtime-endpoint=unix://" + n.Socket(),
		"--image-service-endpoint=unix://" + n.Socket(),
		"--container-runtime-process-name=" + n.RuntimeProcessName(),
		"--container-runtime-pid-file=" + n.RuntimePIDFile(),
		"--prepull-images=false",
		"--kubelet-config-file=" + config,
		"--kubelet-flags=--system-cgroups= --kubelet-cgroups= --cluster-domain=cluster.local",
		"--dns-domain=cluster.local",
		"--report-dir=" + filepath.Join(dir, "report"),
	}
	if !k.Stock() || k.Gate(node.EventedPLEG) { // upstream's kubelet: none unless it sets one
		args = append(args, "--feature-gates="+k.FeatureGates())
	}
	return args, nil
}

// runSuite runs cmd, its output in dir/e2e.log, and prints its summary. Once
// it runs, an interrupt stops the suite's process group.
func runSuite(cmd *exec.Cmd, dir string, stopInterrupts func(), logf func(string, ...any)) error {
	log, err := os.Create(filepath.Join(dir, "e2e.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopInterrupts()
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(interrupts)
	for tick := time.Tick(30 * time.Second); ; {
		select {
		case sig := <-interrupts:
			// The suite runs in a process group of its own: Ginkgo passes
			// the interrupt to its processes, which stop their kubelet.
			logf("%v: stopping the suite (process group %d), then the node", sig, cmd.Process.Pid)
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
			select {
			case <-done:
			case <-time.After(time.Minute):
				logf("the suite did not stop in a minute: killing it")
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-done
			}
			return fmt.Errorf("interrupted by %v", sig)
		case err := <-done:
			summary(dir)
			if err != nil {
				return fmt.Errorf("the node e2e suite failed (%v); its log is %s", err, filepath.Join(dir, "e2e.log"))
			}
			return nil
		case <-tick:
			logf("the suite is running")
		}
	}
}

// command runs the suite with suiteArgs in an empty scratch directory, run
// beside the test binary, where it writes its kubeconfig and kubelet
// configuration: the test binary, or with more than one process ginkgo
// --procs=N ... scratch/e2e_node.test -- suiteArgs. The CLI runs a test
// binary in its directory, so scratch gets links to it and to the kubelet,
// which the suite looks for beside it.
func (s suite) command(testBinary string, suiteArgs []string) (*exec.Cmd, error) {
	scratch := filepath.Join(filepath.Dir(testBinary), "run")
	if err := os.RemoveAll(scratch); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return nil, err
	}
	name, args := testBinary, slices.Concat(suiteArgs,
		[]string{"--ginkgo.focus=" + s.focus, "--ginkgo.timeout=" + s.timeout.String(), "--ginkgo.v", "--ginkgo.no-color"})
	if s.skip != "" {
		args = append(args, "--ginkgo.skip="+s.skip)
	}
	if s.procs > 1 {
		link := filepath.Join(scratch, filepath.Base(testBinary))
		for target, l := range map[string]string{testBinary: link, filepath.Join(filepath.Dir(testBinary), "kubelet"): filepath.Join(scratch, "kubelet")} {
			if err := os.Symlink(target, l); err != nil {
				return nil, err
			}
		}
		name, args = s.ginkgo, []string{"--procs=" + strconv.Itoa(s.procs), "--timeout=" + s.timeout.String(), "--focus=" + s.focus}
		if s.skip != "" {
			args = append(args, "--skip="+s.skip)
		}
		args = slices.Concat(args, []string{"-v", "--no-color", link, "--"}, suiteArgs)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = scratch
	return cmd, nil
}

// summary prints the outcome of every spec from the suite's JUnit report
// (under the Ginkgo CLI too, the first process writes every process's), and
// the totals from its log.
func summary(dir string) {
	specs, err := junit.Read(dir)
	if err != nil {
		fmt.Printf("        %v\n", err)
	}
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		fmt.Printf("        %-8s %s\n", specs[name].Status, name)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "e2e.log"))
	for _, line := range strings.Split(string(data), "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "Ran ") || strings.HasPrefix(t, "SUCCESS!") || strings.HasPrefix(t, "FAIL!") {
			fmt.Println("        " + t)
		}
	}
}

// pathWithout makes dir a directory of links to every program on the
// standard paths except the hidden ones, and returns it as a PATH.
func pathWithout(dir string, hidden ...string) (string, error) {
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, d := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			link := filepath.Join(dir, e.Name())
			if _, err := os.Lstat(link); err == nil || slices.Contains(hidden, e.Name()) {
				continue // hidden, or an earlier directory wins, as on PATH
			}
			if err := os.Symlink(filepath.Join(d, e.Name()), link); err != nil {
				return "", err
			}
		}
	}
	return dir, nil
}
