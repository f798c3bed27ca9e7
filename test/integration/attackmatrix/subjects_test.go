package attackmatrix

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509/pkix"
	"fmt"
	mathrand "math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/identityhub"
)

// The subject forms' test: how many subjects it generates, its seed, and
// how many of those the approval policy signs it tries on the API server.
const (
	subjectCount  = 5000
	subjectSeed   = 20250601
	subjectsTried = 16
	// fuzzNamespace holds the ManifestWork the subjects try to change.
	fuzzNamespace = "subject-forms"
	// fuzzAddon is the add-on the generated add-on subjects name.
	fuzzAddon = "helloworld"
)

// subject is a certificate subject: the user and groups the API server
// takes a client certificate for.
type subject struct {
	cn   string
	orgs []string
}

func (s subject) String() string { return fmt.Sprintf("CN=%q O=%q", s.cn, s.orgs) }

// testSubjectForms generates certificate subjects (common names and
// organizations of the registration protocol, lookalikes of them, and
// others, from a fixed seed) and asks the approval policy
// (pkg/registration/csr) whether the hub would sign each: as a cluster
// agent's first join by the auto-approved shared bootstrap identity, as
// its renewal by the subject itself, and as an add-on agent's request
// whose ManagedClusterAddOn names the subject. Every subject it would sign
// must be a cluster identity by the admission policies' rule
// (identity.IsClusterIdentity); and a sample of them, each a client
// certificate of that subject on the hub, granted by RBAC the update of a
// ManifestWork, must be refused any change of its spec by admission, which
// a user outside the rule is not.
func testSubjectForms(t *testing.T, s *setup) {
	ctx := s.h.Ctx
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	kit.Must(t, "generate a key", err)
	rng := mathrand.New(mathrand.NewPCG(subjectSeed, 1))
	var agents, addons []subject
	seen := map[string]bool{}
	for range subjectCount {
		sub := generateSubject(rng)
		if seen[sub.String()] {
			continue
		}
		seen[sub.String()] = true
		agent, addon := signs(sub, key.Public())
		if !agent && !addon {
			continue
		}
		if groups := append(slices.Clone(sub.orgs), identity.AuthenticatedGroup); !identity.IsClusterIdentity(sub.cn, groups) {
			t.Errorf("the approval policy signs %s, which the admission policies' rule does not take for a cluster identity", sub)
		}
		if agent {
			agents = append(agents, sub)
		} else {
			addons = append(addons, sub)
		}
	}
	t.Logf("of %d distinct generated subjects, the policy signs %d as a cluster agent's and %d as an add-on agent's", len(seen), len(agents), len(addons))
	if len(agents) == 0 || len(addons) == 0 {
		t.Fatalf("the generator reached %d agent and %d add-on subjects the policy signs; it must reach both", len(agents), len(addons))
	}
	// A sample of each, chosen by the seed.
	rng.Shuffle(len(agents), func(i, j int) { agents[i], agents[j] = agents[j], agents[i] })
	rng.Shuffle(len(addons), func(i, j int) { addons[i], addons[j] = addons[j], addons[i] })
	tried := slices.Concat(agents[:min(len(agents), subjectsTried/2)], addons[:min(len(addons), subjectsTried/2)])

	// A ManifestWork that every authenticated user may update by RBAC, so
	// that admission alone stands between a subject and its spec.
	kit.MustCreate(ctx, t, s.admin, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fuzzNamespace}})
	kit.MustCreate(ctx, t, s.admin, newWork(fuzzNamespace))
	kit.MustCreate(ctx, t, s.admin, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: fuzzNamespace, Name: "update-works"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{workv1.GroupVersion.Group}, Resources: []string{"manifestworks"}, Verbs: []string{"get", "update"}}}})
	kit.MustCreate(ctx, t, s.admin, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: fuzzNamespace, Name: "update-works"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "update-works"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: identity.AuthenticatedGroup}}})
	change := addManifestTo(fuzzNamespace)
	cfg, err := s.h.Cluster.ConfigForUser("subject-forms:control")
	kit.Must(t, "a certificate of the control user", err)
	control := identityhub.ClientFor(t, cfg)
	s.h.Poll(t, "a user outside the rule changing the work's spec", func(ctx context.Context) (bool, error) {
		err := change(ctx, s, control)
		return err == nil, nil
	})

	var wg sync.WaitGroup
	for _, sub := range tried {
		wg.Go(func() {
			cfg, err := s.h.Cluster.ConfigForUser(sub.cn, sub.orgs...)
			if err != nil {
				t.Errorf("a certificate of %s: %v", sub, err)
				return
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Errorf("a client of %s: %v", sub, err)
				return
			}
			review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
			if err != nil {
				t.Errorf("%s: who am I: %v", sub, err)
				return
			}
			if u := review.Status.UserInfo; u.Username != sub.cn || !slices.Equal(groupSet(u.Groups), groupSet(append(slices.Clone(sub.orgs), identity.AuthenticatedGroup))) {
				t.Errorf("the API server takes the certificate of %s for %q in %q", sub, u.Username, u.Groups)
			}
			c, err := clientOf(cfg)
			if err != nil {
				t.Errorf("a client of %s: %v", sub, err)
				return
			}
			err = change(ctx, s, c)
			what := fmt.Sprintf("%s, which the approval policy signs, changes a ManifestWork's spec: want admission to refuse it", sub)
			assert.True(t, apierrors.IsForbidden(err), "%s, got %v", what, err)
			assert.ErrorContains(t, err, "may change only the finalizers of ManifestWork "+workName, what)
		})
	}
	wg.Wait()
}

// groupSet returns groups sorted, each once.
func groupSet(groups []string) []string {
	out := slices.Clone(groups)
	slices.Sort(out)
	return slices.Compact(out)
}

// addManifestTo returns a write, as c's user with dryRun=All, of the
// ManifestWork workName of namespace that adds a binding of cluster-admin
// to its manifests.
func addManifestTo(namespace string) func(ctx context.Context, s *setup, c client.Client) error {
	w := change("add a cluster-admin binding to its manifests", namespace, workName, addManifest)
	return w.forms[0]
}

// signs reports whether the approval policy signs sub for cluster1: as a
// cluster agent's certificate (a first join by the auto-approved shared
// bootstrap identity of a cluster never accepted, or a renewal by the
// subject itself of the accepted cluster), or as an add-on agent's (filed
// by cluster1's agent, its ManagedClusterAddOn naming the subject).
func signs(sub subject, pub any) (agent, addon bool) {
	req := csr.Request{
		Name: "generated", RequestUID: "generated", Cluster: cluster1,
		SignerName: certificatesv1.KubeAPIServerClientSignerName,
		Usages:     csr.AgentUsages(),
		CommonName: sub.cn, Organizations: sub.orgs, PublicKey: pub,
	}
	first := req
	first.Requester = identity.BootstrapUser
	firstAction, _ := csr.Decide(first, csr.Facts{AutoApproveUsers: []string{identity.BootstrapUser}})
	renewal := req
	renewal.Requester = sub.cn
	renewalAction, _ := csr.Decide(renewal, csr.Facts{ClusterAccepted: true, AcceptedBefore: true})
	agent = firstAction != csr.LeavePending || renewalAction != csr.LeavePending

	addonReq := req
	addonReq.Addon, addonReq.Requester = fuzzAddon, agentUser(cluster1)
	addon, _ = csr.DecideAddon(addonReq, csr.AddonFacts{ClusterAccepted: true, AddonExists: true,
		Subjects: []pkix.Name{{CommonName: sub.cn, Organization: sub.orgs}}})
	return agent, addon
}

// generateSubject returns, half the time, the subject of one of the
// protocol's agents (a cluster agent of cluster1 with any agent ID, or an
// add-on agent with some of its groups) changed up to twice (a lookalike
// of its name or of a group, a group added or dropped, another cluster),
// and otherwise one made of the protocol's names and groups, others, and
// lookalikes of each.
func generateSubject(rng *mathrand.Rand) subject {
	agentIDs := []string{identityhub.AgentID, "agent2", "a", "agent 1", "агент", "..", "*", "a/b", "x.y-z", strings.Repeat("a", 200)}
	agentID := agentIDs[rng.IntN(len(agentIDs))]
	groups := []string{
		identity.ClusterGroup(cluster1), identity.ManagedClustersGroup, identity.ClusterGroup(cluster2),
		identity.AddonClusterGroup(cluster1, fuzzAddon), identity.AddonGroup(fuzzAddon), identity.AddonClusterGroup(cluster2, fuzzAddon),
		identity.AuthenticatedGroup, "system:masters", identity.BootstrapTokenGroup, "system:serviceaccounts", "developers",
	}
	if rng.IntN(2) == 0 {
		var sub subject
		if rng.IntN(2) == 0 {
			sub = subject{cn: identity.AgentUserName(cluster1, agentID), orgs: identity.AgentGroups(cluster1)}
		} else {
			sub.cn = identity.AddonUserName(cluster1, fuzzAddon, agentID)
			for _, g := range identity.AddonDefaultGroups(cluster1, fuzzAddon) {
				if rng.IntN(2) == 0 {
					sub.orgs = append(sub.orgs, g)
				}
			}
		}
		for range rng.IntN(3) {
			switch rng.IntN(5) {
			case 0:
				sub.cn = forge(rng, sub.cn)
			case 1:
				if len(sub.orgs) > 0 {
					i := rng.IntN(len(sub.orgs))
					sub.orgs[i] = forge(rng, sub.orgs[i])
				}
			case 2:
				sub.orgs = append(sub.orgs, groups[rng.IntN(len(groups))])
			case 3:
				if len(sub.orgs) > 0 {
					sub.orgs = slices.Delete(sub.orgs, 0, 1)
				}
			case 4:
				sub.cn = strings.Replace(sub.cn, cluster1, cluster2, 1)
			}
		}
		rng.Shuffle(len(sub.orgs), func(i, j int) { sub.orgs[i], sub.orgs[j] = sub.orgs[j], sub.orgs[i] })
		return sub
	}
	names := []string{
		identity.AgentUserName(cluster1, agentID), identity.AgentUserName(cluster2, agentID),
		identity.AddonUserName(cluster1, fuzzAddon, agentID), identity.AddonUserName(cluster2, fuzzAddon, agentID),
		identity.AddonUserName(cluster1, "other", agentID),
		identity.ClusterGroup(cluster1), identity.ManagedClustersGroup, identity.Prefix, identity.Prefix + cluster1,
		identity.BootstrapUser, identity.ClusterBootstrapUser(cluster1), identity.AgentTokenUserName(cluster1),
		"system:admin", "system:kube-controller-manager", "admin", "",
	}
	sub := subject{cn: lookalike(rng, names[rng.IntN(len(names))])}
	for range rng.IntN(5) {
		sub.orgs = append(sub.orgs, lookalike(rng, groups[rng.IntN(len(groups))]))
	}
	return sub
}

// lookalike returns s, or, one time in three, forge(s).
func lookalike(rng *mathrand.Rand, s string) string {
	if rng.IntN(3) != 0 {
		return s
	}
	return forge(rng, s)
}

// forge returns s changed the way a forged name would be: another case, a
// space, a separator more, letters that look like others (rn for m,
// Cyrillic for Latin), cut short, or without its system: prefix.
func forge(rng *mathrand.Rand, s string) string {
	if s == "" {
		return " "
	}
	switch rng.IntN(9) {
	case 0:
		return strings.ToUpper(s[:1]) + s[1:]
	case 1:
		return s + " "
	case 2:
		return " " + s
	case 3:
		return s + ":"
	case 4:
		return strings.Replace(s, ":", "::", 1)
	case 5:
		// "rn" looks like "m".
		return strings.Replace(s, "management", "rnanagement", 1)
	case 6:
		// Cyrillic small letters dze and o look like Latin s and o.
		return strings.NewReplacer("s", "\u0455", "o", "\u043e").Replace(s)
	case 7:
		return s[:rng.IntN(len(s))]
	}
	return strings.TrimPrefix(s, "system:")
}

// clientOf returns a client with the project's scheme for cfg.
func clientOf(cfg *rest.Config) (client.Client, error) {
	return client.New(cfg, client.Options{Scheme: apis.Scheme})
}
