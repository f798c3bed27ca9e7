package benchkit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	regcsr "github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/lease"
)

// Identities of the simulated agents.
const (
	// SimBootstrapUser is the bootstrap identity the simulated agents join
	// with: a client certificate in the bootstrap group, listed in the
	// ClusterManager's autoApproveUsers so that the hub approves its requests.
	SimBootstrapUser = identity.BootstrapTokenUserPrefix + "bench-simulated-agents"
	// simAgentID is the agent ID in every simulated agent's certificate.
	simAgentID = "bench"
	// SimConcurrency bounds the simulated agents registering at once.
	SimConcurrency = 16
	// simTimeout bounds each step of one simulated registration.
	simTimeout = 3 * time.Minute
)

// SimHub is what every simulated agent shares: the hub's address, CA and
// REST mapping, a bootstrap client and the hub admin (who accepts clusters).
type SimHub struct {
	// ServeWorks, when set before StartSimAgents, makes every agent also act
	// as its cluster's work agent (see SimAgent.serveWorks).
	ServeWorks bool
	// ServeAddonRegistrations, when set before StartSimAgents, makes every
	// agent also obtain its add-ons' hub certificates (see
	// SimAgent.serveAddonRegistrations).
	ServeAddonRegistrations bool

	server    string
	ca        []byte
	mapper    meta.RESTMapper
	bootstrap client.Client
	admin     client.Client
	// renewals and failures count lease renewals after registration.
	renewals, failures atomic.Int64
	// leaseLatency times the successful renewals of the renew loops.
	leaseLatency LatencyWindow
	// works and workFailures count the work status writes of ServeWorks.
	works, workFailures atomic.Int64
	// addonCerts and addonFailures count the add-on certificates of
	// ServeAddonRegistrations issued and given up on.
	addonCerts, addonFailures atomic.Int64
}

// SimAgent is a lightweight stand-in for one cluster's registration agent
// that speaks the real protocol to the hub, without a managed cluster: it
// creates its ManagedCluster and a CSR as the bootstrap identity, gets the
// certificate the hub approves and kube-controller-manager signs, and with
// that certificate waits for the hub's acceptance and lease, reports Joined
// and Available, and renews the lease once per lease duration. With
// SimHub.ServeWorks it also acknowledges the ManifestWorks of its cluster
// namespace as a work agent would, and with SimHub.ServeAddonRegistrations
// it files the certificate requests of its add-ons as the add-on
// registration agent does.
type SimAgent struct {
	cluster string
	// hub acts as the agent's own certificate identity.
	hub client.WithWatch
	// leaseDuration is the cluster's lease duration as of the last renewal.
	leaseDuration time.Duration
	// lease renews the cluster's lease as the real agent does.
	lease lease.Renewer
}

// NewSimHub prepares the shared parts of the simulated agents of f's hub.
func NewSimHub(b *testing.B, f *Fleet) *SimHub {
	b.Helper()
	cfg, err := f.Hub.ConfigForUser(SimBootstrapUser, identity.BootstrapTokenGroup)
	if err != nil {
		b.Fatal(err)
	}
	h := &SimHub{server: f.Hub.Server(), ca: f.Hub.CAData(), mapper: f.HubClient.RESTMapper(), admin: f.HubClient}
	if h.bootstrap, err = client.New(cfg, client.Options{Scheme: apis.Scheme, Mapper: h.mapper}); err != nil {
		b.Fatal(err)
	}
	return h
}

// TakeLeaseLatency summarizes how long the agents' lease renewals took
// since the last call, from the start of a renewal to the hub's answer, and
// starts a new window.
func (h *SimHub) TakeLeaseLatency() Summary { return h.leaseLatency.Take() }

// StartSimAgents registers clusters with simulated agents, SimConcurrency at
// a time, and keeps each one renewing its lease (and, with h.ServeWorks,
// acknowledging its works, with h.ServeAddonRegistrations obtaining its
// add-ons' certificates) until b ends. It returns once every agent has
// reported Joined and Available, failing b if any cannot.
func StartSimAgents(ctx context.Context, b *testing.B, h *SimHub, clusters []string) {
	b.Helper()
	runCtx, loops := h.runUntilCleanup(ctx, b)
	sem := make(chan struct{}, SimConcurrency)
	errs := make([]error, len(clusters))
	var reg sync.WaitGroup
	for i, cluster := range clusters {
		reg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = h.start(runCtx, cluster, SlowPoll, loops)
		})
	}
	reg.Wait()
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
}

// StartSimAgent registers one cluster with a simulated agent as
// StartSimAgents does, polling its CSR and acceptance every FastPoll so
// that the time it takes is a join's, and returns once the cluster is
// Joined and Available. stop ends that agent alone, as a stopped agent: its
// lease is no longer renewed and its works no longer acknowledged.
func StartSimAgent(ctx context.Context, b *testing.B, h *SimHub, cluster string) (stop func()) {
	b.Helper()
	runCtx, loops := h.runUntilCleanup(ctx, b)
	agentCtx, cancel := context.WithCancel(runCtx)
	if err := h.start(agentCtx, cluster, FastPoll, loops); err != nil {
		cancel()
		b.Fatal(err)
	}
	return cancel
}

// runUntilCleanup returns the context the loops of agents started now run
// in and the group that tracks them; both end when b does, before the
// runner and the control planes stop, and the agents' counts are logged.
func (h *SimHub) runUntilCleanup(ctx context.Context, b *testing.B) (context.Context, *sync.WaitGroup) {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	loops := &sync.WaitGroup{}
	b.Cleanup(func() {
		cancel()
		loops.Wait()
		b.Logf("simulated agents: %d lease renewals, %d failed", h.renewals.Load(), h.failures.Load())
		if h.ServeWorks {
			b.Logf("simulated agents: %d work status writes, %d failed", h.works.Load(), h.workFailures.Load())
		}
		if h.ServeAddonRegistrations {
			b.Logf("simulated agents: %d add-on certificates issued, %d requests given up", h.addonCerts.Load(), h.addonFailures.Load())
		}
	})
	return runCtx, loops
}

// start registers cluster, polling every interval, and starts its agent's
// loops in loops until ctx ends.
func (h *SimHub) start(ctx context.Context, cluster string, interval time.Duration, loops *sync.WaitGroup) error {
	a, err := registerSimAgent(ctx, h, cluster, interval)
	if err != nil {
		return fmt.Errorf("simulated agent of %s: %w", cluster, err)
	}
	loops.Go(func() { a.renewLoop(ctx, h) })
	if h.ServeWorks {
		if err := a.serveWorks(ctx, h, loops); err != nil {
			return fmt.Errorf("simulated work agent of %s: %w", cluster, err)
		}
	}
	if h.ServeAddonRegistrations {
		if err := a.serveAddonRegistrations(ctx, h, loops); err != nil {
			return fmt.Errorf("simulated add-on registration of %s: %w", cluster, err)
		}
	}
	return nil
}

// registerSimAgent runs the first join of cluster, polling every interval,
// and returns its agent once it has reported Joined and Available.
func registerSimAgent(ctx context.Context, h *SimHub, cluster string, interval time.Duration) (*SimAgent, error) {
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}
	err := h.bootstrap.Create(ctx, mc)
	rejoin := apierrors.IsAlreadyExists(err)
	if err != nil && !rejoin {
		return nil, fmt.Errorf("create ManagedCluster as the bootstrap identity: %w", err)
	}
	csr, keyPEM, err := NewAgentCSR(cluster)
	if err != nil {
		return nil, err
	}
	if err := h.bootstrap.Create(ctx, csr); err != nil {
		return nil, fmt.Errorf("create CSR as the bootstrap identity: %w", err)
	}
	if rejoin {
		// A cluster registered before is no first join: auto-approval
		// leaves its request to the hub admin, who approves it as
		// `kubectl ocm accept` would (a conflict: the hub decided first).
		if err := regcsr.ApproveRequest(ctx, h.admin, csr, "ApprovedByHarness", "the harness registers its simulated cluster again"); err != nil && !apierrors.IsConflict(err) {
			return nil, err
		}
	}
	var certPEM []byte
	_, err = PollErr(ctx, interval, simTimeout, "the certificate of CSR "+csr.Name, func(ctx context.Context) (bool, error) {
		got := &certificatesv1.CertificateSigningRequest{}
		if err := h.bootstrap.Get(ctx, client.ObjectKey{Name: csr.Name}, got); err != nil {
			return false, err
		}
		if st := certs.StateOf(got); st.Decided() && !st.Approved {
			return false, fmt.Errorf("CSR %s was denied: %v", csr.Name, got.Status.Conditions)
		}
		certPEM = got.Status.Certificate
		return len(certPEM) > 0, nil
	})
	if err != nil {
		return nil, err
	}
	// Auto-approval accepted the cluster with its first join, which is
	// what it trusts the bootstrap identity with (a request for a cluster
	// accepted before stays pending); the hub admin's accept, as `kubectl
	// ocm accept` would set it, finds it accepted.
	if err := AcceptCluster(ctx, h.admin, cluster); err != nil {
		return nil, err
	}
	cfg := &rest.Config{Host: h.server, QPS: 5, Burst: 10,
		TLSClientConfig: rest.TLSClientConfig{CAData: h.ca, CertData: certPEM, KeyData: keyPEM}}
	a := &SimAgent{cluster: cluster}
	if a.hub, err = client.NewWithWatch(cfg, client.Options{Scheme: apis.Scheme, Mapper: h.mapper}); err != nil {
		return nil, err
	}
	// The hub grants the agent access once it has accepted the cluster and
	// creates the lease; until then reads are forbidden or find nothing.
	_, err = PollErr(ctx, interval, simTimeout, "the hub to accept "+cluster+" and create its lease", func(ctx context.Context) (bool, error) {
		if err := a.hub.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return false, err
		}
		if !meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionHubAccepted) {
			return false, nil
		}
		return true, a.hub.Get(ctx, client.ObjectKey{Namespace: cluster, Name: clusterv1.LeaseName}, &coordinationv1.Lease{})
	})
	if err != nil {
		return nil, err
	}
	if a.leaseDuration, err = a.renewLease(ctx); err != nil {
		return nil, err
	}
	return a, ReportAvailable(ctx, a.hub, a.cluster)
}

// NewAgentCSR returns a new private key (PEM) and the certificate signing
// request of cluster's agent certificate with it, as the registration agent
// files it: the subject of certs.AgentSubject, labeled with the cluster name.
func NewAgentCSR(cluster string) (*certificatesv1.CertificateSigningRequest, []byte, error) {
	key, keyPEM, err := certs.NewPrivateKey()
	if err != nil {
		return nil, nil, err
	}
	subject := certs.AgentSubject(cluster, simAgentID)
	request, err := certutil.MakeCSR(key, &subject, nil, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("create a certificate request for %s: %w", subject.CommonName, err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: cluster + "-", Labels: map[string]string{clusterv1.ClusterNameLabelKey: cluster}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: request, SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages: regcsr.AgentUsages(),
		},
	}
	return csr, keyPEM, nil
}

// SimAgentUser returns the user name and groups of cluster's simulated
// agent: those of its certificate's subject.
func SimAgentUser(cluster string) (string, []string) {
	s := certs.AgentSubject(cluster, simAgentID)
	return s.CommonName, s.Organization
}

// ReportAvailable sets Joined and Available True and a version in the
// status of ManagedCluster cluster through c, as the agent's status sync
// does.
func ReportAvailable(ctx context.Context, c client.Client, cluster string) error {
	// The hub's controllers write the ManagedCluster too: read it again
	// after a conflict.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return err
		}
		base := mc.DeepCopy()
		for _, c := range []metav1.Condition{
			{Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: clusterv1.ReasonManagedClusterJoined, Message: "Managed cluster joined"},
			{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue, Reason: clusterv1.ReasonManagedClusterAvailable, Message: "Managed cluster is available"},
		} {
			c.ObservedGeneration = mc.Generation
			meta.SetStatusCondition(&mc.Status.Conditions, c)
		}
		mc.Status.Version.Kubernetes = "v1.36.0"
		return c.Status().Patch(ctx, mc, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		return fmt.Errorf("report the status of %s: %w", cluster, err)
	}
	return nil
}

// renewLease sets the lease's renew time to now as the real agent does; it
// reads the cluster's lease duration from its ManagedCluster only at
// registration (the real agent has it from its watch of the ManagedCluster,
// which costs no request), and returns it.
func (a *SimAgent) renewLease(ctx context.Context) (time.Duration, error) {
	if a.leaseDuration == 0 {
		mc := &clusterv1.ManagedCluster{}
		if err := a.hub.Get(ctx, client.ObjectKey{Name: a.cluster}, mc); err != nil {
			return 0, err
		}
		a.leaseDuration = mc.Spec.LeaseDuration()
	}
	return a.leaseDuration, a.lease.Renew(ctx, a.hub, a.cluster, time.Now())
}

// renewLoop renews the lease once per lease duration (with at most 10 %
// jitter, as the real agent does) until ctx ends, counting the outcomes in h.
func (a *SimAgent) renewLoop(ctx context.Context, h *SimHub) {
	duration := a.leaseDuration
	for {
		t := time.NewTimer(wait.Jitter(duration, 0.1))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		start := time.Now()
		d, err := a.renewLease(ctx)
		switch {
		case err == nil:
			h.leaseLatency.Observe(time.Since(start))
			h.renewals.Add(1)
			duration = d
		case ctx.Err() == nil:
			h.failures.Add(1)
		}
	}
}
