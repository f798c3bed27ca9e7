package agenttest

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// Isolation names what an add-on's hub identity on one cluster must not
// reach.
type Isolation struct {
	// Cluster is the add-on's cluster; Other is another cluster.
	Cluster, Other string
	// OtherAddon is another add-on on Cluster, granted read on the Secrets
	// of Cluster's namespace that the add-on probed was not granted.
	OtherAddon string
}

// CheckAddonIsolation sends, with c (an add-on's hub identity), requests the
// hub must refuse, and fails t unless each gets 403 Forbidden: the Secrets
// of its cluster's namespace (granted to in.OtherAddon, not to it), the
// ConfigMaps of the other cluster's namespace, the ManagedClusterAddOns of
// the other cluster and of every cluster, and tokens of in.OtherAddon's
// ServiceAccount.
func CheckAddonIsolation(ctx context.Context, t *testing.T, c client.Client, in Isolation) {
	t.Helper()
	probes := []struct {
		what string
		do   func() error
	}{
		{"list the Secrets of " + in.Cluster + " (add-on " + in.OtherAddon + "'s)", func() error {
			return c.List(ctx, &corev1.SecretList{}, client.InNamespace(in.Cluster))
		}},
		{"list the ConfigMaps of " + in.Other, func() error {
			return c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(in.Other))
		}},
		{"list the ManagedClusterAddOns of " + in.Other, func() error {
			return c.List(ctx, &addonv1alpha1.ManagedClusterAddOnList{}, client.InNamespace(in.Other))
		}},
		{"list every ManagedClusterAddOn", func() error {
			return c.List(ctx, &addonv1alpha1.ManagedClusterAddOnList{})
		}},
		{"request a token of " + identity.AddonServiceAccount(in.OtherAddon), func() error {
			sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: in.Cluster, Name: identity.AddonServiceAccount(in.OtherAddon)}}
			return c.SubResource("token").Create(ctx, sa, &authenticationv1.TokenRequest{})
		}},
	}
	for _, p := range probes {
		if err := p.do(); !apierrors.IsForbidden(err) {
			t.Errorf("%s: got %v, want 403 Forbidden", p.what, err)
		}
	}
}
