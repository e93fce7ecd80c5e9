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

// Package nodeimage builds the container images the real-node tests need,
// offline: from files on this machine (a static pause built from the
// kubernetes tree's build/pause source, a static busybox, agnhost
// built from the tree's test/images/agnhost) into image archives that
// `ctr images import` loads. No registry is ever contacted.
package nodeimage

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
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

// Entry is one file, directory or symlink of an image's layer.
type Entry struct {
	// Path is the absolute path in the image.
	Path string
	// Mode holds the permission bits.
	Mode int64
	// Data is a regular file's content.
	Data []byte
	// Dir makes the entry a directory.
	Dir bool
	// Link makes the entry a symlink to Link.
	Link string
}

// Spec describes an image.
type Spec struct {
	// Ref is the image's name, for example "localhost/busybox:local".
	Ref string
	// Layers are the image's layers, lowest first. An image built on
	// another takes the other's layers, which are then the same blobs in
	// the runtime's content store.
	Layers [][]Entry
	// Entrypoint and Cmd are the image config's.
	Entrypoint []string
	Cmd        []string
}

// epoch fixes every timestamp, so the same inputs give the same image.
var epoch = time.Unix(0, 0).UTC()

// layer returns the tar of the entries, parents before children.
func layer(entries []Entry) ([]byte, error) {
	sorted := slices.SortedStableFunc(slices.Values(entries), func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range sorted {
		if !path.IsAbs(e.Path) {
			return nil, fmt.Errorf("entry %q: path is not absolute", e.Path)
		}
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
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write(e.Data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteArchive writes spec's OCI image for linux/amd64, tagged spec.Ref, to
// path as an archive that `ctr images import` loads.
func WriteArchive(path string, spec Spec) error {
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
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.AppendLayers(img, layers...)
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

// Busybox returns the spec of a busybox image: the static binary at
// busyboxPath, a symlink per applet, /etc/passwd, /etc/group and /tmp.
func Busybox(ref, busyboxPath string, applets []string) (Spec, error) {
	bin, err := os.ReadFile(busyboxPath)
	if err != nil {
		return Spec{}, err
	}
	entries := []Entry{
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
		if a == "" || seen[a] || path.Base(a) != a {
			continue
		}
		seen[a] = true
		entries = append(entries, Entry{Path: "/bin/" + a, Link: "busybox", Mode: 0o777})
	}
	return Spec{Ref: ref, Layers: [][]Entry{entries}, Cmd: []string{"sh"}}, nil
}

// Pause returns the spec of a pause image holding the static binary at
// pausePath as /pause.
func Pause(ref, pausePath string) (Spec, error) {
	bin, err := os.ReadFile(pausePath)
	if err != nil {
		return Spec{}, err
	}
	return Spec{Ref: ref, Layers: [][]Entry{{{Path: "/pause", Data: bin, Mode: 0o755}}}, Entrypoint: []string{"/pause"}}, nil
}

// Agnhost returns the spec of an agnhost image on busybox, Busybox's spec:
// the static binary at agnhostPath as /agnhost, and what upstream's image
// (test/images/agnhost/Dockerfile, on alpine, whose shell and tools are
// busybox's) adds that tests rely on: the entrypoint /agnhost with the
// command pause, /agnhost-2 (a link, for the entrypoint tests), /uploads
// (netexec), porter's /localhost.crt and /localhost.key (from porterDir, the
// tree's test/images/agnhost/porter; the HTTPS lifecycle hooks' server) and
// user-defined-in-image (uid 1000) in group-defined-in-image (gid 50000).
// Its layer goes on top of busybox's, which it leaves unchanged.
func Agnhost(ref, agnhostPath, porterDir string, busybox Spec) (Spec, error) {
	bin, err := os.ReadFile(agnhostPath)
	if err != nil {
		return Spec{}, err
	}
	crt, err := os.ReadFile(filepath.Join(porterDir, "localhost.crt"))
	if err != nil {
		return Spec{}, err
	}
	key, err := os.ReadFile(filepath.Join(porterDir, "localhost.key"))
	if err != nil {
		return Spec{}, err
	}
	return Spec{
		Ref: ref,
		Layers: append(slices.Clip(busybox.Layers), []Entry{
			{Path: "/agnhost", Data: bin, Mode: 0o755},
			{Path: "/localhost.crt", Data: crt, Mode: 0o644},
			{Path: "/localhost.key", Data: key, Mode: 0o644},
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
	}, nil
}
