package clusterset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// SetResult is what `clusterset set -o json|yaml` prints.
type SetResult struct {
	// ClusterSet is the ManagedClusterSet.
	ClusterSet string `json:"clusterSet"`
	// Clusters are the clusters of --clusters, in their order.
	Clusters []SetCluster `json:"clusters,omitempty"`
	// AddedNamespaces are the names of --namespaces that the set did not
	// manage yet, in their order.
	AddedNamespaces []string `json:"addedNamespaces,omitempty"`
	// ManagedNamespaces are the set's spec.managedNamespaces afterwards.
	ManagedNamespaces []string `json:"managedNamespaces,omitempty"`
	// DryRun is client or server when the command was a dry run: the other
	// fields say what would have changed, and nothing did.
	DryRun string `json:"dryRun,omitempty"`
}

// SetCluster is what `clusterset set` did to one cluster.
type SetCluster struct {
	// Name is the ManagedCluster.
	Name string `json:"name"`
	// PreviousClusterSet is the set it was in before, empty for none.
	PreviousClusterSet string `json:"previousClusterSet,omitempty"`
	// Changed is false when it was in the set already.
	Changed bool `json:"changed"`
}

// BindResult is what `clusterset bind|unbind -o json|yaml` prints.
type BindResult struct {
	// ClusterSet is the ManagedClusterSet.
	ClusterSet string `json:"clusterSet"`
	// Namespace is the namespace of the ManagedClusterSetBinding.
	Namespace string `json:"namespace"`
	// Bound says whether the set is bound to the namespace afterwards.
	Bound bool `json:"bound"`
	// DryRun is client or server when the command was a dry run: Bound
	// says what would have been, and nothing changed.
	DryRun string `json:"dryRun,omitempty"`
}

// Run adds --namespaces to the set's managed namespaces and labels every
// cluster of --clusters with the set's name, after checking that the set
// exists, that it selects by that label when clusters are given and that
// every cluster exists. With --dry-run it writes through a client that
// sends nothing (client) or has the hub admit each write (server).
func (o *SetOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	return o.run(ctx, c, cfg.Host)
}

// run is Run on the hub at host, which c reads and writes.
func (o *SetOptions) run(ctx context.Context, c client.Client, host string) error {
	set := &clusterv1beta2.ManagedClusterSet{}
	if err := c.Get(ctx, client.ObjectKey{Name: o.Name}, set); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ManagedClusterSet %s does not exist: create it first with `kubectl ocm clusterset create %s`", o.Name, o.Name)
		}
		return fmt.Errorf("read ManagedClusterSet %s on %s: %w", o.Name, host, err)
	}
	if len(o.Clusters) > 0 && set.Spec.ClusterSelector.SelectorType == clusterv1beta2.LabelSelector {
		return fmt.Errorf("ManagedClusterSet %s selects its clusters with a label selector: change the clusters' labels (or the set's selector) instead of setting clusters into it", o.Name)
	}
	clusters, err := o.readClusters(ctx, c)
	if err != nil {
		return err
	}
	res := &SetResult{ClusterSet: o.Name, ManagedNamespaces: namespaceNames(set)}
	if cli.IsDryRun(o.DryRun) {
		res.DryRun = o.DryRun
	}
	w := cli.DryRunWriter(c, o.DryRun)
	if len(o.Namespaces) > 0 {
		if err := o.addNamespaces(ctx, w, set, res); err != nil {
			return fmt.Errorf("add namespace(s) %s to the managed namespaces of ManagedClusterSet %s on %s: %w", strings.Join(o.Namespaces, ","), o.Name, host, err)
		}
	}
	for _, mc := range clusters {
		if err := o.label(ctx, w, mc, res); err != nil {
			return err
		}
	}
	if o.Output != "" {
		return printResult(o.Out, o.Output, res)
	}
	return nil
}

// readClusters reads every cluster of --clusters, failing with all those
// that do not exist.
func (o *SetOptions) readClusters(ctx context.Context, c client.Client) ([]*clusterv1.ManagedCluster, error) {
	clusters := make([]*clusterv1.ManagedCluster, 0, len(o.Clusters))
	var errs []error
	for _, name := range o.Clusters {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			if apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("managed cluster %s does not exist on the hub: check the name with `kubectl ocm get clusters`", name))
				continue
			}
			errs = append(errs, fmt.Errorf("read managed cluster %s: %w", name, err))
			continue
		}
		clusters = append(clusters, mc)
	}
	return clusters, errors.Join(errs...)
}

// addNamespaces appends the names of --namespaces the set lacks to its
// spec.managedNamespaces with a merge patch that holds the set's
// resourceVersion, reading the set again when another writer changed it
// meanwhile, so that no name is lost or repeated.
func (o *SetOptions) addNamespaces(ctx context.Context, c client.Client, set *clusterv1beta2.ManagedClusterSet, res *SetResult) error {
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := c.Get(ctx, client.ObjectKeyFromObject(set), set); err != nil {
				return fmt.Errorf("read it again: %w", err)
			}
		}
		first = false
		base := set.DeepCopy()
		res.AddedNamespaces = nil
		for _, ns := range o.Namespaces {
			if slices.Contains(namespaceNames(set), ns) {
				continue
			}
			set.Spec.ManagedNamespaces = append(set.Spec.ManagedNamespaces, clusterv1.ManagedNamespaceConfig{Name: ns})
			res.AddedNamespaces = append(res.AddedNamespaces, ns)
		}
		if len(res.AddedNamespaces) == 0 {
			return nil
		}
		return c.Patch(ctx, set, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		return err
	}
	res.ManagedNamespaces = namespaceNames(set)
	for _, ns := range o.Namespaces {
		if slices.Contains(res.AddedNamespaces, ns) {
			o.say("Namespace %s added to the managed namespaces of ManagedClusterSet %s%s\n", ns, o.Name, cli.DryRunSuffix(o.DryRun))
		} else {
			o.say("Namespace %s is already a managed namespace of ManagedClusterSet %s\n", ns, o.Name)
		}
	}
	return nil
}

// label gives mc the set's cluster set label, unless it has it already.
func (o *SetOptions) label(ctx context.Context, c client.Client, mc *clusterv1.ManagedCluster, res *SetResult) error {
	old := mc.Labels[clusterv1beta2.ClusterSetLabel]
	res.Clusters = append(res.Clusters, SetCluster{Name: mc.Name, PreviousClusterSet: old, Changed: old != o.Name})
	if old == o.Name {
		o.say("Cluster %s is already in ManagedClusterSet %s\n", mc.Name, o.Name)
		return nil
	}
	patch := &unstructured.Unstructured{}
	patch.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("ManagedCluster"))
	patch.SetName(mc.Name)
	patch.SetLabels(map[string]string{clusterv1beta2.ClusterSetLabel: o.Name})
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(patch), client.FieldOwner(cli.FieldManagerFrom(ctx)), client.ForceOwnership); err != nil {
		return fmt.Errorf("label managed cluster %s with %s=%s: %w", mc.Name, clusterv1beta2.ClusterSetLabel, o.Name, err)
	}
	if old == "" {
		o.say("Cluster %s added to ManagedClusterSet %s%s\n", mc.Name, o.Name, cli.DryRunSuffix(o.DryRun))
	} else {
		o.say("Cluster %s moved from ManagedClusterSet %s to %s%s\n", mc.Name, old, o.Name, cli.DryRunSuffix(o.DryRun))
	}
	return nil
}

// say writes a line of the summary, which -o replaces.
func (o *SetOptions) say(format string, args ...any) {
	if o.Output == "" {
		fmt.Fprintf(o.Out, format, args...)
	}
}

// namespaceNames returns the names of the set's managed namespaces.
func namespaceNames(set *clusterv1beta2.ManagedClusterSet) []string {
	names := make([]string, 0, len(set.Spec.ManagedNamespaces))
	for _, m := range set.Spec.ManagedNamespaces {
		names = append(names, m.Name)
	}
	return names
}

// Run creates (bind) or deletes (unbind) the ManagedClusterSetBinding. With
// --dry-run it writes through a client that sends nothing (client) or has
// the hub admit the write (server).
func (o *BindOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	return o.run(ctx, c, cfg.Host)
}

// run is Run on the hub at host, which c reads and writes.
func (o *BindOptions) run(ctx context.Context, c client.Client, host string) error {
	res := &BindResult{ClusterSet: o.Name, Namespace: o.Namespace, Bound: !o.Unbind}
	if cli.IsDryRun(o.DryRun) {
		res.DryRun = o.DryRun
	}
	w := cli.DryRunWriter(c, o.DryRun)
	var err error
	if o.Unbind {
		err = o.unbind(ctx, w, host)
	} else {
		err = o.bind(ctx, c, w, host)
	}
	if err != nil {
		return err
	}
	if o.Output != "" {
		return printResult(o.Out, o.Output, res)
	}
	return nil
}

// bind checks with c that the set and the namespace exist, then writes the
// binding with w to the hub at host.
func (o *BindOptions) bind(ctx context.Context, c, w client.Client, host string) error {
	if err := c.Get(ctx, client.ObjectKey{Name: o.Name}, &clusterv1beta2.ManagedClusterSet{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ManagedClusterSet %s does not exist: create it first with `kubectl ocm clusterset create %s`", o.Name, o.Name)
		}
		return fmt.Errorf("read ManagedClusterSet %s on %s: %w", o.Name, host, err)
	}
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: o.Namespace}, ns); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("namespace %s does not exist on the hub: create it with `kubectl create namespace %s`, or bind to another with -n", o.Namespace, o.Namespace)
		}
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("read namespace %s: %w", o.Namespace, err)
		}
	} else if ns.DeletionTimestamp != nil {
		return fmt.Errorf("namespace %s is being deleted: bind to another with -n", o.Namespace)
	}
	binding := &clusterv1beta2.ManagedClusterSetBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name},
		Spec:       clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: o.Name},
	}
	if _, err := cli.Apply(ctx, w, binding, false); err != nil {
		return fmt.Errorf("bind ManagedClusterSet %s to namespace %s on %s: %w", o.Name, o.Namespace, host, err)
	}
	if o.Output == "" {
		fmt.Fprintf(o.Out, "ManagedClusterSet %s bound to namespace %s%s\n", o.Name, o.Namespace, cli.DryRunSuffix(o.DryRun))
	}
	return nil
}

// unbind deletes the binding with w from the hub at host.
func (o *BindOptions) unbind(ctx context.Context, w client.Client, host string) error {
	binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name}}
	if err := w.Delete(ctx, binding); err != nil {
		if apierrors.IsNotFound(err) {
			if o.IgnoreNotFound {
				return nil
			}
			return fmt.Errorf("ManagedClusterSet %s is not bound to namespace %s: `kubectl ocm clusterset get` shows where each set is bound", o.Name, o.Namespace)
		}
		return fmt.Errorf("unbind ManagedClusterSet %s from namespace %s on %s: %w", o.Name, o.Namespace, host, err)
	}
	if o.Output == "" {
		fmt.Fprintf(o.Out, "ManagedClusterSet %s unbound from namespace %s%s\n", o.Name, o.Namespace, cli.DryRunSuffix(o.DryRun))
	}
	return nil
}

// printResult writes res as json or yaml.
func printResult(out io.Writer, format string, res any) error {
	if format == "yaml" {
		return cli.PrintYAML(out, res)
	}
	return cli.PrintJSON(out, res)
}
