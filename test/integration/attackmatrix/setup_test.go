package attackmatrix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/identityhub"
)

// setup is the hub of the matrix with the objects its writes target.
type setup struct {
	h     *identityhub.Hub
	admin client.Client
	// autoRequest is the name of the request that registered autoCluster,
	// deleted since.
	autoRequest string
}

// setupError is a failure of the test itself to read what a write
// changes, never an answer to an actor.
type setupError struct{ err error }

func (e setupError) Error() string { return "the administrator reads the target: " + e.err.Error() }

// read reads the object key as the administrator into obj.
func (s *setup) read(ctx context.Context, key client.ObjectKey, obj client.Object) error {
	if err := s.admin.Get(ctx, key, obj); err != nil {
		return setupError{err}
	}
	return nil
}

// prepare creates, as the administrator, the objects the matrix writes:
// a ManifestWork, a ManifestChunk and a lease in each cluster's namespace, an unaccepted
// ManagedCluster, cluster1's import Secret, an AddOnTemplate, a token
// identity of cluster2 (as if it used the token driver), the grants of
// the namespace editor and the template author; lets the shared bootstrap
// token register autoCluster, which the hub accepts automatically, and
// deletes the request that did; and runs the hub tunnel.
func prepare(t *testing.T, h *identityhub.Hub) *setup {
	t.Helper()
	ctx := h.Ctx
	s := &setup{h: h, admin: h.Admin}
	for _, ns := range []string{cluster1, cluster2} {
		kit.MustCreate(ctx, t, s.admin, newWork(ns))
		kit.MustCreate(ctx, t, s.admin, newChunk(t, ns, "prepared"))
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: leaseName}}
		if err := s.admin.Create(ctx, lease); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create lease %s/%s: %v", ns, leaseName, err)
		}
	}
	kit.MustCreate(ctx, t, s.admin, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: pendingCluster}})
	kit.MustCreate(ctx, t, s.admin, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cluster1, Name: importSecret},
		Data: map[string][]byte{"kubeconfig": []byte("apiVersion: v1\nkind: Config\nclusters: []\n")}})
	kit.MustCreate(ctx, t, s.admin, addonTemplate(templateName, identityhub.AddonRole))
	kit.MustCreate(ctx, t, s.admin, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: identity.AgentTokenNamespace, Name: identity.AgentTokenServiceAccount(cluster2)}})

	kit.MustCreate(ctx, t, s.admin, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: cluster1, Name: "matrix-editor"},
		RoleRef: clusterRole("edit"), Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: editorUser}}})
	kit.MustCreate(ctx, t, s.admin, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "matrix:template-author"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{addonv1alpha1.GroupVersion.Group}, Resources: []string{"addontemplates", "clustermanagementaddons"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch"}},
		{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{identityhub.AddonRole}, Verbs: []string{"bind"}},
	}})
	kit.MustCreate(ctx, t, s.admin, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "matrix:template-author"},
		RoleRef: clusterRole("matrix:template-author"), Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: authorUser}}})

	s.registerAutomatically(t)
	hubtest.StartTunnel(ctx, t, h.Cluster, "")

	// The grants above reach the authorizer.
	for _, sar := range []authorizationv1.SubjectAccessReviewSpec{
		{User: editorUser, ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: cluster1, Verb: "update", Resource: "secrets"}},
		{User: authorUser, ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "bind", Group: rbacv1.GroupName, Resource: "clusterroles", Name: identityhub.AddonRole}},
	} {
		h.Poll(t, "the authorizer allowing "+sar.User+" to "+sar.ResourceAttributes.Verb+" "+sar.ResourceAttributes.Resource, func(ctx context.Context) (bool, error) {
			review := &authorizationv1.SubjectAccessReview{Spec: sar}
			err := s.admin.Create(ctx, review)
			return err == nil && review.Status.Allowed, err
		})
	}
	return s
}

// registerAutomatically registers autoCluster as its agent does with the
// shared bootstrap token, which the hub auto-approves: the ManagedCluster,
// then a certificate request, which the hub approves, accepting the
// cluster; then deletes the request, as kube-controller-manager does an
// hour after its approval, so that its name is free.
func (s *setup) registerAutomatically(t *testing.T) {
	t.Helper()
	ctx := s.h.Ctx
	cfg, err := s.credential(ctx, sharedBootstrap)
	kit.Must(t, "a credential of the "+sharedBootstrap, err)
	boot := identityhub.ClientFor(t, cfg)
	kit.Must(t, "the shared bootstrap token creates ManagedCluster "+autoCluster,
		boot.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: autoCluster}}))
	req := agentRequest("", autoCluster, agentUser(autoCluster), identity.AgentGroups(autoCluster)...)
	kit.Must(t, "the shared bootstrap token requests the certificate of "+autoCluster, boot.Create(ctx, req))
	s.h.Poll(t, autoCluster+" accepted automatically for request "+req.Name, func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := s.admin.Get(ctx, client.ObjectKey{Name: autoCluster}, mc); err != nil {
			return false, err
		}
		return mc.Spec.HubAcceptsClient && mc.Annotations[clusterv1.AutomaticallyAcceptedForAnnotationKey] == string(req.UID), nil
	})
	s.waitDecision(t, req.Name, true)
	kit.Must(t, "delete request "+req.Name, s.admin.Delete(ctx, req))
	s.h.Poll(t, "request "+req.Name+" gone", func(ctx context.Context) (bool, error) {
		err := s.admin.Get(ctx, client.ObjectKeyFromObject(req), &certificatesv1.CertificateSigningRequest{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	s.autoRequest = req.Name
}

// approval returns whether the request name is approved, denied or
// neither ("").
func (s *setup) approval(ctx context.Context, name string) (string, error) {
	req := &certificatesv1.CertificateSigningRequest{}
	if err := s.admin.Get(ctx, client.ObjectKey{Name: name}, req); err != nil {
		return "", err
	}
	for _, c := range req.Status.Conditions {
		switch c.Type {
		case certificatesv1.CertificateApproved:
			return allow, nil
		case certificatesv1.CertificateDenied, certificatesv1.CertificateFailed:
			return deny, nil
		}
	}
	return "", nil
}

// waitDecision waits until the request name is approved (or, unless
// approved is set, denied).
func (s *setup) waitDecision(t *testing.T, name string, approved bool) {
	t.Helper()
	framework.Eventually(s.h.Ctx, t, identityhub.PollTimeout, "request "+name+" approved", func(ctx context.Context) (bool, error) {
		got, err := s.approval(ctx, name)
		if approved && got == deny {
			return false, errors.New("denied")
		}
		return got != "", err
	})
}

// sentinel files, as cluster2's agent, a renewal the hub approves, and
// waits for its approval: the hub's approver handles requests one at a
// time in the order they come, so that every request filed before has
// been decided on once it is approved.
func (s *setup) sentinel(t *testing.T) {
	t.Helper()
	cfg, err := s.h.Cluster.ConfigForUser(agentUser(cluster2), identity.AgentGroups(cluster2)...)
	kit.Must(t, "a certificate of cluster2's agent", err)
	req := agentRequest("", cluster2, agentUser(cluster2), identity.AgentGroups(cluster2)...)
	kit.Must(t, "cluster2's agent files a renewal", identityhub.ClientFor(t, cfg).Create(s.h.Ctx, req))
	s.waitDecision(t, req.Name, true)
}

// waitApproved waits at most timeout for the request name's approval and
// returns its state then.
func (s *setup) waitApproved(ctx context.Context, name string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		got, err := s.approval(ctx, name)
		if err != nil || got != "" || time.Now().After(deadline) {
			return got, err
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("wait for request %s: %w", name, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// newWork returns ManifestWork workName of namespace, which applies a
// ConfigMap.
func newWork(namespace string) *workv1.ManifestWork {
	raw, _ := json.Marshal(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app"}})
	return &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: workName},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}}}
}
