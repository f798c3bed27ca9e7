package klusterlet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
)

// ownedKinds are the kinds of the objects the operator renders, in which it
// looks for those it applied (by config.KlusterletOwnerLabel).
var ownedKinds = []schema.GroupVersionKind{
	{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
	{Version: "v1", Kind: "Namespace"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Version: "v1", Kind: "Secret"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
}

// objectKey identifies an object across kinds.
type objectKey struct {
	gk              schema.GroupKind
	namespace, name string
}

func keyOf(obj client.Object, gvk schema.GroupVersionKind) objectKey {
	return objectKey{gk: gvk.GroupKind(), namespace: obj.GetNamespace(), name: obj.GetName()}
}

// owned lists the objects the operator applied for the Klusterlet name, as
// metadata, kind by kind.
func (r *Reconciler) owned(ctx context.Context, name string) ([]*metav1.PartialObjectMetadata, error) {
	var out []*metav1.PartialObjectMetadata
	for _, gvk := range ownedKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.Direct.List(ctx, list, client.MatchingLabels{config.KlusterletOwnerLabel: name}); err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return nil, fmt.Errorf("list the %ss of Klusterlet %s: %w", gvk.Kind, name, err)
		}
		for i := range list.Items {
			item := &list.Items[i]
			item.SetGroupVersionKind(gvk)
			out = append(out, item)
		}
	}
	return out, nil
}

// prune deletes the objects the operator applied for the Klusterlet name
// that are not among objs, the objects it renders now.
func (r *Reconciler) prune(ctx context.Context, name string, objs []*unstructured.Unstructured) error {
	keep := map[objectKey]bool{}
	for _, obj := range objs {
		keep[keyOf(obj, obj.GroupVersionKind())] = true
	}
	owned, err := r.owned(ctx, name)
	if err != nil {
		return err
	}
	var errs []error
	for _, obj := range owned {
		if keep[keyOf(obj, obj.GroupVersionKind())] || !obj.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Direct.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s, which Klusterlet %s no longer renders: %w", apply.Describe(obj), name, err))
		}
	}
	return errors.Join(errs...)
}

// previousNamespace returns the namespace of an agent Deployment rendered
// for k in another namespace than namespace (spec.namespace was changed),
// empty when there is none.
func (r *Reconciler) previousNamespace(ctx context.Context, k *operatorv1.Klusterlet, namespace string) (string, error) {
	deps := &appsv1.DeploymentList{}
	if err := r.Client.List(ctx, deps, client.MatchingLabels{config.KlusterletOwnerLabel: k.Name}); err != nil {
		return "", fmt.Errorf("list the agent Deployments of Klusterlet %s: %w", k.Name, err)
	}
	for _, d := range deps.Items {
		if d.Namespace != namespace && d.DeletionTimestamp.IsZero() {
			return d.Namespace, nil
		}
	}
	return "", nil
}

// readyToApply sets the ReadyToApply condition: the bootstrap Secret in
// namespace (or, while the namespace changes, in previous) holds a usable
// kubeconfig, or the hub credential exists. It returns the bootstrap
// kubeconfig and whether the agent can join.
func (r *Reconciler) readyToApply(ctx context.Context, k *operatorv1.Klusterlet, namespace, previous string) ([]byte, bool) {
	names := k.BootstrapKubeconfigSecrets()
	cond := metav1.Condition{Type: operatorv1.ConditionReadyToApply, Status: metav1.ConditionTrue, Reason: operatorv1.ReasonKlusterletPrepared}
	defer func() { setCondition(k, cond) }()
	var problems []string
	for _, ns := range []string{namespace, previous} {
		if ns == "" {
			continue
		}
		for i, name := range names {
			data, err := r.secretData(ctx, ns, name)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			info, err := kubeconfig.FromSecret(data)
			if err != nil || info.Server == "" {
				problems = append(problems, fmt.Sprintf("Secret %s/%s holds no usable kubeconfig (%v)", ns, name, err))
				continue
			}
			cond.Message = fmt.Sprintf("Secret %s/%s holds a kubeconfig for hub %s", ns, name, info.Server)
			if len(names) > 1 {
				cond.Message += fmt.Sprintf(" (hub %d of %d)", i+1, len(names))
			}
			return data[kubeconfig.KubeconfigKey], true
		}
	}
	problem := strings.Join(problems, "; ")
	for _, ns := range []string{namespace, previous} {
		if ns == "" {
			continue
		}
		if data, err := r.secretData(ctx, ns, operatorv1.HubKubeConfigSecret); err == nil && len(data[kubeconfig.KubeconfigKey]) > 0 {
			cond.Message = fmt.Sprintf("%s; the hub credential in Secret %s/%s exists", problem, ns, operatorv1.HubKubeConfigSecret)
			return nil, true
		}
	}
	cond.Status, cond.Reason = metav1.ConditionFalse, operatorv1.ReasonKlusterletPrepareFailed
	cond.Message = fmt.Sprintf("%s; create Secret %s/%s with key kubeconfig holding a bootstrap kubeconfig of the hub (`kubectl ocm join` writes it)", problem, namespace, names[0])
	return nil, false
}

// secretData reads a Secret's data directly; a missing Secret is an error
// naming it.
func (r *Reconciler) secretData(ctx context.Context, namespace, name string) (map[string][]byte, error) {
	s := &corev1.Secret{}
	if err := r.Direct.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("the Secret %s/%s does not exist", namespace, name)
		}
		return nil, fmt.Errorf("read Secret %s/%s: %w", namespace, name, err)
	}
	return s.Data, nil
}

// copySecrets copies the bootstrap and hub credential Secrets from the
// agent's previous namespace to namespace, creating the namespace, so that
// the agent moved there keeps its identity. Existing Secrets are kept.
func (r *Reconciler) copySecrets(ctx context.Context, from, to string, bootstrap []string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: to, Labels: podsecurity.Labels(),
		Annotations: map[string]string{podsecurity.SetByAnnotation: podsecurity.SetByKlusterlet}}}
	if err := r.Direct.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s for the agent: %w", to, err)
	}
	for _, name := range append(slices.Clip(bootstrap), operatorv1.HubKubeConfigSecret) {
		old := &corev1.Secret{}
		if err := r.Direct.Get(ctx, types.NamespacedName{Namespace: from, Name: name}, old); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return fmt.Errorf("read Secret %s/%s to move it to namespace %s: %w", from, name, to, err)
		}
		copied := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: to, Name: name, Labels: old.Labels, Annotations: old.Annotations},
			Type:       old.Type, Data: old.Data,
		}
		delete(copied.Labels, config.KlusterletOwnerLabel)
		if err := r.Direct.Create(ctx, copied); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("copy Secret %s/%s to namespace %s: %w", from, name, to, err)
		}
	}
	return nil
}

// relatedResources lists objs as the Klusterlet's status.relatedResources.
func (r *Reconciler) relatedResources(objs []*unstructured.Unstructured) []operatorv1.RelatedResourceMeta {
	out := make([]operatorv1.RelatedResourceMeta, 0, len(objs))
	for _, obj := range apply.Sort(objs) {
		gvk := obj.GroupVersionKind()
		resource := ""
		if m, err := r.Direct.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			resource = m.Resource.Resource
		}
		out = append(out, operatorv1.RelatedResourceMeta{Group: gvk.Group, Version: gvk.Version, Resource: resource,
			Namespace: obj.GetNamespace(), Name: obj.GetName()})
	}
	return out
}
