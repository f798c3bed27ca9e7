// Command dev-env runs a local development environment in the background: a
// hub and managed clusters started by the test framework, each with a node
// (a kubelet, kube-proxy and containerd) that runs the product's Pods from
// the images `make image` builds. It is behind `make dev-env` and `make
// dev-env-down`.
package main

import (
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newCommand().Execute(); err != nil {
		os.Exit(1)
	}
}

// options are the flags shared by every subcommand.
type options struct {
	dir        string
	kubeBinDir string
	distDir    string
	clusters   []string
	// previous are the clusters that run the previous Kubernetes release.
	previous []string
	// name is the repository of load's layout entries named only by a tag.
	name string
}

func newCommand() *cobra.Command {
	o := &options{}
	root := &cobra.Command{
		Use:          "dev-env",
		Short:        "Run local hub and managed-cluster control planes in the background",
		SilenceUsage: true,
	}
	root.PersistentFlags().StringVar(&o.dir, "dir", ".dev-env", "Directory holding the environment's state, logs and kubeconfig")
	up := &cobra.Command{
		Use:   "up",
		Short: "Start the environment in the background and print how to use it",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return o.up(cmd.Context(), cmd.OutOrStdout()) },
	}
	serve := &cobra.Command{
		Use:    "serve",
		Short:  "Run the environment in the foreground until SIGTERM (what up starts)",
		Args:   cobra.NoArgs,
		Hidden: true,
		RunE:   func(cmd *cobra.Command, _ []string) error { return o.serve(cmd.Context(), cmd.OutOrStdout()) },
	}
	for _, c := range []*cobra.Command{up, serve} {
		c.Flags().StringVar(&o.kubeBinDir, "kube-bin-dir", "bin/kube", "Directory holding the Kubernetes binaries and containerd (make kube-bins)")
		c.Flags().StringVar(&o.distDir, "dist-dir", "dist", "Directory holding the OCI layouts of make image (image/) and make sandbox-images (sandbox/)")
		c.Flags().StringSliceVar(&o.clusters, "clusters", []string{"hub", "cluster1", "cluster2", "hub2"}, "Clusters to start; the first is the hub (the HTTP proxy is in front of it), "+standbyHub+" is a second hub to add as a standby (join --add-hub)")
		c.Flags().StringSliceVar(&o.previous, "previous", nil, "Clusters that run the previous Kubernetes release (bin/kube/previous, built first when missing), as a fleet of mixed releases does; by default every cluster runs the current one")
	}
	down := &cobra.Command{
		Use:   "down",
		Short: "Stop the environment and remove everything it made on the host",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return o.down(cmd.OutOrStdout()) },
	}
	load := &cobra.Command{
		Use:   "load PATH",
		Short: "Load the images of a docker save archive or an OCI layout directory into the running environment",
		Long: `Load the images of a docker save archive or an OCI layout directory into the
running environment's registry, as kind load does: every node can then pull
them by the names the archive gives them (docker save's RepoTags, the OCI
layout's org.opencontainers.image.ref.name).`,
		Example: `  docker save -o box.tar example.com/tools/box:v1
  dev-env load --dir .dev-env box.tar
  dev-env load --dir .dev-env --name quay.io/kubectl-ocm/ocm-controller dist/image/layout`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.load(cmd.Context(), cmd.OutOrStdout(), args[0])
		},
	}
	load.Flags().StringVar(&o.name, "name", "", "Repository of the OCI layout's images named only by a tag (as make image writes them), e.g. quay.io/kubectl-ocm/ocm-controller")
	root.AddCommand(up, serve, down, load)
	root.SetErrPrefix("dev-env: error:")
	return root
}
