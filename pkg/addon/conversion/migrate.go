package conversion

import (
	"context"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// migratePageSize bounds the objects read per list request.
const migratePageSize = 500

// Migrated says what MigrateStoredVersions rewrote for one CRD.
type Migrated struct {
	// CRD is the CRD's name.
	CRD string
	// Kind is the kind of its objects.
	Kind string
	// From are the stored versions before, To the storage version.
	From []string
	To   string
	// Objects counts the objects rewritten.
	Objects int
}

// MigrateStoredVersions brings every object of each converted CRD whose
// status.storedVersions holds another version than its storage version to
// the storage version, as kube-storage-version-migrator does: it reads each
// object at the storage version and writes it back unchanged (the API server
// stores it at the storage version), then sets status.storedVersions to the
// storage version alone. Objects at other versions need the conversion
// webhook: call it once Probe succeeds. It returns what it migrated.
func MigrateStoredVersions(ctx context.Context, c client.Client) ([]Migrated, error) {
	var out []Migrated
	for _, name := range CRDNames {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return out, fmt.Errorf("read CustomResourceDefinition %s: %w", name, err)
		}
		if !NeedsMigration(crd) {
			continue
		}
		m := Migrated{CRD: name, Kind: crd.Spec.Names.Kind, From: crd.Status.StoredVersions, To: StorageVersion(crd)}
		n, err := rewriteAll(ctx, c, schema.GroupVersionKind{Group: crd.Spec.Group, Version: m.To, Kind: m.Kind})
		m.Objects = n
		if err != nil {
			return out, fmt.Errorf("migrate %ss to %s: %w", m.Kind, m.To, err)
		}
		if err := setStoredVersions(ctx, c, name, m.To); err != nil {
			return out, err
		}
		out = append(out, m)
	}
	return out, nil
}

// MigrationPending reports whether any converted CRD on the hub may still
// store objects at a version other than its storage version (NeedsMigration);
// CRDs not installed are skipped.
func MigrationPending(ctx context.Context, c client.Reader) (bool, error) {
	for _, name := range CRDNames {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return false, fmt.Errorf("read CustomResourceDefinition %s: %w", name, err)
		}
		if NeedsMigration(crd) {
			return true, nil
		}
	}
	return false, nil
}

// rewriteAll writes every object of gvk back unchanged, page by page, and
// returns how many it wrote. An object deleted meanwhile is skipped; one
// changed meanwhile is read again.
func rewriteAll(ctx context.Context, c client.Client, gvk schema.GroupVersionKind) (int, error) {
	n := 0
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	for {
		if err := c.List(ctx, list, client.Limit(migratePageSize), client.Continue(list.GetContinue())); err != nil {
			return n, fmt.Errorf("list: %w", err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				err := c.Update(ctx, obj)
				if apierrors.IsConflict(err) {
					if getErr := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); getErr != nil {
						return getErr
					}
				}
				return err
			})
			if err != nil && !apierrors.IsNotFound(err) {
				return n, fmt.Errorf("rewrite %s %s: %w", gvk.Kind, client.ObjectKeyFromObject(obj), err)
			}
			if err == nil {
				n++
			}
		}
		if list.GetContinue() == "" {
			return n, nil
		}
	}
}

// setStoredVersions sets the status.storedVersions of the CRD named name to
// version alone.
func setStoredVersions(ctx context.Context, c client.Client, name, version string) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return err
		}
		crd.Status.StoredVersions = []string{version}
		return c.Status().Update(ctx, crd)
	})
	if err != nil {
		return fmt.Errorf("set the stored versions of CustomResourceDefinition %s to [%s]: %w", name, version, err)
	}
	return nil
}
