package cli

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
)

// ToUnstructured converts a typed object of the project's scheme into the
// unstructured object a server-side apply sends (see apply.ToUnstructured).
func ToUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	return apply.ToUnstructured(obj, apis.Scheme)
}

// Apply writes obj with server-side apply as the field manager of ctx's verb
// (see FieldManagerFrom), forcing ownership, and returns the hub's answer: the stored object or,
// with serverDryRun, the object the hub validated and admitted and would
// have stored (defaults filled in), without storing it.
func Apply(ctx context.Context, c client.Client, obj client.Object, serverDryRun bool) (*unstructured.Unstructured, error) {
	u, err := ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	opts := []client.ApplyOption{client.FieldOwner(FieldManagerFrom(ctx)), client.ForceOwnership}
	if serverDryRun {
		opts = append(opts, client.DryRunAll)
	}
	// The client decodes the response into u.
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
		return nil, err
	}
	return u, nil
}
