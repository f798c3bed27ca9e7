package addonagent

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonagent "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/agent"
	addonhub "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub"
	registrationhub "github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

const (
	clusterName = "cluster1"
	otherName   = "cluster2"
	agentID     = "agent1"
	agentNS     = config.AgentNamespace
	// pollTimeout bounds every wait of the tests.
	pollTimeout = 60 * time.Second
)

// suite is the shared state of the ordered subtests.
type suite struct {
	hub, spoke   *framework.Cluster
	hubC, spokeC client.Client
}

// setup starts a hub and cluster1, installs what `hub init` and `join`
// install, runs the registration and add-on hub controllers, accepts
// cluster1 and cluster2 on the hub, writes cluster1's hub credential Secret
// and starts the add-on agent until the test ends.
func setup(t *testing.T) (context.Context, *suite) {
	t.Helper()
	ctx, env := hubtest.Start(t, 10*time.Minute, clusterName)
	s := &suite{hub: env.Cluster("hub"), spoke: env.Cluster(clusterName)}
	s.hubC, s.spokeC = s.hub.Client(), s.spoke.Client()
	hubtest.RunControllers(t, s.hub, 2,
		func(mgr ctrl.Manager) error { return registrationhub.SetupWithManager(mgr, registrationhub.Options{}) },
		func(mgr ctrl.Manager) error {
			return addonhub.SetupWithManager(mgr, addonhub.Options{Namespace: config.HubNamespace})
		})
	hubtest.AcceptClusters(ctx, t, s.hubC, clusterName, otherName)
	agenttest.Join(ctx, t, s.hub, s.spoke, config.AgentValues{ClusterName: clusterName}, agentID)
	agenttest.StartAddonAgent(t, s.spoke, addonagent.Options{})
	return ctx, s
}

// agentClient returns a hub client of cluster's agent.
func (s *suite) agentClient(t *testing.T, cluster string) client.Client {
	t.Helper()
	c, err := client.New(agenttest.AgentConfig(t, s.hub, cluster, agentID), client.Options{Scheme: apis.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// createAddon creates the ManagedClusterAddOn name in cluster's namespace
// and, playing the hub's deploy controller, writes status (registrations,
// namespace, health check) when not nil.
func (s *suite) createAddon(ctx context.Context, t *testing.T, cluster, name string, status *addonv1alpha1.ManagedClusterAddOnStatus) {
	t.Helper()
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name}}
	kit.MustCreate(ctx, t, s.hubC, mca)
	if status != nil {
		s.setStatus(ctx, t, cluster, name, func(st *addonv1alpha1.ManagedClusterAddOnStatus) { *st = *status })
	}
}

// setStatus changes the status of a ManagedClusterAddOn as the admin.
func (s *suite) setStatus(ctx context.Context, t *testing.T, cluster, name string, edit func(*addonv1alpha1.ManagedClusterAddOnStatus)) {
	t.Helper()
	framework.Eventually(ctx, t, pollTimeout, "status of ManagedClusterAddOn "+name+" written", func(ctx context.Context) (bool, error) {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := s.hubC.Get(ctx, types.NamespacedName{Namespace: cluster, Name: name}, mca); err != nil {
			return false, err
		}
		edit(&mca.Status)
		return true, s.hubC.Status().Update(ctx, mca)
	})
}

// waitCondition waits until condition typ of ManagedClusterAddOn name of
// cluster1 has status and reason, and returns it.
func (s *suite) waitCondition(ctx context.Context, t *testing.T, name, typ string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var c *metav1.Condition
	framework.Eventually(ctx, t, pollTimeout, "ManagedClusterAddOn "+name+" "+typ+"="+string(status)+" ("+reason+")", func(ctx context.Context) (bool, error) {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := s.hubC.Get(ctx, types.NamespacedName{Namespace: clusterName, Name: name}, mca); err != nil {
			return false, err
		}
		c = meta.FindStatusCondition(mca.Status.Conditions, typ)
		return c != nil && c.Status == status && c.Reason == reason, nil
	})
	return c
}
