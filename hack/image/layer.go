package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The non-root user the controller runs as, distroless' nonroot.
const (
	nonrootUID  = 65532
	nonrootName = "nonroot"
	// entrypoint is where the binary lies in the image.
	entrypoint = "/ocm-controller"
)

// passwd and group name root and the non-root user, so that tools showing
// the process's user and the runtime's HOME lookup find them.
var (
	passwd = fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:/home/%s:/sbin/nologin\n",
		nonrootName, nonrootUID, nonrootUID, nonrootName, nonrootName)
	group = fmt.Sprintf("root:x:0:\n%s:x:%d:\n", nonrootName, nonrootUID)
)

// layerFile is one entry of the layer: a directory when dir is set, a
// symbolic link to link when link is set, else a regular file.
type layerFile struct {
	name string
	mode int64
	uid  int
	dir  bool
	link string
	data []byte
}

// layerFiles returns the entries of the controller's layer: the binary at
// /ocm-controller (root, 0755), /etc/passwd and /etc/group, and the non-root
// user's home directory. Nothing in it is writable by anyone but its owner.
func layerFiles(binary []byte) []layerFile {
	return []layerFile{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/" + nonrootName + "/", mode: 0o700, uid: nonrootUID, dir: true},
		{name: entrypoint[1:], mode: 0o755, data: binary},
	}
}

// layerTar writes files as an uncompressed tar, sorted by name, every entry
// with modification time mtime and no other time, user or host detail: the
// same files give the same bytes.
func layerTar(files []layerFile, mtime time.Time) ([]byte, error) {
	files = append([]layerFile(nil), files...)
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		hdr := &tar.Header{
			Name:    f.name,
			Mode:    f.mode,
			Uid:     f.uid,
			Gid:     f.uid,
			ModTime: mtime.UTC().Truncate(time.Second),
			Format:  tar.FormatPAX,
		}
		switch {
		case f.dir:
			hdr.Typeflag = tar.TypeDir
		case f.link != "":
			hdr.Typeflag = tar.TypeSymlink
			hdr.Linkname = f.link
		default:
			hdr.Typeflag = tar.TypeReg
			hdr.Size = int64(len(f.data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, fmt.Errorf("write layer entry %s: %w", f.name, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, fmt.Errorf("write layer entry %s: %w", f.name, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("close layer tar: %w", err)
	}
	return buf.Bytes(), nil
}

// controllerLayer returns the OCI layer holding binary as /ocm-controller,
// with the files of layerFiles, gzip-compressed.
func controllerLayer(binary []byte, mtime time.Time) (v1.Layer, error) {
	return filesLayer(layerFiles(binary), mtime)
}

// filesLayer returns the OCI layer of files, gzip-compressed.
func filesLayer(files []layerFile, mtime time.Time) (v1.Layer, error) {
	raw, err := layerTar(files, mtime)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(raw)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("make layer: %w", err)
	}
	return layer, nil
}
