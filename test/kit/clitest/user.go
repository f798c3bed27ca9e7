package clitest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// grantTimeout bounds the wait until the authorizer of a cluster applies
// what AsUser granted.
const grantTimeout = time.Minute

// User is a hub user other than the admin, with the permissions a test
// gives it.
type User struct {
	// Name is the user name, the common name of its client certificate.
	Name string
	// Grants are the rules the user holds; none when empty.
	Grants []Grant
	// CertFiles writes the client certificate and key as files next to the
	// kubeconfig, which names them, instead of embedding them in it.
	CertFiles bool
}

// Grant is rules granted to a user: in Namespace through a Role and a
// RoleBinding, or cluster-wide through a ClusterRole and a
// ClusterRoleBinding when Namespace is empty.
type Grant struct {
	// Namespace is where the rules hold; empty for the whole cluster.
	Namespace string
	// Rules are what the user may do.
	Rules []rbacv1.PolicyRule
}

// AsUser runs the CLI as u on cluster: it grants u.Grants to u.Name as the
// cluster's admin (roles and bindings named for the user), writes a
// kubeconfig in a temporary directory of t with the context "hub" and a
// client certificate of u.Name signed by the cluster's CA, waits until the
// cluster's authorizer allows every verb of every granted rule, and returns
// a CLI that uses that kubeconfig.
func AsUser(ctx context.Context, t testing.TB, cluster *framework.Cluster, u User) CLI {
	t.Helper()
	admin := cluster.Client()
	for i, g := range u.Grants {
		grant(ctx, t, admin, u.Name, fmt.Sprintf("%s-%d", u.Name, i), g)
	}
	cfg, err := cluster.ConfigForUser(u.Name)
	if err != nil {
		t.Fatalf("credentials of user %s: %v", u.Name, err)
	}
	dir := t.TempDir()
	if u.CertFiles {
		cfg = certFiles(t, cfg, dir, u.Name)
	}
	path := filepath.Join(dir, u.Name+".kubeconfig")
	if err := framework.WriteKubeconfig(path, "hub", cfg); err != nil {
		t.Fatalf("kubeconfig of user %s: %v", u.Name, err)
	}
	for _, g := range u.Grants {
		for _, attrs := range accessesOf(g) {
			framework.Eventually(ctx, t, grantTimeout, fmt.Sprintf("user %s allowed %+v", u.Name, attrs), func(ctx context.Context) (bool, error) {
				review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: u.Name, ResourceAttributes: &attrs}}
				if err := admin.Create(ctx, review); err != nil {
					return false, err
				}
				return review.Status.Allowed, nil
			})
		}
	}
	return CLI{Kubeconfig: path, Context: "hub"}
}

// grant creates the role and the binding of g for user, named name.
func grant(ctx context.Context, t testing.TB, c client.Client, user, name string, g Grant) {
	t.Helper()
	subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}
	objs := []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: g.Rules},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}},
	}
	if g.Namespace != "" {
		meta := metav1.ObjectMeta{Namespace: g.Namespace, Name: name}
		objs = []client.Object{
			&rbacv1.Role{ObjectMeta: meta, Rules: g.Rules},
			&rbacv1.RoleBinding{ObjectMeta: meta, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}},
		}
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("grant user %s: create %T %s: %v", user, obj, client.ObjectKeyFromObject(obj), err)
		}
	}
}

// accessesOf returns one request per verb, group, resource (with its
// subresource) and resource name of the rules of g, in its namespace.
func accessesOf(g Grant) []authorizationv1.ResourceAttributes {
	var out []authorizationv1.ResourceAttributes
	for _, r := range g.Rules {
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, verb := range r.Verbs {
			for _, group := range r.APIGroups {
				for _, resource := range r.Resources {
					resource, subresource, _ := strings.Cut(resource, "/")
					for _, name := range names {
						out = append(out, authorizationv1.ResourceAttributes{
							Namespace: g.Namespace, Verb: verb, Group: group, Resource: resource, Subresource: subresource, Name: name,
						})
					}
				}
			}
		}
	}
	return out
}

// certFiles writes the client certificate and key of cfg as files of user
// in dir and returns a copy of cfg that names them.
func certFiles(t testing.TB, cfg *rest.Config, dir, user string) *rest.Config {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	cfg.CertFile, cfg.KeyFile = filepath.Join(dir, user+".crt"), filepath.Join(dir, user+".key")
	if err := os.WriteFile(cfg.CertFile, cfg.CertData, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg.KeyFile, cfg.KeyData, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.CertData, cfg.KeyData = nil, nil
	return cfg
}
