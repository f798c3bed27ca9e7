// Package apply writes sets of objects to a cluster with server-side apply, the
// way `kubectl ocm hub init` and `join` install the product and the hub
// controller maintains per-cluster objects: idempotent, so re-running upgrades,
// and ordered so that CustomResourceDefinitions and namespaces exist before the
// objects that need them.
package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
)

// FieldManager is the server-side apply field manager of the kubectl-ocm
// CLI's install verbs (hub init, join, upgrade, ...), which every release
// has applied the product's manifests with; the other verbs write as
// managers of their own (see plugins/cli).
const FieldManager = "kubectl-ocm"

// Options tune Apply.
type Options struct {
	// FieldManager owns the applied fields. Default: FieldManager.
	FieldManager string
	// DryRun sends every request with dryRun=All: the API server validates and
	// admits the objects but stores nothing.
	DryRun bool
	// CRDTimeout bounds the wait, after applying CustomResourceDefinitions,
	// until each is Established, before the objects after them are applied.
	// Default: one minute.
	CRDTimeout time.Duration
}

// Apply server-side-applies objs in install order (see Sort), with force, so
// that the result matches the objects whatever wrote them before. It stops at
// the first error, naming the object.
func Apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, opts Options) error {
	if opts.FieldManager == "" {
		opts.FieldManager = FieldManager
	}
	sorted := Sort(objs)
	applyOpts := []client.ApplyOption{client.FieldOwner(opts.FieldManager), client.ForceOwnership}
	if opts.DryRun {
		applyOpts = append(applyOpts, client.DryRunAll)
	}
	var crds []string
	for _, obj := range sorted {
		// Objects of a kind a CRD just defined can only be applied once the
		// CRD is established.
		if len(crds) > 0 && !opts.DryRun && obj.GetKind() != "CustomResourceDefinition" {
			if err := WaitForCRDs(ctx, c, crds, opts.CRDTimeout); err != nil {
				return err
			}
			crds = nil
		}
		u := obj.DeepCopy()
		u.SetManagedFields(nil)
		u.SetResourceVersion("")
		if u.GroupVersionKind().GroupKind() == (schema.GroupKind{Kind: "Namespace"}) {
			owned, err := ownsNamespace(ctx, c, u, opts.FieldManager)
			if err != nil {
				return err
			}
			if !owned {
				continue
			}
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), applyOpts...); err != nil {
			// A dry run creates no CRD and no namespace, so the server
			// cannot check objects of the kinds, or in the namespaces, that
			// this very set creates.
			if opts.DryRun && dependsOnSet(err, obj, sorted) {
				continue
			}
			return fmt.Errorf("apply %s: %w", Describe(obj), err)
		}
		if obj.GetKind() == "CustomResourceDefinition" {
			crds = append(crds, obj.GetName())
		}
	}
	if len(crds) > 0 && !opts.DryRun {
		return WaitForCRDs(ctx, c, crds, opts.CRDTimeout)
	}
	return nil
}

// ownsNamespace reports whether the product may apply ns, a Namespace,
// over the namespace as it exists: whether it does not exist yet, or was
// created by the same part of the product (podsecurity.Owns), or was
// labeled by fieldManager before the product recorded who created it. A
// namespace it does not own is not applied: it keeps its labels, its Pod
// Security above all. It reads the namespace directly (an unstructured
// read bypasses a controller's cache).
func ownsNamespace(ctx context.Context, c client.Client, ns *unstructured.Unstructured, fieldManager string) (bool, error) {
	existing := &unstructured.Unstructured{}
	existing.SetGroupVersionKind(ns.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKey{Name: ns.GetName()}, existing)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("read %s before applying it: %w", Describe(ns), err)
	}
	return podsecurity.Owns(existing, ns, podsecurity.SetLabelsAs(existing, fieldManager)), nil
}

// ToUnstructured converts obj, a typed object of a kind scheme knows, into
// the unstructured object a server-side apply sends: kind and apiVersion set,
// status and metadata.creationTimestamp dropped, fields the type omits when
// empty (omitempty) or zero (omitzero) left out.
func ToUnstructured(obj client.Object, scheme *runtime.Scheme) (*unstructured.Unstructured, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, fmt.Errorf("find the kind of %T %s: %w", obj, obj.GetName(), err)
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvk)
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}

// dependsOnSet reports whether err, from applying obj, says that obj's kind
// or namespace does not exist yet while objs define it.
func dependsOnSet(err error, obj *unstructured.Unstructured, objs []*unstructured.Unstructured) bool {
	var status apierrors.APIStatus
	missingNamespace := errors.As(err, &status) && apierrors.IsNotFound(err) &&
		status.Status().Details != nil && status.Status().Details.Kind == "namespaces"
	gk := obj.GroupVersionKind().GroupKind()
	for _, o := range objs {
		switch o.GetKind() {
		case "CustomResourceDefinition":
			group, _, _ := unstructured.NestedString(o.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(o.Object, "spec", "names", "kind")
			if meta.IsNoMatchError(err) && group == gk.Group && kind == gk.Kind {
				return true
			}
		case "Namespace":
			if missingNamespace && o.GetName() == obj.GetNamespace() {
				return true
			}
		}
	}
	return false
}

// WaitForCRDs polls until every named CustomResourceDefinition is Established,
// for at most timeout (default one minute).
func WaitForCRDs(ctx context.Context, c client.Client, names []string, timeout time.Duration) error {
	if timeout == 0 {
		timeout = time.Minute
	}
	pending := slices.Clone(names)
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		pending = slices.DeleteFunc(pending, func(name string) bool {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
				return false
			}
			return apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established)
		})
		return len(pending) == 0, nil
	})
	if err != nil {
		// The wording of the CLI's waits (plugins/cli.Wait), which pkg/ cannot import.
		return fmt.Errorf("timed out after %s waiting for CustomResourceDefinitions to be established; last state: not established: %s", timeout, strings.Join(pending, ", "))
	}
	return nil
}

// Delete deletes objs in reverse install order, ignoring those already gone
// and kinds the cluster does not serve. It returns every error, each naming
// its object.
func Delete(ctx context.Context, c client.Client, objs []*unstructured.Unstructured, opts ...client.DeleteOption) error {
	sorted := Sort(objs)
	slices.Reverse(sorted)
	var errs []error
	for _, obj := range sorted {
		err := c.Delete(ctx, obj.DeepCopy(), opts...)
		if err == nil || apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			continue
		}
		errs = append(errs, fmt.Errorf("delete %s: %w", Describe(obj), err))
	}
	return errors.Join(errs...)
}

// Describe names an object for messages: kind, then namespace/name.
func Describe(obj client.Object) string {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if obj.GetNamespace() == "" {
		return fmt.Sprintf("%s %s", kind, obj.GetName())
	}
	return fmt.Sprintf("%s %s/%s", kind, obj.GetNamespace(), obj.GetName())
}

// kindRank orders kinds so that what others depend on comes first.
var kindRank = map[schema.GroupKind]int{
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: 0,
	{Kind: "Namespace"}:      1,
	{Kind: "ServiceAccount"}: 2,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                         3,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:                                3,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                  4,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:                         4,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        5,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: 6,
	{Kind: "Secret"}:                    7,
	{Kind: "ConfigMap"}:                 7,
	{Group: "apps", Kind: "Deployment"}: 9,
}

// rankOther is the rank of kinds not in kindRank: custom resources and
// anything else, applied after RBAC, secrets and configuration, before
// Deployments.
const rankOther = 8

// Sort returns objs in install order: CRDs, namespaces, ServiceAccounts, RBAC,
// admission policies, Secrets and ConfigMaps, other kinds, then Deployments.
// The order within a rank is kept.
func Sort(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	out := slices.Clone(objs)
	slices.SortStableFunc(out, func(a, b *unstructured.Unstructured) int {
		return rank(a) - rank(b)
	})
	return out
}

func rank(u *unstructured.Unstructured) int {
	if r, ok := kindRank[u.GroupVersionKind().GroupKind()]; ok {
		return r
	}
	return rankOther
}
