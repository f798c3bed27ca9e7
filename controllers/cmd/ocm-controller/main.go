// Command ocm-controller runs the kubectl-ocm controllers: `ocm-controller hub`
// on the hub cluster and `ocm-controller agent` for each managed cluster.
package main

import (
	"os"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/cmd/ocm-controller/app"
)

func main() {
	if err := app.NewCommand(os.Stdout).Execute(); err != nil {
		os.Exit(1)
	}
}
