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

package nodeimage

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func TestLayer(t *testing.T) {
	data, err := Layer([]Entry{
		{Path: "/bin/sh", Link: "busybox", Mode: 0o777},
		{Path: "/bin", Dir: true, Mode: 0o755},
		{Path: "/bin/busybox", Data: []byte("binary"), Mode: 0o755},
	})
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(bytes.NewReader(data))
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h.Name+"|"+string(h.Typeflag)+"|"+h.Linkname)
	}
	want := []string{"bin/|5|", "bin/busybox|0|", "bin/sh|2|busybox"}
	if len(got) != len(want) {
		t.Fatalf("entries %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("entries %v, want %v", got, want)
		}
	}
	if _, err := Layer([]Entry{{Path: "relative"}}); err == nil {
		t.Fatal("a relative path was accepted")
	}
}

func TestWriteArchiveRoundTrip(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "pause")
	if err := os.WriteFile(bin, []byte("\x7fELF pause"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec, err := Pause("localhost/pause:local", bin)
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "pause.tar")
	if err := WriteArchive(archive, spec); err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(archive, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" || len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/pause" {
		t.Fatalf("config = %+v", cfg.Config)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers = %d (%v), want 1", len(layers), err)
	}
	// The same inputs give the same image.
	again := filepath.Join(dir, "again.tar")
	if err := WriteArchive(again, spec); err != nil {
		t.Fatal(err)
	}
	img2, _ := tarball.ImageFromPath(again, nil)
	d1, _ := img.Digest()
	d2, _ := img2.Digest()
	if d1 != d2 {
		t.Fatalf("digests differ: %s and %s", d1, d2)
	}
}

func TestBusybox(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "busybox")
	if err := os.WriteFile(bin, []byte("bb"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec, err := Busybox("localhost/busybox:local", bin, []string{"sh", "ls", "sh", "busybox", "../evil", ""})
	if err != nil {
		t.Fatal(err)
	}
	links := map[string]bool{}
	for _, e := range spec.Entries {
		if e.Link != "" {
			links[e.Path] = true
		}
	}
	if len(links) != 2 || !links["/bin/sh"] || !links["/bin/ls"] {
		t.Fatalf("applet links = %v, want /bin/sh and /bin/ls", links)
	}
}
