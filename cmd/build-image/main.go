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

// Command build-image writes the node tests' images as `ctr images import` archives.
//
//	build-image -pause PAUSE_BINARY -busybox BUSYBOX_BINARY -agnhost AGNHOST_BINARY -porter PORTER_DIR -out DIR
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
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
	applets, err := exec.Command(busybox, "--list").Output()
	if err != nil {
		return fmt.Errorf("%s --list: %w", busybox, err)
	}
	data := map[string][]byte{}
	for key, file := range map[string]string{"pause": pause, "busybox": busybox, "agnhost": agnhost,
		"localhost.crt": filepath.Join(porter, "localhost.crt"), "localhost.key": filepath.Join(porter, "localhost.key")} {
		if data[key], err = os.ReadFile(file); err != nil {
			return err
		}
	}
	bb := busyboxImage(data["busybox"], strings.Fields(string(applets)))
	for file, spec := range map[string]imageSpec{
		"busybox.tar": bb,
		"pause.tar":   {Ref: "localhost/pause:local", Layers: [][]entry{{{Path: "/pause", Data: data["pause"], Mode: 0o755}}}, Entrypoint: []string{"/pause"}},
		"agnhost.tar": agnhostImage(data, bb),
	} {
		if err := writeArchive(filepath.Join(out, file), spec); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		fmt.Printf("wrote %s (%s)\n", filepath.Join(out, file), spec.Ref)
	}
	return nil
}

// entry is one file, directory or symlink of an image's layer.
type entry struct {
	Path string
	Mode int64
	Data []byte
	Dir  bool
	Link string
}

// imageSpec describes an image; an image on another shares its lower layers.
type imageSpec struct {
	Ref        string
	Layers     [][]entry
	Entrypoint []string
	Cmd        []string
}

// epoch fixes every timestamp, so the same inputs give the same image.
var epoch = time.Unix(0, 0).UTC()

// layer returns the tar of the entries, parents before children.
func layer(entries []entry) ([]byte, error) {
	sorted := slices.SortedStableFunc(slices.Values(entries), func(a, b entry) int { return strings.Compare(a.Path, b.Path) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range sorted {
		hdr := &tar.Header{Name: e.Path[1:], Mode: e.Mode, ModTime: epoch, Format: tar.FormatPAX}
		switch {
		case e.Dir:
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		case e.Link != "":
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, e.Link
		default:
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(e.Data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.Data); err != nil { // none for a directory or a link
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeArchive writes spec's OCI image for linux/amd64 to path.
func writeArchive(path string, spec imageSpec) error {
	ref, err := name.ParseReference(spec.Ref, name.WeakValidation)
	if err != nil {
		return err
	}
	var layers []v1.Layer
	for _, entries := range spec.Layers {
		data, err := layer(entries)
		if err != nil {
			return err
		}
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data)), nil
		}, tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return err
		}
		layers = append(layers, l)
	}
	img, err := mutate.AppendLayers(mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON), layers...)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config.Entrypoint = spec.Entrypoint
	cfg.Config.Cmd = spec.Cmd
	cfg.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	return tarball.WriteToFile(path, ref, img)
}

// The busybox image's users and groups.
const (
	passwd = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
	group  = "root:x:0:\nnogroup:x:65534:\n"
)

// busyboxImage returns the spec of the busybox image: bin and its applets.
func busyboxImage(bin []byte, applets []string) imageSpec {
	entries := []entry{
		{Path: "/bin", Dir: true, Mode: 0o755},
		{Path: "/bin/busybox", Data: bin, Mode: 0o755},
		{Path: "/etc", Dir: true, Mode: 0o755},
		{Path: "/etc/passwd", Data: []byte(passwd), Mode: 0o644},
		{Path: "/etc/group", Data: []byte(group), Mode: 0o644},
		{Path: "/root", Dir: true, Mode: 0o700},
		{Path: "/tmp", Dir: true, Mode: 0o1777},
	}
	seen := map[string]bool{"busybox": true}
	for _, a := range applets {
		if seen[a] || path.Base(a) != a {
			continue
		}
		seen[a] = true
		entries = append(entries, entry{Path: "/bin/" + a, Link: "busybox", Mode: 0o777})
	}
	return imageSpec{Ref: "localhost/busybox:local", Layers: [][]entry{entries}, Cmd: []string{"sh"}}
}

// agnhostImage returns the spec of the agnhost image: on busybox's layer
// (upstream's alpine has busybox's tools), /agnhost and what upstream's
// Dockerfile adds that tests rely on.
func agnhostImage(data map[string][]byte, busybox imageSpec) imageSpec {
	return imageSpec{
		Ref: "localhost/agnhost:local",
		Layers: append(slices.Clip(busybox.Layers), []entry{
			{Path: "/agnhost", Data: data["agnhost"], Mode: 0o755},
			{Path: "/localhost.crt", Data: data["localhost.crt"], Mode: 0o644},
			{Path: "/localhost.key", Data: data["localhost.key"], Mode: 0o644},
			{Path: "/agnhost-2", Link: "agnhost", Mode: 0o777},
			{Path: "/uploads", Dir: true, Mode: 0o755},
			{Path: "/etc", Dir: true, Mode: 0o755},
			{Path: "/etc/passwd", Data: []byte(passwd + "user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n"), Mode: 0o644},
			{Path: "/etc/group", Data: []byte(group + "user-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n"), Mode: 0o644},
			{Path: "/home", Dir: true, Mode: 0o755},
			{Path: "/home/user-defined-in-image", Dir: true, Mode: 0o755},
		}),
		Entrypoint: []string{"/agnhost"},
		Cmd:        []string{"pause"},
	}
}
