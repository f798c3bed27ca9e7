// Package agenttest runs a managed cluster's work agent in-process for the
// integration tests: as the klusterlet-agent ServiceAccount of the managed
// cluster, with the shipped agent RBAC, reaching the hub with a client
// certificate of the cluster's agent identity, written to the hub
// credential Secret as the registration agent would. Every permission
// decision is the API servers'. For the tests of registration itself, a
// Fleet (StartFleet) runs the shipped ocm-controller on a hub and managed
// clusters that join it with `kubectl ocm join`.
package agenttest

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonagent "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/agent"
	workagent "github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// AgentServiceAccount is the ServiceAccount the agent runs as, in
// config.AgentNamespace of the managed cluster.
const AgentServiceAccount = "klusterlet-agent"

// GrantWork binds the work role of the hub to the agent identity of cluster
// in its namespace, as the hub's registration controller does on accept.
func GrantWork(ctx context.Context, t testing.TB, hub client.Client, cluster string) {
	t.Helper()
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "open-cluster-management:managedcluster:" + cluster + ":work"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "open-cluster-management:managedcluster:work"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: identity.ClusterGroup(cluster)}},
	}
	if err := hub.Create(ctx, rb); err != nil {
		t.Fatalf("grant the work role to cluster %s: %v", cluster, err)
	}
}

// AgentConfig returns a hub client configuration of agent agentID of cluster.
func AgentConfig(t testing.TB, hub *framework.Cluster, cluster, agentID string) *rest.Config {
	t.Helper()
	cfg, err := hub.ConfigForUser(identity.AgentUserName(cluster, agentID), identity.ClusterGroup(cluster), identity.ManagedClustersGroup)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// WriteHubCredential writes (or rewrites, as a rotation does) the hub
// credential Secret of agent agentID of cluster on the managed cluster spoke.
func WriteHubCredential(ctx context.Context, t testing.TB, hub, spoke *framework.Cluster, cluster, agentID string) {
	t.Helper()
	cfg := AgentConfig(t, hub, cluster, agentID)
	data, err := kubeconfig.HubCredentialData(&kubeconfig.Info{Server: hub.Server(), CAData: hub.CAData()}, cluster, agentID, cfg.CertData, cfg.KeyData)
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: config.AgentNamespace, Name: operatorv1.HubKubeConfigSecret}}
	if _, err := ctrl.CreateOrUpdate(ctx, spoke.Client(), secret, func() error {
		secret.Data = data
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// Join installs on the managed cluster spoke what `join` installs for
// values (a placeholder bootstrap kubeconfig when values has none) and
// writes the hub credential Secret of agent agentID of values.ClusterName,
// as the registration agent would once the hub accepted it.
func Join(ctx context.Context, t testing.TB, hub, spoke *framework.Cluster, values config.AgentValues, agentID string) {
	t.Helper()
	if len(values.BootstrapKubeconfig) == 0 {
		values.BootstrapKubeconfig = []byte("unused")
	}
	objs, err := config.AgentObjects(values)
	if err != nil {
		t.Fatalf("render the agent objects of %s: %v", values.ClusterName, err)
	}
	if err := apply.Apply(ctx, spoke.Client(), objs, apply.Options{FieldManager: "agenttest"}); err != nil {
		t.Fatalf("apply the agent objects of %s: %v", values.ClusterName, err)
	}
	WriteHubCredential(ctx, t, hub, spoke, values.ClusterName, agentID)
}

// Setup registers agents with a manager.
type Setup = hubtest.Setup

// Run starts a manager on the managed cluster spoke authenticated as the
// klusterlet-agent ServiceAccount (the agent objects of `join` must be
// installed), as ocm-controller agent builds it, registers the agents of
// setup with it and runs it until the returned stop is called or t ends.
// logVerbosity sets the agents' log level in the test log. stop waits for
// the manager to finish and may be called more than once; setup may
// register the same agents again after a stop.
func Run(t *testing.T, spoke *framework.Cluster, logVerbosity int, setup Setup) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg, err := spoke.ConfigForServiceAccount(ctx, config.AgentNamespace, AgentServiceAccount, time.Hour)
	if err != nil {
		cancel()
		t.Fatalf("agent credentials: %v", err)
	}
	// Secrets are read directly: the agent may only read its own namespace.
	return hubtest.RunManager(ctx, t, cancel, cfg, manager.Options{
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	}, logVerbosity, "agents", setup)
}

// StartWorkAgent runs the work agent of spoke with opts (Namespace defaults
// to config.AgentNamespace) until the returned stop is called or t ends;
// stop waits for the agent to finish and may be called more than once.
func StartWorkAgent(t *testing.T, spoke *framework.Cluster, opts workagent.Options) (stop func()) {
	t.Helper()
	if opts.Namespace == "" {
		opts.Namespace = config.AgentNamespace
	}
	return Run(t, spoke, 1, func(mgr ctrl.Manager) error {
		agent, err := workagent.New(mgr, opts)
		if err != nil {
			return err
		}
		return agent.SetupWithManager(mgr)
	})
}

// StartAddonAgent runs the add-on agent of spoke with opts (Namespace
// defaults to config.AgentNamespace) until the returned stop is called or t
// ends; stop waits for the agent to finish and may be called more than once.
func StartAddonAgent(t *testing.T, spoke *framework.Cluster, opts addonagent.Options) (stop func()) {
	t.Helper()
	if opts.Namespace == "" {
		opts.Namespace = config.AgentNamespace
	}
	return Run(t, spoke, 2, func(mgr ctrl.Manager) error {
		agent, err := addonagent.New(mgr, opts)
		if err != nil {
			return err
		}
		return agent.SetupWithManager(mgr)
	})
}
