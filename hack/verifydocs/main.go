// Command verifydocs checks that the Markdown documentation (README.md,
// docs/, test/bench/README.md, test/fuzz/README.md) is in step with the
// repository and the CLI: every relative link resolves, to a heading where
// it names one, and every `kubectl ocm` command in a shell code block
// names a command and flags that the kubectl-ocm command tree has; every
// docs page that the help of kubectl-ocm and ocm-controller names exists,
// with the heading it names; the Layout of docs/development.md names every
// directory of the tree's top levels and none that is gone, and the paths
// its "Kept as they are" names exist. Run it
// from the repository's root (make verify-docs); it prints each problem as
// file:line: message and exits 1 when there is one.
package main

import (
	"fmt"
	"io"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/cmd/ocm-controller/app"
	"github.com/kubectl-ocm/kubectl-ocm/hack/verifydocs/docscheck"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/root"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "verifydocs:", err)
		os.Exit(1)
	}
}

func run() error {
	repo := os.DirFS(".")
	files, err := docscheck.Files(repo)
	if err != nil {
		return err
	}
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: io.Discard, ErrOut: io.Discard}
	problems, err := docscheck.Check(repo, files, root.NewCmdRoot(streams), app.NewCommand(io.Discard))
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d problems in %d files", len(problems), len(files))
	}
	return nil
}
