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

package main

import (
	"archive/tar"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestImages builds the images twice from stand-ins, and reads them back.
func TestImages(t *testing.T) {
	dir := t.TempDir()
	busybox := "#!/bin/sh\nprintf 'sh\\nls\\nsh\\nbusybox\\n../evil\\n'\n"
	for name, data := range map[string]string{"busybox": busybox, "pause": "pause-bin", "agnhost": "agnhost-bin", "localhost.crt": "crt", "localhost.key": "key"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	outs := []string{t.TempDir(), t.TempDir()}
	for _, out := range outs {
		if err := run(filepath.Join(dir, "pause"), filepath.Join(dir, "busybox"), filepath.Join(dir, "agnhost"), dir, out); err != nil {
			t.Fatal(err)
		}
	}
	read := func(path string) (v1.Hash, *v1.ConfigFile, []v1.Layer) {
		t.Helper()
		img, err := tarball.ImageFromPath(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		digest, dErr := img.Digest()
		cfg, cErr := img.ConfigFile()
		layers, lErr := img.Layers()
		if err := errors.Join(dErr, cErr, lErr); err != nil {
			t.Fatal(err)
		}
		return digest, cfg, layers
	}
	// entries lists a layer as "name type data-or-link", in its order.
	entries := func(l v1.Layer) []string {
		t.Helper()
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		var got []string
		for tr := tar.NewReader(rc); ; {
			h, err := tr.Next()
			if err == io.EOF {
				return got
			} else if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(tr)
			got = append(got, h.Name+" "+string(h.Typeflag)+" "+string(data)+h.Linkname)
		}
	}
	busyboxLayer := []string{"bin/ 5 ", "bin/busybox 0 " + busybox, "bin/ls 2 busybox", "bin/sh 2 busybox", "etc/ 5 ", "etc/group 0 " + group,
		"etc/passwd 0 " + passwd, "root/ 5 ", "tmp/ 5 "}
	agnhostLayer := []string{"agnhost 0 agnhost-bin", "agnhost-2 2 agnhost", "etc/ 5 ",
		"etc/group 0 " + group + "user-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n",
		"etc/passwd 0 " + passwd + "user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n",
		"home/ 5 ", "home/user-defined-in-image/ 5 ", "localhost.crt 0 crt", "localhost.key 0 key", "uploads/ 5 "}
	for _, tc := range []struct {
		file            string
		entrypoint, cmd []string
		layers          [][]string
	}{
		{"busybox.tar", nil, []string{"sh"}, [][]string{busyboxLayer}},
		{"pause.tar", []string{"/pause"}, nil, [][]string{{"pause 0 pause-bin"}}},
		{"agnhost.tar", []string{"/agnhost"}, []string{"pause"}, [][]string{busyboxLayer, agnhostLayer}},
	} {
		digest, cfg, layers := read(filepath.Join(outs[0], tc.file))
		if cfg.OS != "linux" || cfg.Architecture != "amd64" || !slices.Equal(cfg.Config.Entrypoint, tc.entrypoint) || !slices.Equal(cfg.Config.Cmd, tc.cmd) {
			t.Errorf("%s: config %+v", tc.file, cfg)
		}
		if len(layers) != len(tc.layers) {
			t.Fatalf("%s: %d layers, want %d", tc.file, len(layers), len(tc.layers))
		}
		for i, want := range tc.layers {
			if got := entries(layers[i]); !slices.Equal(got, want) {
				t.Errorf("%s: layer %d holds %q, want %q", tc.file, i, got, want)
			}
		}
		// The same inputs give the same image: agnhost's lower layer is
		// busybox's, which the runtime stores once.
		if again, _, _ := read(filepath.Join(outs[1], tc.file)); again != digest {
			t.Errorf("%s: digests %s and %s", tc.file, digest, again)
		}
	}
}
