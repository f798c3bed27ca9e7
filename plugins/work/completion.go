package work

import (
	"context"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// completeWorks completes the first argument with ManifestWork names: those
// of the clusters given with --clusters, else of every cluster.
func completeWorks(getter genericclioptions.RESTClientGetter) cobra.CompletionFunc {
	return cli.FirstArgOnly(func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		namespaces := []string{""}
		if clusters, err := cmd.Flags().GetStringSlice("clusters"); err == nil && len(clusters) > 0 {
			namespaces = clusters
		}
		return cli.CompleteNames(getter, func(ctx context.Context, c client.Client, _ string) ([]string, error) {
			seen := map[string]bool{}
			var names []string
			for _, ns := range namespaces {
				found, err := cli.ListNames(ctx, c, &workv1.ManifestWorkList{}, client.InNamespace(ns))
				if err != nil {
					continue
				}
				for _, n := range found {
					if !seen[n] {
						seen[n] = true
						names = append(names, n)
					}
				}
			}
			return names, nil
		})(cmd, args, toComplete)
	})
}
