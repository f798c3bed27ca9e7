package permissions

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/identityhub"
)

const (
	// bootstrapTokenID and bootstrapTokenSecret make the bootstrap token
	// (Kubernetes' format: [a-z0-9]{6}.[a-z0-9]{16}).
	bootstrapTokenID     = "perm01"
	bootstrapTokenSecret = "0123456789abcdef"
	// nobody is an authenticated user no one granted anything: what
	// every identity holds anyway, through system:authenticated.
	nobody = "permissions-test:nobody"
	// privilegedGroup is Kubernetes' system:masters, a candidate
	// organization the approval policy must never admit.
	privilegedGroup = "system:masters"
)

// reviewed is an identity as the API server authenticates it.
type reviewed struct {
	// label names the identity in the file.
	label string
	// user is what a SelfSubjectReview of its credential returned.
	user authenticationv1.UserInfo
}

// source is an identity to review: its label and a credential of it.
type source struct {
	label string
	cfg   func(context.Context) (*rest.Config, error)
}

// identities returns every identity the product creates or approves on h,
// as the API server authenticates a credential of it (SelfSubjectReview).
func (h *hub) identities(t *testing.T) []reviewed {
	t.Helper()
	var sources []source
	sa := func(label, namespace, name string) source {
		return source{label, func(ctx context.Context) (*rest.Config, error) {
			return h.cluster.ConfigForServiceAccount(ctx, namespace, name, time.Hour)
		}}
	}
	cert := func(label, user string, groups ...string) source {
		return source{label, func(context.Context) (*rest.Config, error) { return h.cluster.ConfigForUser(user, groups...) }}
	}

	// Registration: the bootstrap identities, then cluster1's agent with
	// every subject the approval policy admits, and its token identity.
	sources = append(sources, source{"bootstrap token in group " + identity.BootstrapTokenGroup, h.bootstrapToken})
	sources = append(sources, sa("cluster-bound bootstrap ServiceAccount of "+cluster1, identity.ClusterBootstrapNamespace, identity.ClusterBootstrapServiceAccount(cluster1)))
	// The bootstrap role is bound to the group of the cluster-bound
	// namespace, so its default ServiceAccount holds it too; admission
	// refuses its every write.
	sources = append(sources, sa("default ServiceAccount of "+identity.ClusterBootstrapNamespace, identity.ClusterBootstrapNamespace, "default"))
	for _, orgs := range admittedOrganizations(t) {
		sources = append(sources, cert(fmt.Sprintf("agent of %s: certificate O=%s", cluster1, strings.Join(orgs, ",")), identity.AgentUserName(cluster1, agentID), orgs...))
	}
	sources = append(sources, sa("agent of "+cluster1+": token identity", identity.AgentTokenNamespace, identity.AgentTokenServiceAccount(cluster1)))
	// The add-on agents of cluster1, with each driver.
	sources = append(sources, cert(fmt.Sprintf("add-on %s of %s: certificate (default subject)", csrAddon, cluster1),
		identity.AddonUserName(cluster1, csrAddon, template.AgentName(csrAddon)), identity.AddonDefaultGroups(cluster1, csrAddon)...))
	sources = append(sources, sa(fmt.Sprintf("add-on %s of %s: token ServiceAccount", tokenAddon, cluster1), cluster1, identity.AddonServiceAccount(tokenAddon)))
	// Every ServiceAccount the hub's manifests ship: the shared bootstrap
	// identity, the hub controller, the importer, the operator.
	for _, obj := range h.objects {
		if obj.GetKind() == "ServiceAccount" && obj.GetAPIVersion() == "v1" {
			sources = append(sources, sa("ServiceAccount "+obj.GetNamespace()+"/"+obj.GetName()+" (shipped)", obj.GetNamespace(), obj.GetName()))
		}
	}
	sources = append(sources, cert("an authenticated user granted nothing (baseline)", nobody))

	out := make([]reviewed, len(sources))
	for i, s := range sources {
		cfg, err := s.cfg(h.ctx)
		kit.Must(t, "a credential of "+s.label, err)
		var info authenticationv1.UserInfo
		h.poll(t, "the API server authenticates "+s.label, func(ctx context.Context) (bool, error) {
			info, err = whoAmI(ctx, cfg)
			return err == nil, nil
		})
		out[i] = reviewed{label: s.label, user: info}
	}
	return out
}

// admittedOrganizations returns, in order, each set of organizations (the
// groups of a certificate) that the approval policy (csr.Validate) admits
// in an agent certificate request of cluster1, out of every subset of
// candidates: the groups of both clusters, of every agent and of an
// add-on, system:authenticated and system:masters. A change of the policy
// changes which certificate subjects the file lists.
func admittedOrganizations(t *testing.T) [][]string {
	t.Helper()
	candidates := []string{
		identity.ClusterGroup(cluster1), identity.ManagedClustersGroup, identity.ClusterGroup(cluster2),
		identity.AddonClusterGroup(cluster1, csrAddon), identity.AddonGroup(csrAddon), identity.AuthenticatedGroup, privilegedGroup,
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	kit.Must(t, "generate a key", err)
	var admitted [][]string
	for mask := 1; mask < 1<<len(candidates); mask++ {
		var orgs []string
		for i, c := range candidates {
			if mask&(1<<i) != 0 {
				orgs = append(orgs, c)
			}
		}
		req := csr.Request{
			Name: "candidate", Cluster: cluster1, Requester: identity.AgentUserName(cluster1, agentID),
			SignerName:    certificatesv1.KubeAPIServerClientSignerName,
			Usages:        csr.AgentUsages(),
			CommonName:    identity.AgentUserName(cluster1, agentID),
			Organizations: orgs,
			PublicKey:     key.Public(),
		}
		if csr.Validate(req) == nil {
			admitted = append(admitted, orgs)
		}
	}
	if len(admitted) == 0 {
		t.Fatalf("the approval policy admits no agent certificate of %s with any of the organizations %v", cluster1, candidates)
	}
	slices.SortFunc(admitted, func(a, b []string) int { return strings.Compare(strings.Join(a, ","), strings.Join(b, ",")) })
	return admitted
}

// bootstrapToken creates a bootstrap token in identity.BootstrapTokenGroup,
// as an administrator does for agents that join with one (OCM's
// clusteradm), and returns a configuration that authenticates with it.
func (h *hub) bootstrapToken(ctx context.Context) (*rest.Config, error) {
	// The keys of a bootstrap token Secret, as Kubernetes defines them.
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceSystem, Name: "bootstrap-token-" + bootstrapTokenID},
		Type:       corev1.SecretTypeBootstrapToken,
		StringData: map[string]string{
			"token-id": bootstrapTokenID, "token-secret": bootstrapTokenSecret,
			"usage-bootstrap-authentication": "true",
			"auth-extra-groups":              identity.BootstrapTokenGroup,
		},
	}
	if err := h.admin.Create(ctx, secret); err != nil {
		return nil, err
	}
	return identityhub.TokenConfig(h.cluster, bootstrapTokenID+"."+bootstrapTokenSecret), nil
}

// whoAmI returns the user cfg authenticates as.
func whoAmI(ctx context.Context, cfg *rest.Config) (authenticationv1.UserInfo, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return authenticationv1.UserInfo{}, err
	}
	return review.Status.UserInfo, nil
}
