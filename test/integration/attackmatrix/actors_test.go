package attackmatrix

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/identityhub"
)

// The actors of the matrix, as its columns name them. "Own" cluster is
// cluster1 for each of them that is bound to a cluster; cluster2 is
// another.
const (
	// sharedBootstrap holds a token of the shared bootstrap ServiceAccount,
	// as `kubectl ocm hub init` hands it out; the hub auto-approves its
	// first joins.
	sharedBootstrap = "shared bootstrap token"
	// clusterBootstrap holds cluster1's cluster-bound bootstrap token
	// (`kubectl ocm hub token --cluster-name cluster1`), which registered
	// cluster1.
	clusterBootstrap = "cluster-bound bootstrap token"
	// agentCert holds cluster1's agent certificate.
	agentCert = "agent certificate"
	// agentToken holds a token of cluster1's token identity.
	agentToken = "agent token identity"
	// addonCert holds the certificate of add-on addon-csr's agent on
	// cluster1, with its default subject.
	addonCert = "add-on agent certificate"
	// nsEditor is bound to the edit ClusterRole in namespace cluster1.
	nsEditor = "cluster namespace editor"
	// templateAuthor may write AddOnTemplates and bind the add-ons' role
	// (identityhub.AddonRole) only.
	templateAuthor = "template author"
	// hubController holds a token of the hub controller's ServiceAccount.
	hubController = "hub controller's token"
	// importerToken holds a token of the cluster importer's ServiceAccount.
	importerToken = "importer's token"
	// tunnelToken holds a token of the hub tunnel's ServiceAccount, the
	// hub's process that parses what agents send.
	tunnelToken = "hub tunnel's token"
)

// actorSlugs are the columns of the matrix the test knows, each with a
// short name for the objects the actor creates.
var actorSlugs = map[string]string{
	sharedBootstrap: "sb", clusterBootstrap: "cb", agentCert: "ac", agentToken: "at", addonCert: "ad",
	nsEditor: "ne", templateAuthor: "ta", hubController: "hc", importerToken: "im", tunnelToken: "ht",
}

// The users the test grants the rights of two actors.
const (
	editorUser = "matrix:cluster1-editor"
	authorUser = "matrix:template-author"
)

// actor is one column of the matrix: a credential of the identity.
type actor struct {
	name string
	// slug is short, for the names of the objects the actor creates.
	slug string
	cfg  *rest.Config
	c    client.Client
}

// credential returns a credential of the actor name, as the product hands
// it out: client certificates with the user and groups the API server
// sees, or tokens of the real ServiceAccounts.
func (s *setup) credential(ctx context.Context, name string) (*rest.Config, error) {
	hub := s.h.Cluster
	sa := func(namespace, name string) (*rest.Config, error) {
		return hub.ConfigForServiceAccount(ctx, namespace, name, time.Hour)
	}
	switch name {
	case sharedBootstrap, clusterBootstrap:
		cluster := ""
		if name == clusterBootstrap {
			cluster = identityhub.Cluster1
		}
		tr, err := config.BootstrapToken(ctx, s.admin, cluster, time.Hour, fieldManager)
		if err != nil {
			return nil, err
		}
		return identityhub.TokenConfig(hub, tr.Token), nil
	case agentCert:
		return hub.ConfigForUser(identity.AgentUserName(identityhub.Cluster1, identityhub.AgentID), identity.AgentGroups(identityhub.Cluster1)...)
	case agentToken:
		return sa(identity.AgentTokenNamespace, identity.AgentTokenServiceAccount(identityhub.Cluster1))
	case addonCert:
		return hub.ConfigForUser(identity.AddonUserName(identityhub.Cluster1, identityhub.CSRAddon, template.AgentName(identityhub.CSRAddon)),
			identity.AddonDefaultGroups(identityhub.Cluster1, identityhub.CSRAddon)...)
	case nsEditor:
		return hub.ConfigForUser(editorUser)
	case templateAuthor:
		return hub.ConfigForUser(authorUser)
	case hubController:
		return sa(config.HubNamespace, "ocm-hub-controller")
	case importerToken:
		return sa(config.HubNamespace, "ocm-importer")
	case tunnelToken:
		return sa(config.HubNamespace, config.HubTunnelDeployment)
	}
	return nil, fmt.Errorf("no credential for actor %q", name)
}

// newActor returns the actor name with a client of cfg, which sends the
// matrix's requests at once.
func newActor(name, slug string, cfg *rest.Config) (*actor, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 500, 1000
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		return nil, err
	}
	return &actor{name: name, slug: slug, cfg: cfg, c: c}, nil
}
