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

// Command build-image writes the node tests' images as archives for
// `ctr images import`: pause.tar, busybox.tar and agnhost.tar (the agnhost
// binary on busybox's layer):
//
//	build-image -pause PAUSE_BINARY -busybox BUSYBOX_BINARY -agnhost AGNHOST_BINARY -porter PORTER_DIR -out DIR
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"evented-volume-manager/pkg/nodeimage"
)

func main() {
	pause := flag.String("pause", "", "static pause binary")
	busybox := flag.String("busybox", "", "static busybox binary")
	agnhost := flag.String("agnhost", "", "static agnhost binary")
	porter := flag.String("porter", "", "the tree's test/images/agnhost/porter, with the localhost.crt and localhost.key upstream's agnhost image has")
	out := flag.String("out", "", "output directory")
	flag.Parse()
	if *pause == "" || *busybox == "" || *agnhost == "" || *porter == "" || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*pause, *busybox, *agnhost, *porter, *out); err != nil {
		fmt.Fprintln(os.Stderr, "build-image:", err)
		os.Exit(1)
	}
}

func run(pause, busybox, agnhost, porter, out string) error {
	list, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return fmt.Errorf("%s --list: %w", busybox, err)
	}
	bb, err := nodeimage.Busybox("localhost/busybox:local", busybox, strings.Fields(string(list)))
	if err != nil {
		return err
	}
	ps, err := nodeimage.Pause("localhost/pause:local", pause)
	if err != nil {
		return err
	}
	ah, err := nodeimage.Agnhost("localhost/agnhost:local", agnhost, porter, bb)
	if err != nil {
		return err
	}
	for file, spec := range map[string]nodeimage.Spec{"busybox.tar": bb, "pause.tar": ps, "agnhost.tar": ah} {
		if err := nodeimage.WriteArchive(filepath.Join(out, file), spec); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		fmt.Printf("wrote %s (%s)\n", filepath.Join(out, file), spec.Ref)
	}
	return nil
}
