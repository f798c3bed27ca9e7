// Command image builds the multi-platform OCI image of ocm-controller without
// a container daemon, and pushes it. The Makefile runs it:
//
//	make image                       # go run ./hack/image build ...
//	make image-push REGISTRY=<registry/org>
//
// build cross-compiles a static ocm-controller per platform, puts each binary
// at /ocm-controller on an empty base (with /etc/passwd naming the non-root
// user 65532 it runs as), and writes the index of those images as an OCI
// image layout in <out>/layout, and a docker-compatible archive of the image
// of one architecture (the host's by default) beside it, for kind and docker
// load. Times come from SOURCE_DATE_EPOCH: the same commit gives the same
// image digest.
//
// sandbox builds, for this machine's architecture, the other images the local
// clusters' nodes run (the pause image, busybox from Debian's busybox-static,
// the example add-ons') into one OCI layout, each named by its full
// reference (test/framework/images).
//
// push pushes the image index of <out>/layout as
// <registry>/ocm-controller:<tag>, with the credentials of docker login or
// the docker config's credential helpers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
)

const usage = `usage:
  image build --out DIR --version V [--revision SHA] [--ldflags FLAGS] [--platforms linux/amd64,linux/arm64] [--registry R]
  image push --out DIR --version V --registry R
  image sandbox --out DIR [--ldflags FLAGS]`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// run runs the subcommand args name.
func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "build":
		return runBuild(ctx, args[1:], out)
	case "push":
		return runPush(ctx, args[1:], out)
	case "sandbox":
		return runSandbox(ctx, args[1:], out)
	default:
		return fmt.Errorf("unknown subcommand %q\n%s", args[0], usage)
	}
}

// options are the flags both subcommands share.
type options struct {
	out, version, registry string
}

func (o *options) register(fs *flag.FlagSet, defaultRegistry string) {
	fs.StringVar(&o.out, "out", "dist/image", "Output directory: the OCI layout is <out>/layout.")
	fs.StringVar(&o.version, "version", version.Version, "The version the binary is stamped with; the image tag is made from it.")
	fs.StringVar(&o.registry, "registry", defaultRegistry, "The registry and organization of the image: <registry>/ocm-controller:<tag>.")
}

// runBuild parses the flags of build and builds the image.
func runBuild(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	var o options
	o.register(fs, config.DefaultImageRegistry)
	cfg := buildConfig{ModuleDir: ".", Source: "https://github.com/kubectl-ocm/kubectl-ocm", Licenses: "Apache-2.0"}
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "Comma-separated platforms of the image.")
	fs.StringVar(&cfg.LDFlags, "ldflags", "-s -w", "Linker flags of the binaries (the Makefile's version stamping).")
	fs.StringVar(&cfg.Revision, "revision", "unknown", "The commit the binaries are built from.")
	fs.StringVar(&cfg.Source, "source", cfg.Source, "The URL of the source repository (label "+labelSource+").")
	epoch := fs.String("source-date-epoch", os.Getenv("SOURCE_DATE_EPOCH"), "Seconds since 1970 of the image's creation time and its files' modification time. Default: $SOURCE_DATE_EPOCH, else 0.")
	tarballArch := fs.String("tarball-arch", runtime.GOARCH, "The architecture whose image is also written as a docker-compatible archive; empty writes none.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if cfg.Platforms, err = parsePlatforms(*platforms); err != nil {
		return err
	}
	if cfg.Created, err = parseEpoch(*epoch); err != nil {
		return err
	}
	cfg.Version = o.version
	return build(ctx, cfg, o.out, o.registry, *tarballArch, out)
}

// parseEpoch parses SOURCE_DATE_EPOCH; empty is 0.
func parseEpoch(s string) (time.Time, error) {
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds since 1970", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

// build builds the images of cfg, writes their index as the OCI layout
// <out>/layout and the image of tarballArch as a docker-compatible archive
// in out, tagged <registry>/ocm-controller:<tag>, and says what it wrote.
func build(ctx context.Context, cfg buildConfig, out, registry, tarballArch string, w io.Writer) error {
	ref := config.ControllerImage(registry, cfg.Version)
	images, err := buildImages(ctx, cfg)
	if err != nil {
		return err
	}
	idx := controllerIndex(cfg, images)
	tag := version.ImageTag(cfg.Version)
	if err := writeLayout(filepath.Join(out, layoutDir), idx, tag); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return fmt.Errorf("digest of the image index: %w", err)
	}
	fmt.Fprintf(w, "OCI layout %s: ocm-controller:%s %s (%d platforms)\n", filepath.Join(out, layoutDir), tag, digest, len(images))
	old, _ := filepath.Glob(filepath.Join(out, "ocm-controller-*.tar"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("remove the previous archive: %w", err)
		}
	}
	for i, p := range cfg.Platforms {
		if p.Architecture != tarballArch {
			continue
		}
		path := filepath.Join(out, tarballName(tag, p))
		if err := writeTarball(path, ref, images[i]); err != nil {
			return err
		}
		fmt.Fprintf(w, "archive %s: %s for %s\n", path, ref, p)
	}
	return nil
}

// runPush parses the flags of push and pushes the image.
func runPush(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	var o options
	o.register(fs, "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if o.registry == "" {
		return errNoRegistry
	}
	ref := config.ControllerImage(o.registry, o.version)
	digest, err := push(ctx, filepath.Join(o.out, layoutDir), ref)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "pushed %s@%s\n", ref, digest)
	return nil
}
