package unjoin

import (
	"context"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
)

// deleteKlusterlet deletes k and waits until it is gone. When no Klusterlet
// operator runs to honor its finalizer, the finalizer is dropped and unjoin
// removes the agent itself.
func (o *Options) deleteKlusterlet(ctx context.Context, c client.Client, k *operatorv1.Klusterlet) error {
	if slices.Contains(k.Finalizers, config.KlusterletCleanupFinalizer) && !operatorRuns(ctx, c) {
		base := k.DeepCopy()
		k.Finalizers = slices.DeleteFunc(k.Finalizers, func(f string) bool { return f == config.KlusterletCleanupFinalizer })
		if err := c.Patch(ctx, k, client.MergeFrom(base)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("remove the finalizer of Klusterlet %s, which no running Klusterlet operator honors: %w", k.Name, err)
		}
	}
	if err := c.Delete(ctx, k); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Klusterlet %s: %w", k.Name, err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(operatorv1.GroupVersion.WithKind("Klusterlet"))
	u.SetName(k.Name)
	return o.waitGone(ctx, c, "Klusterlet "+k.Name+" (the Klusterlet operator removes its agent first)", []*unstructured.Unstructured{u})
}

// operatorRuns reports whether a replica of the Klusterlet operator's
// Deployment is available (deploystatus.Status.Serving), rolled out or not:
// one is there to honor the finalizer.
func operatorRuns(ctx context.Context, c client.Client) bool {
	dep := &appsv1.Deployment{}
	key := types.NamespacedName{Namespace: operatorv1.OperatorNamespace, Name: config.KlusterletOperatorName}
	return c.Get(ctx, key, dep) == nil && deploystatus.Of(dep).Serving
}

// removeOperator removes the Klusterlet operator once no Klusterlet remains
// on the cluster: its Deployment, identity and rights, and its namespace
// unless something else lives there (the hub's bootstrap identities when the
// cluster is also a hub). Its CRD goes with the other unused CRDs.
func (o *Options) removeOperator(ctx context.Context, c client.Client) error {
	list := &operatorv1.KlusterletList{}
	if err := c.List(ctx, list, client.Limit(1)); err != nil && !meta.IsNoMatchError(err) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("list the remaining Klusterlets: %w", err)
	}
	if len(list.Items) > 0 {
		return nil // the operator still serves another Klusterlet
	}
	objs, err := config.KlusterletOperatorObjects(config.KlusterletOperatorValues{})
	if err != nil {
		return err
	}
	keepNamespace, err := namespaceShared(ctx, c)
	if err != nil {
		return err
	}
	objs = slices.DeleteFunc(objs, func(obj *unstructured.Unstructured) bool {
		return obj.GetKind() == "CustomResourceDefinition" || (obj.GetKind() == "Namespace" && keepNamespace)
	})
	if err := apply.Delete(ctx, c, objs, client.PropagationPolicy("Foreground")); err != nil {
		return fmt.Errorf("remove the Klusterlet operator: %w", err)
	}
	if err := o.waitGone(ctx, c, "the Klusterlet operator", objs); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "Removed the Klusterlet operator: Deployment, RBAC and ServiceAccount %s/%s.\n", operatorv1.OperatorNamespace, config.KlusterletOperatorName)
	return nil
}

// namespaceShared reports whether the operator's namespace holds
// ServiceAccounts of others than the operator.
func namespaceShared(ctx context.Context, c client.Client) (bool, error) {
	sas := &corev1.ServiceAccountList{}
	if err := c.List(ctx, sas, client.InNamespace(operatorv1.OperatorNamespace)); err != nil {
		return false, fmt.Errorf("list the ServiceAccounts of namespace %s: %w", operatorv1.OperatorNamespace, err)
	}
	for _, sa := range sas.Items {
		if sa.Name != config.KlusterletOperatorName && sa.Name != "default" {
			return true, nil
		}
	}
	return false, nil
}
