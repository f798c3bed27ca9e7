package clusterset

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run labels every cluster with the set's name, after checking that the set
// exists, selects by that label and every cluster exists.
func (o *SetOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	set := &clusterv1beta2.ManagedClusterSet{}
	if err := c.Get(ctx, client.ObjectKey{Name: o.Name}, set); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ManagedClusterSet %s does not exist: create it first with `kubectl ocm clusterset create %s`", o.Name, o.Name)
		}
		return fmt.Errorf("read ManagedClusterSet %s on %s: %w", o.Name, cfg.Host, err)
	}
	if set.Spec.ClusterSelector.SelectorType == clusterv1beta2.LabelSelector {
		return fmt.Errorf("ManagedClusterSet %s selects its clusters with a label selector: change the clusters' labels (or the set's selector) instead of setting clusters into it", o.Name)
	}
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
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, mc := range clusters {
		old := mc.Labels[clusterv1beta2.ClusterSetLabel]
		if old == o.Name {
			fmt.Fprintf(o.Out, "Cluster %s is already in ManagedClusterSet %s\n", mc.Name, o.Name)
			continue
		}
		patch := &unstructured.Unstructured{}
		patch.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("ManagedCluster"))
		patch.SetName(mc.Name)
		patch.SetLabels(map[string]string{clusterv1beta2.ClusterSetLabel: o.Name})
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(patch), client.FieldOwner(apply.FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("label managed cluster %s with %s=%s: %w", mc.Name, clusterv1beta2.ClusterSetLabel, o.Name, err)
		}
		if old == "" {
			fmt.Fprintf(o.Out, "Cluster %s added to ManagedClusterSet %s\n", mc.Name, o.Name)
		} else {
			fmt.Fprintf(o.Out, "Cluster %s moved from ManagedClusterSet %s to %s\n", mc.Name, old, o.Name)
		}
	}
	return nil
}

// Run creates (bind) or deletes (unbind) the ManagedClusterSetBinding.
func (o *BindOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	if o.Unbind {
		return o.unbind(ctx, c)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: o.Name}, &clusterv1beta2.ManagedClusterSet{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ManagedClusterSet %s does not exist: create it first with `kubectl ocm clusterset create %s`", o.Name, o.Name)
		}
		return fmt.Errorf("read ManagedClusterSet %s on %s: %w", o.Name, cfg.Host, err)
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
	if _, err := cli.Apply(ctx, c, binding, false); err != nil {
		return fmt.Errorf("bind ManagedClusterSet %s to namespace %s on %s: %w", o.Name, o.Namespace, cfg.Host, err)
	}
	fmt.Fprintf(o.Out, "ManagedClusterSet %s bound to namespace %s\n", o.Name, o.Namespace)
	return nil
}

// unbind deletes the binding.
func (o *BindOptions) unbind(ctx context.Context, c client.Client) error {
	binding := &clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name}}
	if err := c.Delete(ctx, binding); err != nil {
		if apierrors.IsNotFound(err) {
			if o.IgnoreNotFound {
				return nil
			}
			return fmt.Errorf("ManagedClusterSet %s is not bound to namespace %s: `kubectl ocm clusterset get` shows where each set is bound", o.Name, o.Namespace)
		}
		return fmt.Errorf("unbind ManagedClusterSet %s from namespace %s: %w", o.Name, o.Namespace, err)
	}
	fmt.Fprintf(o.Out, "ManagedClusterSet %s unbound from namespace %s\n", o.Name, o.Namespace)
	return nil
}
