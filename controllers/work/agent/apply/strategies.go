package apply

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// create creates required, owned by owner when owned.
func create(ctx context.Context, ri dynamic.ResourceInterface, required *unstructured.Unstructured, owner metav1.OwnerReference, owned bool) (*unstructured.Unstructured, error) {
	refs, _ := withOwner(required.GetOwnerReferences(), owner, owned)
	required.SetOwnerReferences(refs)
	return ri.Create(ctx, required, metav1.CreateOptions{})
}

// update is the Update strategy (existing is the live object or nil):
// create the object, or update it to the
// manifest while keeping labels, annotations and owner references others
// set, and its finalizers. An object that already matches is not written.
func update(ctx context.Context, ri dynamic.ResourceInterface, existing, required *unstructured.Unstructured, owner metav1.OwnerReference, owned bool) (*unstructured.Unstructured, error) {
	hash := contentHash(required)
	if existing == nil {
		annotations := required.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[hashAnnotation] = hash
		required.SetAnnotations(annotations)
		return create(ctx, ri, required, owner, owned)
	}
	lastHash := existing.GetAnnotations()[hashAnnotation]
	labels, labelsChanged := mergeMap(existing.GetLabels(), required.GetLabels())
	wantAnnotations := required.GetAnnotations()
	if wantAnnotations == nil {
		wantAnnotations = map[string]string{}
	}
	wantAnnotations[hashAnnotation] = hash
	annotations, annotationsChanged := mergeMap(existing.GetAnnotations(), wantAnnotations)
	refs, refsChanged := mergeOwners(existing.GetOwnerReferences(), required.GetOwnerReferences())
	refs, ownerChanged := withOwner(refs, owner, owned)
	if !labelsChanged && !annotationsChanged && !refsChanged && !ownerChanged && sameContent(required, existing) {
		return existing, nil
	}
	required.SetLabels(labels)
	required.SetAnnotations(annotations)
	required.SetOwnerReferences(refs)
	required.SetFinalizers(existing.GetFinalizers())
	required.SetResourceVersion(existing.GetResourceVersion())
	updated, err := ri.Update(ctx, required, metav1.UpdateOptions{})
	if err != nil && lastHash == hash && !labelsChanged && !ownerChanged && (apierrors.IsInvalid(err) || apierrors.IsForbidden(err)) {
		// This manifest was applied before and the API server refuses to
		// write it again: the object differs only where the server or its
		// admission changed it (a Pod's injected volumes). Nothing to do.
		return existing, nil
	}
	return updated, err
}

// mergeOwners returns existing with the references of required added.
func mergeOwners(existing, required []metav1.OwnerReference) ([]metav1.OwnerReference, bool) {
	out, changed := existing, false
	for _, r := range required {
		if !IsOwnedBy(out, r.UID) {
			out = append(append([]metav1.OwnerReference(nil), out...), r)
			changed = true
		}
	}
	return out, changed
}

// createOnly is the CreateOnly strategy: create the object if it is missing;
// afterwards only its owner reference is kept in line with the delete option.
func createOnly(ctx context.Context, ri dynamic.ResourceInterface, existing, required *unstructured.Unstructured, owner metav1.OwnerReference, owned bool) (*unstructured.Unstructured, error) {
	if existing == nil {
		return create(ctx, ri, required, owner, owned)
	}
	refs, changed := withOwner(existing.GetOwnerReferences(), owner, owned)
	if !changed {
		return existing, nil
	}
	return patchOwners(ctx, ri, existing, refs)
}

// patchOwners sets the owner references of existing, failing if it changed
// since it was read.
func patchOwners(ctx context.Context, ri dynamic.ResourceInterface, existing *unstructured.Unstructured, refs []metav1.OwnerReference) (*unstructured.Unstructured, error) {
	if refs == nil {
		refs = []metav1.OwnerReference{}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": refs, "resourceVersion": existing.GetResourceVersion(),
	}})
	if err != nil {
		return nil, fmt.Errorf("encode owner patch: %w", err)
	}
	return ri.Patch(ctx, existing.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
}

// serverSideApply is the ServerSideApply strategy: apply the manifest with
// the configured field manager (default work-agent), forcing conflicts only
// when the config says so. A conflict fails the manifest. The ignoreFields
// of the config keep their live values (see keepIgnoredFields).
func serverSideApply(ctx context.Context, ri dynamic.ResourceInterface, existing, required *unstructured.Unstructured, owner metav1.OwnerReference, owned bool, cfg *workv1.ServerSideApplyConfig) (*unstructured.Unstructured, error) {
	opts := metav1.ApplyOptions{FieldManager: workv1.DefaultFieldManager}
	if cfg != nil {
		opts.Force = cfg.Force
		if cfg.FieldManager != "" {
			opts.FieldManager = cfg.FieldManager
		}
	}
	// The owner reference is one of the applied fields: applying without it
	// removes it again when the object becomes orphaned.
	refs, _ := withOwner(required.GetOwnerReferences(), owner, owned)
	required.SetOwnerReferences(refs)
	if cfg != nil && len(cfg.IgnoreFields) > 0 {
		hash, unchanged, err := keepIgnoredFields(required, existing, cfg.IgnoreFields)
		if err != nil {
			return nil, err
		}
		annotations := required.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[workv1.ConfigSpecHashAnnotationKey] = hash
		required.SetAnnotations(annotations)
		if unchanged && holds(existing, required) && IsOwnedBy(existing.GetOwnerReferences(), owner.UID) == IsOwnedBy(refs, owner.UID) {
			// Only ignored fields differ: applying would take them over.
			return existing, nil
		}
	}
	return ri.Apply(ctx, required.GetName(), required, opts)
}
