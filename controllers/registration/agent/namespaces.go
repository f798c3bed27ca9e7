package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// Label values of a managed namespace (see clusterv1.ManagedNamespaceLabelKey).
const (
	// managedValue: a set of this hub asks for the namespace.
	managedValue = "true"
	// releasedValue: no set asks for it any more, and the agent kept it.
	releasedValue = "false"
)

// The managed namespaces of the cluster's sets, created, relabeled and
// deleted on the managed cluster; their changes trigger status syncs.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;patch;delete

// applyManagedNamespaces creates on the managed cluster the namespaces of
// mc.Status.ManagedNamespaces, labeled <prefix><hub hash>=true as OCM's
// agent does, and sets each entry's NamespaceAvailable condition. It then
// releases the namespaces that carry the label but are no longer asked for
// (releaseNamespaces) and reports those it keeps in the cluster's
// ManagedNamespacesRetained condition. Until the Namespace informer has
// synced it changes nothing: the sync that follows the informer's sync does.
func (a *Agent) applyManagedNamespaces(ctx context.Context, conn *hubConnection, mc *clusterv1.ManagedCluster) error {
	if !informerSynced(ctx, a.spokeCache, &corev1.Namespace{}) {
		ctrl.LoggerFrom(ctx).V(1).Info("Namespaces not read yet; applying the managed namespaces in a later sync")
		return nil
	}
	key := clusterv1.ManagedNamespaceLabelKey(kubeconfig.HubHash(conn.cred.config.Host))
	gen := mc.Generation
	applied := map[string]error{}
	var errs []error
	for i := range mc.Status.ManagedNamespaces {
		entry := &mc.Status.ManagedNamespaces[i]
		err, done := applied[entry.Name]
		if !done {
			err = a.ensureNamespace(ctx, entry.Name, key)
			applied[entry.Name] = err
			errs = append(errs, err)
		}
		meta.SetStatusCondition(&entry.Conditions, namespaceCondition(entry.Name, err, gen))
	}
	retained, err := a.releaseNamespaces(ctx, key, applied)
	errs = append(errs, err)
	setRetainedCondition(mc, key, retained)
	return errors.Join(errs...)
}

// namespaceCondition is the NamespaceAvailable condition of namespace name
// after applying it failed with err (nil: it exists).
func namespaceCondition(name string, err error, gen int64) metav1.Condition {
	if err != nil {
		return metav1.Condition{
			Type: clusterv1.ManagedNamespaceConditionAvailable, Status: metav1.ConditionFalse,
			Reason: clusterv1.ReasonManagedNamespaceApplyFailed, Message: err.Error(), ObservedGeneration: gen,
		}
	}
	return metav1.Condition{
		Type: clusterv1.ManagedNamespaceConditionAvailable, Status: metav1.ConditionTrue,
		Reason: clusterv1.ReasonManagedNamespaceApplied, Message: fmt.Sprintf("Namespace %s exists on the managed cluster", name), ObservedGeneration: gen,
	}
}

// ensureNamespace creates namespace name labeled key=true, or labels the
// existing one so (and drops the note of an earlier release).
func (a *Agent) ensureNamespace(ctx context.Context, name, key string) error {
	ns := &corev1.Namespace{}
	err := a.spoke.Get(ctx, types.NamespacedName{Name: name}, ns)
	if apierrors.IsNotFound(err) {
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{key: managedValue}}}
		_, err = a.spokeKube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		if err == nil {
			ctrl.LoggerFrom(ctx).V(2).Info("Managed namespace created", "namespace", name)
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create namespace %s: %w", name, err)
		}
		ns, err = a.spokeKube.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("read namespace %s: %w", name, err)
	}
	if ns.DeletionTimestamp != nil {
		return fmt.Errorf("namespace %s is being deleted; it is created again once it is gone", name)
	}
	_, noted := ns.Annotations[clusterv1.RetainedObjectsAnnotationKey]
	if ns.Labels[key] == managedValue && !noted {
		return nil
	}
	return a.patchNamespace(ctx, name, map[string]any{
		"labels":      map[string]any{key: managedValue},
		"annotations": map[string]any{clusterv1.RetainedObjectsAnnotationKey: nil},
	})
}

// patchNamespace merges metadata into namespace name.
func (a *Agent) patchNamespace(ctx context.Context, name string, metadata map[string]any) error {
	body, err := json.Marshal(map[string]any{"metadata": metadata})
	if err != nil {
		return err
	}
	if _, err := a.spokeKube.CoreV1().Namespaces().Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("label namespace %s: %w", name, err)
	}
	return nil
}

// retainedNamespace is a namespace no set asks for that the agent keeps.
type retainedNamespace struct {
	name string
	// why says what it holds, or why it could not be checked.
	why string
}

// releaseNamespaces handles the namespaces labeled with key that no entry
// of wanted asks for. One labeled key=true is deleted unless it holds
// objects no ManifestWork owns (unownedObjects); then it is kept, labeled
// key=false, with what it holds noted in an annotation. One that a
// ManifestWork owns itself is left to that work: the label is removed. It
// returns the namespaces kept: those labeled key=false, and those that
// could not be checked (tried again at the next sync).
func (a *Agent) releaseNamespaces(ctx context.Context, key string, wanted map[string]error) ([]retainedNamespace, error) {
	list := &corev1.NamespaceList{}
	if err := a.spoke.List(ctx, list, client.HasLabels{key}); err != nil {
		return nil, fmt.Errorf("list the managed namespaces: %w", err)
	}
	log := ctrl.LoggerFrom(ctx)
	var retained []retainedNamespace
	var errs []error
	for i := range list.Items {
		ns := &list.Items[i]
		if _, ok := wanted[ns.Name]; ok || ns.DeletionTimestamp != nil {
			continue
		}
		if ns.Labels[key] == releasedValue {
			retained = append(retained, retainedNamespace{name: ns.Name, why: ns.Annotations[clusterv1.RetainedObjectsAnnotationKey]})
			continue
		}
		if ownedByWork(ns) {
			errs = append(errs, a.patchNamespace(ctx, ns.Name, map[string]any{"labels": map[string]any{key: nil}}))
			continue
		}
		objs, err := a.unownedObjects(ctx, ns.Name)
		if err != nil {
			retained = append(retained, retainedNamespace{name: ns.Name, why: fmt.Sprintf("could not be checked: %v", err)})
			errs = append(errs, err)
			continue
		}
		if len(objs) == 0 {
			err := a.spokeKube.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
			if client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("delete namespace %s: %w", ns.Name, err))
				continue
			}
			log.V(2).Info("Managed namespace no set asks for deleted", "namespace", ns.Name)
			continue
		}
		why := describeObjects(objs)
		if err := a.patchNamespace(ctx, ns.Name, map[string]any{
			"labels":      map[string]any{key: releasedValue},
			"annotations": map[string]any{clusterv1.RetainedObjectsAnnotationKey: why},
		}); err != nil {
			errs = append(errs, err)
		}
		log.Info("Managed namespace no set asks for kept: it holds objects no ManifestWork owns", "namespace", ns.Name, "objects", why)
		retained = append(retained, retainedNamespace{name: ns.Name, why: why})
	}
	slices.SortFunc(retained, func(x, y retainedNamespace) int { return strings.Compare(x.name, y.name) })
	return retained, errors.Join(errs...)
}

// maxNamedObjects bounds the objects a retained namespace's note names.
const maxNamedObjects = 5

// describeObjects says what a namespace holds: the count and the first
// objects, as resource/name.
func describeObjects(objs []string) string {
	slices.Sort(objs)
	named := objs[:min(len(objs), maxNamedObjects)]
	s := fmt.Sprintf("%d object(s) no ManifestWork owns: %s", len(objs), strings.Join(named, ", "))
	if len(objs) > len(named) {
		s += fmt.Sprintf(" and %d more", len(objs)-len(named))
	}
	return s
}

// setRetainedCondition reports the namespaces kept with the
// ManagedNamespacesRetained condition: True naming them, or False once none
// is left after some was. Without any, a cluster that never kept one gets no
// condition.
func setRetainedCondition(mc *clusterv1.ManagedCluster, key string, retained []retainedNamespace) {
	typ := clusterv1.ManagedClusterConditionManagedNamespacesRetained
	if len(retained) == 0 {
		if meta.FindStatusCondition(mc.Status.Conditions, typ) != nil {
			meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
				Type: typ, Status: metav1.ConditionFalse, Reason: clusterv1.ReasonNoManagedNamespaceRetained,
				Message: "No namespace that no ManagedClusterSet asks for is kept", ObservedGeneration: mc.Generation,
			})
		}
		return
	}
	parts := make([]string, 0, len(retained))
	for _, r := range retained {
		if r.why == "" {
			r.why = "it held objects no ManifestWork owns"
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", r.name, r.why))
	}
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{
		Type: typ, Status: metav1.ConditionTrue, Reason: clusterv1.ReasonManagedNamespaceNotEmpty,
		Message: fmt.Sprintf("No ManagedClusterSet asks for these namespaces any more, but they are kept: %s. Delete them on the managed cluster when their objects are no longer needed, or remove their label %s to dismiss this",
			strings.Join(parts, "; "), key),
		ObservedGeneration: mc.Generation,
	})
}
