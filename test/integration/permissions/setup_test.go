package permissions

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/identityhub"
)

// The clusters and add-ons the hub is set up with (identityhub): cluster1
// registers through the bootstrap flow with the token driver, so that both
// its certificate and its token identity hold rights; cluster2 is accepted
// by the administrator and is "another cluster" to cluster1's identities.
const (
	cluster1   = identityhub.Cluster1
	cluster2   = identityhub.Cluster2
	agentID    = identityhub.AgentID
	csrAddon   = identityhub.CSRAddon
	tokenAddon = identityhub.TokenAddon
)

// hub is the hub the identities are reviewed on.
type hub struct {
	ctx     context.Context
	cluster *framework.Cluster
	admin   client.Client
	// objects are the shipped manifests installed on the hub.
	objects []*unstructured.Unstructured
}

// startHub starts the hub of identityhub.Start.
func startHub(t *testing.T) *hub {
	t.Helper()
	h := identityhub.Start(t, 5*time.Minute, identityhub.Options{})
	return &hub{ctx: h.Ctx, cluster: h.Cluster, admin: h.Admin, objects: h.Objects}
}

// poll waits until cond holds.
func (h *hub) poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	framework.Eventually(h.ctx, t, identityhub.PollTimeout, what, cond)
}
