package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Lookup names what GetOrList reads, for its errors.
type Lookup struct {
	// Kind is the kind read, such as Placement; its plural is Kind+"s".
	Kind string
	// Host is the hub's address.
	Host string
	// NotFound is the error when the named object does not exist: it says
	// how to find the right name.
	NotFound error
}

// GetOrList fills items, the Items of list, as a get verb shows them: with
// name, the one object namespace/name (NotFound when it does not exist);
// without, every object of namespace ("" for every namespace, or a
// cluster-scoped kind). The items are sorted by namespace and name.
func GetOrList[T any, PT interface {
	*T
	client.Object
}](ctx context.Context, c client.Client, list client.ObjectList, items *[]T, namespace, name string, what Lookup) error {
	if name != "" {
		obj := PT(new(T))
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return what.NotFound
			}
			key := name
			if namespace != "" {
				key = namespace + "/" + name
			}
			return fmt.Errorf("read %s %s on %s: %w", what.Kind, key, what.Host, err)
		}
		*items = append((*items)[:0], *obj)
		return nil
	}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("list %ss on %s: %w", what.Kind, what.Host, err)
	}
	slices.SortFunc(*items, func(a, b T) int {
		oa, ob := PT(&a), PT(&b)
		return strings.Compare(oa.GetNamespace()+"/"+oa.GetName(), ob.GetNamespace()+"/"+ob.GetName())
	})
	return nil
}
