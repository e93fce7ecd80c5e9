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

	v1 "github.com/google/go-containerregistry/pkg/v1"
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
	img, cfg := writeAndRead(t, filepath.Join(dir, "pause.tar"), spec)
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

func TestAgnhostOnBusybox(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"busybox": "bb", "agnhost": "\x7fELF agnhost"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bb, err := Busybox("localhost/busybox:local", filepath.Join(dir, "busybox"), []string{"sh", "cat"})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := Agnhost("localhost/agnhost:local", filepath.Join(dir, "agnhost"), bb)
	if err != nil {
		t.Fatal(err)
	}
	img, cfg := writeAndRead(t, filepath.Join(dir, "agnhost.tar"), spec)
	bbImg, _ := writeAndRead(t, filepath.Join(dir, "busybox.tar"), bb)
	if got := cfg.Config.Entrypoint; len(got) != 1 || got[0] != "/agnhost" {
		t.Fatalf("entrypoint = %q, want [/agnhost]", got)
	}
	if got := cfg.Config.Cmd; len(got) != 1 || got[0] != "pause" {
		t.Fatalf("cmd = %q, want [pause]", got)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 2 {
		t.Fatalf("layers = %d (%v), want 2", len(layers), err)
	}
	// The lower layer is busybox's own, so the runtime stores it once.
	bbLayers, err := bbImg.Layers()
	if err != nil || len(bbLayers) != 1 {
		t.Fatalf("busybox layers = %d (%v), want 1", len(bbLayers), err)
	}
	d0, _ := layers[0].Digest()
	dbb, _ := bbLayers[0].Digest()
	if d0 != dbb {
		t.Fatalf("agnhost's lower layer %s is not busybox's %s", d0, dbb)
	}
	// The top layer holds the binary, its second name and the image's users.
	rc, err := layers[1].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]string{}
	links := map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch h.Typeflag {
		case tar.TypeSymlink:
			links[h.Name] = h.Linkname
		case tar.TypeReg:
			data, _ := io.ReadAll(tr)
			files[h.Name] = string(data)
		}
	}
	if files["agnhost"] != "\x7fELF agnhost" || links["agnhost-2"] != "agnhost" {
		t.Fatalf("agnhost = %q, agnhost-2 -> %q", files["agnhost"], links["agnhost-2"])
	}
	for file, want := range map[string][]string{
		"etc/passwd": {"root:x:0:0:", "user-defined-in-image:x:1000:1000:"},
		"etc/group":  {"root:x:0:", "group-defined-in-image:x:50000:user-defined-in-image"},
	} {
		for _, w := range want {
			if !bytes.Contains([]byte(files[file]), []byte(w)) {
				t.Errorf("%s = %q, want a line starting %q", file, files[file], w)
			}
		}
	}
	if _, err := Agnhost("localhost/agnhost:local", filepath.Join(dir, "agnhost"), Spec{Ref: "bare"}); err == nil {
		t.Fatal("a base without /etc/passwd was accepted")
	}
}

// writeAndRead writes spec's archive to path and reads the image back.
func writeAndRead(t *testing.T, path string, spec Spec) (v1.Image, *v1.ConfigFile) {
	t.Helper()
	if err := WriteArchive(path, spec); err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	return img, cfg
}
