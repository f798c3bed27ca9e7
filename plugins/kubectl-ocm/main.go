// Command kubectl-ocm is the kubectl plugin that installs and drives a fleet of
// clusters managed from one hub with the Open Cluster Management APIs.
package main

import (
	"os"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/root"
)

func main() {
	if err := root.NewCmdRoot(root.DefaultIOStreams()).Execute(); err != nil {
		os.Exit(1)
	}
}
