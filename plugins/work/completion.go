package work

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// completionTimeout bounds the hub requests of shell completion.
const completionTimeout = 5 * time.Second

// completeClusters completes managed cluster names from the hub; for a
// comma-separated flag (--clusters a,b) it completes the last element.
func completeClusters(getter genericclioptions.RESTClientGetter) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		c, _, err := cli.NewClient(getter)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(contextOf(cmd), completionTimeout)
		defer cancel()
		list := &clusterv1.ManagedClusterList{}
		if err := c.List(ctx, list); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := make([]string, 0, len(list.Items))
		for _, mc := range list.Items {
			names = append(names, mc.Name)
		}
		return cli.CompleteLast(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeWorks completes the first argument with ManifestWork names: those
// of the clusters given with --cluster or --clusters, else of every cluster.
func completeWorks(getter genericclioptions.RESTClientGetter) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, _, err := cli.NewClient(getter)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(contextOf(cmd), completionTimeout)
		defer cancel()
		var namespaces []string
		for _, flag := range []string{"cluster", "clusters"} {
			if f := cmd.Flags().Lookup(flag); f != nil && f.Changed {
				namespaces = append(namespaces, strings.Split(strings.Trim(f.Value.String(), "[]"), ",")...)
			}
		}
		if len(namespaces) == 0 {
			namespaces = []string{""}
		}
		seen := map[string]bool{}
		var names []string
		for _, ns := range namespaces {
			list := &workv1.ManifestWorkList{}
			if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
				continue
			}
			for _, w := range list.Items {
				if !seen[w.Name] && strings.HasPrefix(w.Name, toComplete) {
					seen[w.Name] = true
					names = append(names, w.Name)
				}
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}

// contextOf returns the command's context, or a background one.
func contextOf(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
