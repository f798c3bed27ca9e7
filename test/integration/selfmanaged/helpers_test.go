package selfmanaged

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonagent "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/agent"
	addonhub "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub"
	registrationhub "github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub"
	workagent "github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/integration/internal/agenttest"
	"github.com/kubectl-ocm/kubectl-ocm/test/integration/internal/hubtest"
)

const (
	// clusterName is the managed cluster the add-on is installed on;
	// otherName is accepted on the hub only.
	clusterName = "cluster1"
	otherName   = "cluster2"
	// pollTimeout bounds every wait.
	pollTimeout = 60 * time.Second
)

// suite is the environment shared by the steps.
type suite struct {
	ctx          context.Context
	hub, spoke   *framework.Cluster
	hubC, spokeC client.Client
}

// setup starts the hub and cluster1, installs what `hub init` and `join`
// install, runs the registration and add-on hub controllers, accepts
// cluster1 and cluster2, and runs cluster1's work and add-on agents.
func setup(t *testing.T) *suite {
	t.Helper()
	framework.SkipIfShort(t)
	env := framework.StartForTest(t, "hub", clusterName)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	s := &suite{ctx: ctx, hub: env.Cluster("hub"), spoke: env.Cluster(clusterName)}
	s.hubC, s.spokeC = s.hub.Client(), s.spoke.Client()

	hubtest.Install(ctx, t, s.hubC)
	hubtest.RunControllers(t, s.hub, 2,
		func(mgr ctrl.Manager) error { return registrationhub.SetupWithManager(mgr, registrationhub.Options{}) },
		func(mgr ctrl.Manager) error { return addonhub.SetupWithManager(mgr, addonhub.Options{}) })
	for _, c := range []string{clusterName, otherName} {
		s.create(t, s.hubC, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: c}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}})
	}
	for _, c := range []string{clusterName, otherName} {
		s.poll(t, "cluster "+c+" accepted", func(ctx context.Context) (bool, error) {
			mc := &clusterv1.ManagedCluster{}
			err := s.hubC.Get(ctx, client.ObjectKey{Name: c}, mc)
			return err == nil && mc.IsAccepted(), err
		})
	}
	agentObjs, err := config.AgentObjects(config.AgentValues{ClusterName: clusterName, BootstrapKubeconfig: []byte("unused")})
	must(t, "render agent objects", err)
	must(t, "apply agent objects", apply.Apply(ctx, s.spokeC, agentObjs, apply.Options{FieldManager: "selfmanaged-test"}))
	agenttest.WriteHubCredential(ctx, t, s.hub, s.spoke, clusterName, "agent1")
	agenttest.StartWorkAgent(t, s.spoke, workagent.Options{StatusSyncInterval: time.Second})
	agenttest.Run(t, s.spoke, 2, func(mgr ctrl.Manager) error {
		agent, err := addonagent.New(mgr, addonagent.Options{Namespace: config.AgentNamespace})
		if err != nil {
			return err
		}
		return agent.SetupWithManager(mgr)
	})
	return s
}

// waitCondition waits until condition typ of the add-on's
// ManagedClusterAddOn on cluster1, read through the project's v1alpha1
// types, is status with reason, and returns it.
func (s *suite) waitCondition(t *testing.T, typ string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var c *metav1.Condition
	s.poll(t, "ManagedClusterAddOn "+addonName+" "+typ+"="+string(status)+" ("+reason+")", func(ctx context.Context) (bool, error) {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := s.hubC.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: addonName}, mca); err != nil {
			return false, err
		}
		c = meta.FindStatusCondition(mca.Status.Conditions, typ)
		return c != nil && c.Status == status && c.Reason == reason, nil
	})
	return c
}

// create creates obj with c.
func (s *suite) create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	must(t, "create "+obj.GetObjectKind().GroupVersionKind().Kind+" "+obj.GetNamespace()+"/"+obj.GetName(), c.Create(s.ctx, obj))
}

// poll waits until cond holds.
func (s *suite) poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	framework.Eventually(s.ctx, t, pollTimeout, what, cond)
}

// must fails t when err is set.
func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
