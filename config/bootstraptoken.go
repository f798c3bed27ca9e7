package config

import (
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// BootstrapToken issues, on the hub c reaches, a token valid for d of the
// bootstrap identity an agent first registers with: the one bound to
// cluster (ClusterBootstrapObjects, created or updated first with
// fieldManager), or the shared identity.BootstrapServiceAccount when
// cluster is "". It is the token `kubectl ocm hub token` prints and the
// cluster importer hands an imported cluster's agent.
func BootstrapToken(ctx context.Context, c client.Client, cluster string, d time.Duration, fieldManager string) (authenticationv1.TokenRequestStatus, error) {
	ns, sa := identity.BootstrapServiceAccountOf(cluster)
	if cluster != "" {
		objs, err := ClusterBootstrapObjects(cluster)
		if err != nil {
			return authenticationv1.TokenRequestStatus{}, err
		}
		if err := apply.Apply(ctx, c, objs, apply.Options{FieldManager: fieldManager}); err != nil {
			if apierrors.IsNotFound(err) {
				// A hub of an earlier release has no such namespace.
				return authenticationv1.TokenRequestStatus{}, fmt.Errorf("create the bootstrap identity of cluster %s: %w; "+
					"namespace %s comes with this release of the hub: upgrade it with `kubectl ocm hub init`", cluster, err, ns)
			}
			return authenticationv1.TokenRequestStatus{}, fmt.Errorf("create the bootstrap identity of cluster %s: %w", cluster, err)
		}
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(d / time.Second))}}
	owner := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: sa}}
	if err := c.SubResource("token").Create(ctx, owner, tr); err != nil {
		return authenticationv1.TokenRequestStatus{}, fmt.Errorf("request a token for ServiceAccount %s/%s: %w", ns, sa, err)
	}
	return tr.Status, nil
}
