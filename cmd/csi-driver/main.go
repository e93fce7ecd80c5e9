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

// Command csi-driver is the evm-csi driver (see package csidriver). It serves
// until SIGTERM or SIGINT.
//
//	evm-csi -endpoint SOCKET -registration-dir DIR -state-dir DIR [-node-id NODE]
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"

	"evented-volume-manager/pkg/csidriver"
)

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	host, _ := os.Hostname()
	var o csidriver.Options
	flag.StringVar(&o.Name, "name", csidriver.DefaultName, "CSI driver name")
	flag.StringVar(&o.NodeID, "node-id", host, "node ID that NodeGetInfo reports")
	flag.StringVar(&o.Endpoint, "endpoint", "", "unix socket path of the CSI services (required)")
	flag.StringVar(&o.RegistrationDir, "registration-dir", "", "the kubelet's <root-dir>/plugins_registry (required)")
	flag.StringVar(&o.StateDir, "state-dir", "", "directory for the volumes' backing directories (required)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	err := csidriver.Serve(ctx, o)
	stop()
	if err != nil {
		log.Fatalf("evm-csi: %v", err)
	}
}
