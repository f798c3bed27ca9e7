package benchkit

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	workagent "github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig/managedcluster"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// workAgentServiceAccount is the ServiceAccount the in-process work agents
// run as on the shared managed cluster, in config.AgentNamespace, with the
// RBAC `kubectl ocm join` installs for the agent.
const workAgentServiceAccount = "klusterlet-agent"

// WorkAgentSecret is the hub credential Secret, in config.AgentNamespace of
// the shared managed cluster, of the in-process work agent of cluster.
func WorkAgentSecret(cluster string) string { return "hub-kubeconfig-" + cluster }

// WorkAgentID is the agent ID of the in-process work agent of cluster: its
// cluster's name. Real clusters' agent IDs differ from one another (OCM's
// are random per Klusterlet); on one shared managed cluster they must, or
// each agent would count the others' AppliedManifestWorks as its own.
func WorkAgentID(cluster string) string { return cluster }

// WorkAgents are real work agents (controllers/work/agent), one for each of
// a set of registered clusters, run in the benchmark process against one
// shared managed API server (see StartWorkAgents).
type WorkAgents struct {
	// Spoke is the managed cluster every agent applies to.
	Spoke string
	// HubURLs are the hub addresses the agents reach the hub at, by cluster.
	HubURLs map[string]string
}

// StartWorkAgents runs the real work agent of each of clusters (registered
// on f's hub and accepted, so that the hub grants their agent identities
// their cluster namespaces) in this process, all applying to the managed
// cluster spoke of f, until b ends. opts are every agent's options; the
// namespace, hub credential Secret, cluster name and managed cluster are
// set here.
//
// What `kubectl ocm join` installs on the managed cluster (CRDs, namespace,
// ServiceAccount and RBAC of the agent) is applied once, without the agent
// Deployment and the Klusterlet, so that the component runner starts no
// agent process. The agents share what an agent process would otherwise
// build once per cluster and that does not depend on the cluster: one
// controller-runtime manager on the managed cluster as the agent's
// ServiceAccount, with one cache (AppliedManifestWorks), one client and one
// connection pool, passed to every agent as its managed cluster
// (workagent.Options.ManagedCluster, as `ocm-controller agent` shares it
// between its registration and work agents). What is each cluster's own is
// left to each agent: its hub credential Secret (a client certificate of
// the cluster's agent identity, system:open-cluster-management:<cluster>:<id>
// in the cluster's groups, issued by the hub's CA), its hub session (a
// watch of its cluster namespace, its own TLS connection), its work queue,
// appliers and watches of the applied objects.
//
// Each agent reaches the hub at a port of its own, a framework.Proxy in this
// process to the hub's address. The agent names its
// AppliedManifestWorks (cluster-scoped) after a hash of the hub's URL and
// the work's name, so that on one managed cluster the agents of clusters
// whose works share a name (those of one ManifestWorkReplicaSet) would write
// the same AppliedManifestWork; real clusters each keep their own. A URL of
// its own gives each agent a hub hash of its own; the proxy copies bytes
// and leaves TLS to the agent and the hub.
func StartWorkAgents(ctx context.Context, b *testing.B, f *Fleet, spoke string, clusters []string, opts workagent.Options) *WorkAgents {
	b.Helper()
	sc := f.Env.Cluster(spoke)
	installWorkAgentObjects(ctx, b, sc.Client(), spoke)
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var proxies []*framework.Proxy
	var mgrDone chan error
	b.Cleanup(func() {
		cancel()
		if mgrDone != nil {
			if err := <-mgrDone; err != nil {
				b.Errorf("in-process work agents: %v", err)
			}
		}
		for _, p := range proxies {
			_ = p.Close()
		}
	})

	hubAddr, err := hostPort(f.Hub.Server())
	if err != nil {
		b.Fatal(err)
	}
	w := &WorkAgents{Spoke: spoke, HubURLs: map[string]string{}}
	for _, cluster := range clusters {
		p, err := framework.StartProxy(hubAddr)
		if err != nil {
			b.Fatalf("hub proxy of the work agent of %s: %v", cluster, err)
		}
		proxies = append(proxies, p)
		w.HubURLs[cluster] = "https://" + p.Addr()
		writeWorkAgentCredential(ctx, b, f, sc.Client(), cluster, w.HubURLs[cluster])
	}

	saCfg, err := sc.ConfigForServiceAccount(ctx, config.AgentNamespace, workAgentServiceAccount, time.Hour)
	if err != nil {
		b.Fatalf("credentials of ServiceAccount %s/%s on %s: %v", config.AgentNamespace, workAgentServiceAccount, spoke, err)
	}
	mo := manager.Options{
		Scheme:                 apis.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Logger:                 logr.Discard(),
		// Every agent registers an AppliedManifestWork controller of the
		// same name.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
		// As ocm-controller agent: Secrets are read directly (the agent may
		// read its own namespace only), and the cache keeps only what the
		// agents read.
		Client:                  client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		GracefulShutdownTimeout: ptr.To(10 * time.Second),
	}
	managedcluster.TrimCache(&mo.Cache)
	mgr, err := ctrl.NewManager(saCfg, mo)
	if err != nil {
		b.Fatalf("manager of the in-process work agents on %s: %v", spoke, err)
	}
	for _, cluster := range clusters {
		o := opts
		o.Namespace = config.AgentNamespace
		o.HubKubeconfigSecret = WorkAgentSecret(cluster)
		o.ClusterName = cluster
		o.ManagedCluster = mgr
		agent, err := workagent.New(mgr, o)
		if err != nil {
			b.Fatalf("work agent of %s: %v", cluster, err)
		}
		if err := agent.SetupWithManager(mgr); err != nil {
			b.Fatalf("work agent of %s: %v", cluster, err)
		}
	}
	mgrDone = make(chan error, 1)
	go func() { mgrDone <- mgr.Start(runCtx) }()
	return w
}

// installWorkAgentObjects applies on the managed cluster what `kubectl ocm
// join` installs there, except the agent Deployment and the Klusterlet, and
// waits until AppliedManifestWorks can be created. kube-apiserver holds
// every create of a custom resource for 2 s while its CRD has been
// Established for less than 2 s; a server-side dry-run create pays that
// here, as the benchmark's hub warm-up does, rather than in the first works
// the agents apply.
func installWorkAgentObjects(ctx context.Context, b *testing.B, c client.Client, spoke string) {
	b.Helper()
	objs, err := config.AgentObjects(config.AgentValues{ClusterName: spoke, BootstrapKubeconfig: []byte("unused")})
	if err != nil {
		b.Fatalf("render the agent objects: %v", err)
	}
	keep := objs[:0]
	for _, o := range objs {
		if k := o.GetKind(); k != "Deployment" && k != "Klusterlet" {
			keep = append(keep, o)
		}
	}
	if err := apply.Apply(ctx, c, keep, apply.Options{}); err != nil {
		b.Fatalf("apply the agent objects on %s: %v", spoke, err)
	}
	amw := &workv1.AppliedManifestWork{ObjectMeta: metav1.ObjectMeta{Name: "bench-warm-up"},
		Spec: workv1.AppliedManifestWorkSpec{HubHash: "bench", ManifestWorkName: "warm-up"}}
	Poll(ctx, b, FastPoll, time.Minute, "AppliedManifestWorks to be served on "+spoke, func(ctx context.Context) (bool, error) {
		return true, c.Create(ctx, amw.DeepCopy(), client.DryRunAll)
	})
}

// writeWorkAgentCredential writes the hub credential Secret of the work
// agent of cluster, as the registration agent would once the hub signed its
// certificate: a client certificate of the agent identity of cluster, and a
// kubeconfig for hubURL with the hub's CA.
func writeWorkAgentCredential(ctx context.Context, b *testing.B, f *Fleet, spoke client.Client, cluster, hubURL string) {
	b.Helper()
	agentID := WorkAgentID(cluster)
	cfg, err := f.Hub.ConfigForUser(identity.AgentUserName(cluster, agentID), identity.ClusterGroup(cluster), identity.ManagedClustersGroup)
	if err != nil {
		b.Fatal(err)
	}
	data, err := kubeconfig.HubCredentialData(&kubeconfig.Info{Server: hubURL, CAData: f.Hub.CAData()}, cluster, agentID, cfg.CertData, cfg.KeyData)
	if err != nil {
		b.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: config.AgentNamespace, Name: WorkAgentSecret(cluster)}, Data: data}
	if err := spoke.Create(ctx, secret); err != nil {
		b.Fatalf("write the hub credential of the work agent of %s: %v", cluster, err)
	}
}

// hostPort returns the host:port of the URL server.
func hostPort(server string) (string, error) {
	u, err := url.Parse(server)
	if err != nil {
		return "", fmt.Errorf("parse %q: %w", server, err)
	}
	if u.Port() == "" {
		return "", fmt.Errorf("%q names no port", server)
	}
	return u.Host, nil
}
