package cli

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

// CompletionTimeout bounds the hub requests of shell completion.
const CompletionTimeout = 5 * time.Second

// CompleteClusters completes the first argument, or a comma-separated flag
// value such as --clusters a,b, with ManagedCluster names from the hub.
func CompleteClusters(getter genericclioptions.RESTClientGetter) cobra.CompletionFunc {
	return CompleteNames(getter, func(ctx context.Context, c client.Client, _ string) ([]string, error) {
		return ListNames(ctx, c, &clusterv1.ManagedClusterList{})
	})
}

// CompleteClusterSets completes the first argument, or a comma-separated
// flag value, with ManagedClusterSet names from the hub.
func CompleteClusterSets(getter genericclioptions.RESTClientGetter) cobra.CompletionFunc {
	return CompleteNames(getter, func(ctx context.Context, c client.Client, _ string) ([]string, error) {
		return ListNames(ctx, c, &clusterv1beta2.ManagedClusterSetList{})
	})
}

// CompleteAddons completes the first argument, or a comma-separated flag
// value such as --names a,b, with add-on names: those of the hub's
// ClusterManagementAddOns.
func CompleteAddons(getter genericclioptions.RESTClientGetter) cobra.CompletionFunc {
	return CompleteNames(getter, func(ctx context.Context, c client.Client, _ string) ([]string, error) {
		return ListNames(ctx, c, &addonv1alpha1.ClusterManagementAddOnList{})
	})
}

// CompletePlacements completes the first argument with the names of the
// Placements in the namespace of the kubectl flags (-n or the context's).
func CompletePlacements(getter genericclioptions.RESTClientGetter) cobra.CompletionFunc {
	return CompleteNames(getter, func(ctx context.Context, c client.Client, ns string) ([]string, error) {
		return ListNames(ctx, c, &clusterv1beta1.PlacementList{}, client.InNamespace(ns))
	})
}

// ListNames lists list from the hub with opts and returns the names of its
// items.
func ListNames(ctx context.Context, c client.Client, list client.ObjectList, opts ...client.ListOption) ([]string, error) {
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	var names []string
	err := meta.EachListItem(list, func(obj runtime.Object) error {
		names = append(names, obj.(client.Object).GetName())
		return nil
	})
	return names, err
}

// CompletePlacementRefs completes a NAMESPACE/NAME Placement reference with
// every Placement of the hub.
func CompletePlacementRefs(getter genericclioptions.RESTClientGetter) cobra.CompletionFunc {
	return CompleteNames(getter, func(ctx context.Context, c client.Client, _ string) ([]string, error) {
		list := &clusterv1beta1.PlacementList{}
		if err := c.List(ctx, list); err != nil {
			return nil, err
		}
		names := make([]string, 0, len(list.Items))
		for _, p := range list.Items {
			names = append(names, p.Namespace+"/"+p.Name)
		}
		return names, nil
	})
}

// FirstArgOnly wraps a completion function so that it completes only the
// first argument of a command.
func FirstArgOnly(f cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return f(cmd, args, toComplete)
	}
}

// ExceptArgs wraps a completion function of a command taking several names
// so that it does not offer the names already given as arguments.
func ExceptArgs(f cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		names, directive := f(cmd, args, toComplete)
		return slices.DeleteFunc(names, func(n string) bool { return slices.Contains(args, n) }), directive
	}
}

// CompleteNames returns a completion function offering the names list
// returns (given the namespace of the kubectl flags).
func CompleteNames(getter genericclioptions.RESTClientGetter, list func(context.Context, client.Client, string) ([]string, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		c, _, err := NewClient(ctx, getter)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ns, _, _ := getter.ToRawKubeConfigLoader().Namespace()
		ctx, cancel := context.WithTimeout(ctx, CompletionTimeout)
		defer cancel()
		names, err := list(ctx, c, ns)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		slices.Sort(names)
		return CompleteLast(names, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteLast returns the candidates for the last element of a
// comma-separated value: the names not already given, prefixed by the
// elements before it.
func CompleteLast(names []string, toComplete string) []string {
	given := strings.Split(toComplete, ",")
	prefix := strings.Join(given[:len(given)-1], ",")
	if prefix != "" {
		prefix += ","
	}
	last := given[len(given)-1]
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, last) && !slices.Contains(given[:len(given)-1], n) {
			out = append(out, prefix+n)
		}
	}
	return out
}
