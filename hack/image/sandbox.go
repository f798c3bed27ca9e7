package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework/images"
)

// busyboxPath is where Debian's busybox-static package installs the static
// busybox the sandbox's busybox image is made of.
const busyboxPath = "/bin/busybox"

// pauseUID is the user the pause image runs as, as Kubernetes' own.
const pauseUID = 65535

// sandboxImage is one image of the local clusters' nodes.
type sandboxImage struct {
	ref        string
	entrypoint []string
	user       string
	// pkg is the main package built into /<name of entrypoint>; empty for
	// busybox, which comes from Debian.
	pkg string
}

// sandboxImages are the images `image sandbox` builds.
var sandboxImages = []sandboxImage{
	{ref: images.Pause, entrypoint: []string{"/pause"}, user: fmt.Sprintf("%d:%d", pauseUID, pauseUID), pkg: "./hack/image/pause"},
	{ref: images.Busybox, entrypoint: []string{"sh"}, user: "0:0"},
	{ref: images.HelloworldAddon, entrypoint: []string{"/helloworld-addon"}, user: fmt.Sprintf("%d:%d", nonrootUID, nonrootUID), pkg: "./examples/addons/helloworld/agent"},
	{ref: images.Hellomanager, entrypoint: []string{"/hellomanager"}, user: fmt.Sprintf("%d:%d", nonrootUID, nonrootUID), pkg: "./examples/addons/hellomanager"},
}

// runSandbox parses the flags of sandbox and builds the images the local
// clusters' nodes need besides ocm-controller's, for this machine's
// architecture, into one OCI layout, each named by its full reference.
func runSandbox(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	dir := fs.String("out", "dist/sandbox", "Output directory: the OCI layout is <out>/layout.")
	ldflags := fs.String("ldflags", "-s -w", "Linker flags of the binaries.")
	epoch := fs.String("source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "Seconds since 1970 of the images' creation time. Default: $SOURCE_DATE_EPOCH, else 0.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	created, err := parseEpoch(*epoch)
	if err != nil {
		return err
	}
	busybox, err := os.ReadFile(busyboxPath)
	if err != nil {
		return fmt.Errorf("read %s: %w (install Debian's busybox-static: hack/node-deps.sh)", busyboxPath, err)
	}
	applets, err := busyboxApplets(ctx)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "sandbox-images-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(work) }()
	p := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	layoutPath := filepath.Join(*dir, layoutDir)
	if err := os.RemoveAll(layoutPath); err != nil {
		return err
	}
	lp, err := layout.Write(layoutPath, empty.Index)
	if err != nil {
		return fmt.Errorf("create OCI layout %s: %w", layoutPath, err)
	}
	for _, si := range sandboxImages {
		var files []layerFile
		if si.pkg == "" {
			files = busyboxFiles(busybox, applets)
		} else {
			bin := filepath.Join(work, filepath.Base(si.entrypoint[0]))
			cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", *ldflags, "-o", bin, si.pkg)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if msg, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("go build %s: %w\n%s", si.pkg, err, msg)
			}
			data, err := os.ReadFile(bin)
			if err != nil {
				return err
			}
			files = binaryFiles(si.entrypoint[0][1:], data)
		}
		img, err := sandboxImageOf(si, files, p, created)
		if err != nil {
			return fmt.Errorf("image %s: %w", si.ref, err)
		}
		if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{annotationRefName: si.ref}), layout.WithPlatform(p)); err != nil {
			return fmt.Errorf("write image %s to %s: %w", si.ref, layoutPath, err)
		}
		digest, err := img.Digest()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "OCI layout %s: %s %s\n", layoutPath, si.ref, digest)
	}
	return nil
}

// sandboxImageOf returns the image of one layer of files, with si's
// entrypoint and user.
func sandboxImageOf(si sandboxImage, files []layerFile, p v1.Platform, created time.Time) (v1.Image, error) {
	layer, err := filesLayer(files, created)
	if err != nil {
		return nil, err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
		History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "hack/image sandbox"}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: created}
	cf.OS, cf.Architecture = p.OS, p.Architecture
	cf.Config.Entrypoint = si.entrypoint
	cf.Config.User = si.user
	cf.Config.WorkingDir = "/"
	cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	return mutate.ConfigFile(img, cf)
}

// binaryFiles are the files of an image of one static binary at name, run
// as the non-root user: the binary, /etc/passwd and /etc/group.
func binaryFiles(name string, binary []byte) []layerFile {
	files := layerFiles(nil)
	for i := range files {
		if files[i].name == entrypoint[1:] {
			files[i].name, files[i].data = name, binary
		}
	}
	return files
}

// busyboxApplets lists the paths of busybox's applets (bin/sh, usr/bin/env,
// ...), from the busybox binary itself.
func busyboxApplets(ctx context.Context) ([]string, error) {
	out, err := exec.CommandContext(ctx, busyboxPath, "--list-full").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list-full: %w", busyboxPath, err)
	}
	return strings.Fields(string(out)), nil
}

// busyboxFiles are the files of the busybox image: busybox at /bin/busybox,
// a link to it for every applet, root's home, a world-writable /tmp and the
// passwd and group files naming root and nobody.
func busyboxFiles(busybox []byte, applets []string) []layerFile {
	files := []layerFile{
		{name: "bin/", mode: 0o755, dir: true},
		{name: "bin/busybox", mode: 0o755, data: busybox},
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnogroup:x:65534:\n")},
		{name: "root/", mode: 0o700, dir: true},
		{name: "tmp/", mode: 0o1777, dir: true},
		{name: "usr/", mode: 0o755, dir: true},
		{name: "usr/bin/", mode: 0o755, dir: true},
		{name: "usr/sbin/", mode: 0o755, dir: true},
		{name: "sbin/", mode: 0o755, dir: true},
		{name: "var/", mode: 0o755, dir: true},
	}
	seen := map[string]bool{"bin/busybox": true}
	for _, a := range applets {
		a = strings.TrimPrefix(a, "/")
		if seen[a] || !strings.Contains(a, "/") {
			continue
		}
		seen[a] = true
		files = append(files, layerFile{name: a, mode: 0o777, link: "/bin/busybox"})
	}
	return files
}
