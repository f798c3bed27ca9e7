package selfmanaged

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
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
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

const (
	// clusterName is the managed cluster the add-on is installed on;
	// otherName is accepted on the hub only.
	clusterName = "cluster1"
	otherName   = "cluster2"
	// pollTimeout bounds every wait.
	pollTimeout = 60 * time.Second
)

// selfRun is the environment of the steps and what each passes on.
type selfRun struct {
	ctx          context.Context
	hub, spoke   *framework.Cluster
	hubC, spokeC client.Client
	// m is the add-on's manager.
	m *manager
	// cmaUID is the UID of the manager's ClusterManagementAddOn.
	cmaUID string
	// secret is the add-on's hub credential Secret on cluster1.
	secret *corev1.Secret
}

// setup starts the hub and cluster1, installs what `hub init` and `join`
// install, runs the registration and add-on hub controllers, accepts
// cluster1 and cluster2, and runs cluster1's work and add-on agents.
func setup(t *testing.T) *selfRun {
	t.Helper()
	ctx, env := hubtest.Start(t, 10*time.Minute, clusterName)
	r := &selfRun{ctx: ctx, hub: env.Cluster("hub"), spoke: env.Cluster(clusterName)}
	r.hubC, r.spokeC = r.hub.Client(), r.spoke.Client()
	hubtest.RunControllers(t, r.hub, 2,
		func(mgr ctrl.Manager) error { return registrationhub.SetupWithManager(mgr, registrationhub.Options{}) },
		func(mgr ctrl.Manager) error { return addonhub.SetupWithManager(mgr, addonhub.Options{}) })
	hubtest.AcceptClusters(ctx, t, r.hubC, clusterName, otherName)
	agenttest.Join(ctx, t, r.hub, r.spoke, config.AgentValues{ClusterName: clusterName}, "agent1")
	agenttest.StartWorkAgent(t, r.spoke, workagent.Options{StatusSyncInterval: time.Second})
	agenttest.StartAddonAgent(t, r.spoke, addonagent.Options{})
	return r
}

// waitCondition waits until condition typ of the add-on's
// ManagedClusterAddOn on cluster1, read through the project's v1alpha1
// types, is status with reason, and returns it.
func (r *selfRun) waitCondition(t *testing.T, typ string, status metav1.ConditionStatus, reason string) *metav1.Condition {
	t.Helper()
	var c *metav1.Condition
	r.poll(t, "ManagedClusterAddOn "+addonName+" "+typ+"="+string(status)+" ("+reason+")", func(ctx context.Context) (bool, error) {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := r.hubC.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: addonName}, mca); err != nil {
			return false, err
		}
		c = meta.FindStatusCondition(mca.Status.Conditions, typ)
		return c != nil && c.Status == status && c.Reason == reason, nil
	})
	return c
}

// create creates obj with c.
func (r *selfRun) create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	kit.Must(t, "create "+obj.GetObjectKind().GroupVersionKind().Kind+" "+obj.GetNamespace()+"/"+obj.GetName(), c.Create(r.ctx, obj))
}

// poll waits until cond holds.
func (r *selfRun) poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	framework.Eventually(r.ctx, t, pollTimeout, what, cond)
}
