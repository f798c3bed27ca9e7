// Package workargs holds what the verbs of `kubectl ocm work` share about
// their arguments: the checks of work and cluster names, the cluster an
// explicit -n names, and the completion of work names.
package workargs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// ValidateName checks a ManifestWork (or ManifestWorkReplicaSet) name.
func ValidateName(name string) error {
	if name == "" {
		return errors.New("no work name given: pass NAME as the first argument")
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return fmt.Errorf("work name %q is invalid: %s", name, strings.Join(msgs, "; "))
	}
	return nil
}

// ValidateClusters checks the cluster names of flag: at least one, each a
// DNS-1123 label, none twice.
func ValidateClusters(clusters []string, flag string) error {
	if len(clusters) == 0 {
		return fmt.Errorf("no cluster given: use %s a,b (see `kubectl ocm get clusters`)", flag)
	}
	seen := map[string]bool{}
	for _, c := range clusters {
		if msgs := validation.IsDNS1123Label(c); len(msgs) > 0 {
			return fmt.Errorf("%s: cluster name %q is invalid: %s", flag, c, strings.Join(msgs, "; "))
		}
		if seen[c] {
			return fmt.Errorf("%s: cluster %s is given twice", flag, c)
		}
		seen[c] = true
	}
	return nil
}

// NamespaceClusters returns the namespace of the kubectl flags (-n, else the
// context's) and clusters, or, when clusters is empty, -n was given and
// useNamespace, the managed cluster whose namespace -n names: a cluster's
// works live in its namespace on the hub.
func NamespaceClusters(getter genericclioptions.RESTClientGetter, clusters []string, useNamespace bool) (string, []string, error) {
	if getter == nil {
		return "", clusters, nil
	}
	ns, explicit, err := cli.Namespace(getter)
	if err != nil {
		return "", nil, err
	}
	if explicit && useNamespace && len(clusters) == 0 {
		clusters = []string{ns}
	}
	return ns, clusters, nil
}

// CompleteWorks completes the first argument with ManifestWork names: those
// of the clusters given with --clusters, else of every cluster.
func CompleteWorks(getter genericclioptions.RESTClientGetter) cobra.CompletionFunc {
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
