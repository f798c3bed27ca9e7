package klusterlet

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// managedCluster returns a client of the managed cluster of the hosted
// Klusterlet k, from the kubeconfig in Secret external-managed-kubeconfig
// in its namespace on this hosting cluster (the one its agent uses).
func (r *Reconciler) managedCluster(ctx context.Context, k *operatorv1.Klusterlet) (client.Client, error) {
	cfg, err := kubeconfig.ReadManagedCluster(ctx, r.Direct, types.NamespacedName{Namespace: agentNamespace(k), Name: config.ManagedKubeconfigSecret})
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: r.Direct.Scheme()})
	if err != nil {
		return nil, fmt.Errorf("connect to the managed cluster of Klusterlet %s: %w", k.Name, err)
	}
	return c, nil
}

// applyManagedAddonNamespace creates, for a hosted Klusterlet, the add-on
// namespace on its managed cluster, as OCM's operator does in both modes:
// add-on managers deploy their agents there (the managed manifests of a
// hosted add-on among them) without a Namespace manifest of their own.
func (r *Reconciler) applyManagedAddonNamespace(ctx context.Context, k *operatorv1.Klusterlet) error {
	c, err := r.managedCluster(ctx, k)
	if err != nil {
		return err
	}
	ns := addonNamespace(r.EnforceSharedPodSecurity)
	labels := ns.GetLabels()
	labels[config.KlusterletOwnerLabel] = k.Name
	ns.SetLabels(labels)
	if err := apply.Apply(ctx, c, []*unstructured.Unstructured{ns}, apply.Options{FieldManager: FieldManager}); err != nil {
		return fmt.Errorf("on the managed cluster: %w", err)
	}
	return nil
}

// deleteManagedAddonNamespace deletes, for a deleted hosted Klusterlet, the
// add-on namespace it created on its managed cluster, as the operator does
// in Default mode. It does what it can: a managed cluster that cannot be
// reached keeps its namespace, which is logged, and the Klusterlet goes all
// the same.
func (r *Reconciler) deleteManagedAddonNamespace(ctx context.Context, k *operatorv1.Klusterlet) {
	log := ctrl.LoggerFrom(ctx)
	c, err := r.managedCluster(ctx, k)
	if err == nil {
		ns := &corev1.Namespace{}
		err = c.Get(ctx, types.NamespacedName{Name: addonv1alpha1.DefaultAddonInstallNamespace}, ns)
		switch {
		case apierrors.IsNotFound(err):
			return
		case err == nil && ns.Labels[config.KlusterletOwnerLabel] != k.Name:
			return // not ours
		case err == nil:
			err = client.IgnoreNotFound(c.Delete(ctx, ns))
		}
	}
	if err != nil {
		log.Info("Cannot delete the add-on namespace on the managed cluster; it stays", "klusterlet", k.Name,
			"namespace", addonv1alpha1.DefaultAddonInstallNamespace, "error", err.Error())
	}
}
