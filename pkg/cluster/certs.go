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

package cluster

import (
	"encoding/pem"
	"net"
	"os"
	"path/filepath"

	"k8s.io/client-go/util/cert"
)

// clusterPKI is what a local control plane needs: a CA, the API server's
// serving certificate signed by it, and the service-account signing key.
type clusterPKI struct {
	dir   string
	caPEM []byte
}

func (p clusterPKI) path(name string) string { return filepath.Join(p.dir, name) }

// writeClusterPKI writes ca.crt, apiserver.crt and .key, and sa.key and
// sa.pub into dir. The service-account key is the API server's: the API
// server takes a private key for either.
func writeClusterPKI(dir string) (clusterPKI, error) {
	p := clusterPKI{dir: dir}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return p, err
	}
	crt, key, err := cert.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP(serviceIP)},
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"})
	if err != nil {
		return p, err
	}
	_, p.caPEM = pem.Decode(crt) // the serving certificate, then its CA's
	for name, data := range map[string][]byte{"ca.crt": p.caPEM, "apiserver.crt": crt, "apiserver.key": key, "sa.key": key, "sa.pub": key} {
		if err := os.WriteFile(p.path(name), data, 0o600); err != nil {
			return p, err
		}
	}
	return p, nil
}
