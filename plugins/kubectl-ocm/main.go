// Command kubectl-ocm is the kubectl plugin that installs and drives a fleet of
// clusters managed from one hub with the Open Cluster Management APIs.
package main

import (
	"context"
	"os"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/root"
)

func main() {
	if err := root.Execute(context.Background(), root.NewCmdRoot(root.DefaultIOStreams())); err != nil {
		os.Exit(1)
	}
}
