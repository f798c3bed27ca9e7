package cli

import (
	"bytes"
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
)

// ToUnstructured converts a typed object of the project's scheme into the
// unstructured object a server-side apply sends (see apply.ToUnstructured).
func ToUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	return apply.ToUnstructured(obj, apis.Scheme)
}

// legacyFieldManager is the field manager every verb wrote as before each
// had its own (see FieldManager); the install verbs still do.
const legacyFieldManager = apply.FieldManager

// Apply writes obj with server-side apply as the field manager of ctx's verb
// (see FieldManagerFrom), forcing ownership, and returns the hub's answer:
// the stored object or, with serverDryRun, the object the hub validated and
// admitted and would have stored (defaults filled in), without storing it.
//
// When an earlier release applied the object as legacyFieldManager, Apply
// first takes over the fields it applied (see adoptLegacyFields) and then
// applies obj again, so that the fields obj no longer has are removed as if
// the verb had applied them itself.
func Apply(ctx context.Context, c client.Client, obj client.Object, serverDryRun bool) (*unstructured.Unstructured, error) {
	req, err := ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	manager := FieldManagerFrom(ctx)
	opts := []client.ApplyOption{client.FieldOwner(manager), client.ForceOwnership}
	if serverDryRun {
		opts = append(opts, client.DryRunAll)
	}
	// The client decodes the response into u.
	u := req.DeepCopy()
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
		return nil, err
	}
	if serverDryRun {
		return u, nil
	}
	adopted, err := adoptLegacyFields(ctx, c, u, manager)
	if err != nil || !adopted {
		return u, err
	}
	u = req.DeepCopy()
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
		return nil, err
	}
	return u, nil
}

// adoptLegacyFields moves the fields that legacyFieldManager applied to
// stored, an object manager has just applied, into manager's entry of its
// managedFields, and reports whether there were any. Without it those
// fields would stay legacyFieldManager's for good: a field that manager
// then leaves out of the object is not removed while another manager owns
// it. The change is a patch of metadata.managedFields that holds the
// object's resourceVersion; when another writer (a controller writing the
// status) changed the object meanwhile, it reads it again and retries.
func adoptLegacyFields(ctx context.Context, c client.Client, stored *unstructured.Unstructured, manager string) (bool, error) {
	if manager == legacyFieldManager {
		return false, nil
	}
	adopted, first := false, true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := c.Get(ctx, client.ObjectKeyFromObject(stored), stored); err != nil {
				return err
			}
		}
		first = false
		entries := stored.GetManagedFields()
		legacy, own := -1, -1
		for i, e := range entries {
			if e.Operation != metav1.ManagedFieldsOperationApply || e.Subresource != "" {
				continue
			}
			switch e.Manager {
			case legacyFieldManager:
				legacy = i
			case manager:
				own = i
			}
		}
		if legacy < 0 || own < 0 {
			return nil
		}
		fields, err := unionFields(entries[own].FieldsV1, entries[legacy].FieldsV1)
		if err != nil {
			return err
		}
		entries[own].FieldsV1 = fields
		entries = slices.Delete(entries, legacy, legacy+1)
		base := stored.DeepCopy()
		stored.SetManagedFields(entries)
		if err := c.Patch(ctx, stored, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		adopted = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("take over the fields %s applied to %s: %w", legacyFieldManager, apply.Describe(stored), err)
	}
	return adopted, nil
}

// unionFields returns the fields of a and b together.
func unionFields(a, b *metav1.FieldsV1) (*metav1.FieldsV1, error) {
	union := &fieldpath.Set{}
	for _, f := range []*metav1.FieldsV1{a, b} {
		if f == nil || len(f.GetRawBytes()) == 0 {
			continue
		}
		s := &fieldpath.Set{}
		if err := s.FromJSON(bytes.NewReader(f.GetRawBytes())); err != nil {
			return nil, err
		}
		union = union.Union(s)
	}
	raw, err := union.ToJSON()
	if err != nil {
		return nil, err
	}
	return metav1.NewFieldsV1(string(raw)), nil
}
