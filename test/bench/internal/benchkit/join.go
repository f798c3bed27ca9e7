package benchkit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	regcsr "github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/accept"
	hubcli "github.com/kubectl-ocm/kubectl-ocm/plugins/hub"
)

// joinTimeout bounds one join, from the agent Deployment to Available.
const joinTimeout = 2 * time.Minute

// JoinTimes are the stages of one join, each measured from the creation of
// the agent Deployment (the last object `kubectl ocm join` installs).
type JoinTimes struct {
	Process   time.Duration // the component runner started the agent process
	CSR       time.Duration // the agent's CSR appeared in the acceptor's watch
	Approved  time.Duration // the acceptor approved it and set hubAcceptsClient
	Issued    time.Duration // kube-controller-manager issued the certificate (the hub controller the sealed token, with the token driver)
	Accepted  time.Duration // HubAcceptedManagedCluster True
	Joined    time.Duration // ManagedClusterJoined True
	Available time.Duration // ManagedClusterConditionAvailable True
}

// stages lists the stages with their names, in protocol order.
func (t JoinTimes) stages() []struct {
	name string
	d    time.Duration
} {
	return []struct {
		name string
		d    time.Duration
	}{
		{"process", t.Process}, {"CSR", t.CSR}, {"approved", t.Approved}, {"issued", t.Issued},
		{"HubAccepted", t.Accepted}, {"Joined", t.Joined}, {"Available", t.Available},
	}
}

// String lists every stage in seconds.
func (t JoinTimes) String() string {
	s := ""
	for i, st := range t.stages() {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %.2f", st.name, st.d.Seconds())
	}
	return s + " s"
}

// JoinCluster installs the agent on cluster as `kubectl ocm join` does (a
// fresh bootstrap token, config/agent applied with server-side apply), with an
// acceptor playing the hub admin, and waits until the ManagedCluster is
// Available. It returns the time of each stage. Each of with may change the
// agent's values before they are rendered (such as its add-on kube client
// driver).
func JoinCluster(ctx context.Context, b *testing.B, f *Fleet, cluster string, with ...func(*config.AgentValues)) JoinTimes {
	b.Helper()
	info, err := hubcli.NewJoinInfo(ctx, f.HubClient, f.Hub.RESTConfig(), time.Hour, "")
	if err != nil {
		b.Fatal(err)
	}
	boot, err := kubeconfig.ForToken(info.HubAPIServer, f.JoinCA, info.HubToken)
	if err != nil {
		b.Fatal(err)
	}
	values := config.AgentValues{ClusterName: cluster, HubAPIServer: info.HubAPIServer, BootstrapKubeconfig: boot}
	for _, w := range with {
		w(&values)
	}
	objs, err := config.AgentObjects(values)
	if err != nil {
		b.Fatal(err)
	}
	var deployment []*unstructured.Unstructured
	var others []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			deployment = append(deployment, o)
		} else {
			others = append(others, o)
		}
	}
	spoke := f.Env.Cluster(cluster).Client()
	if err := apply.Apply(ctx, spoke, others, apply.Options{}); err != nil {
		b.Fatalf("install the agent's prerequisites on %s: %v", cluster, err)
	}
	acceptance := startAcceptor(ctx, b, f, cluster)

	start := time.Now()
	if err := apply.Apply(ctx, spoke, deployment, apply.Options{}); err != nil {
		b.Fatalf("create the agent Deployment on %s: %v", cluster, err)
	}
	var t JoinTimes
	var res *acceptorResult
	mc := &clusterv1.ManagedCluster{}
	_, err = PollErr(ctx, FastPoll, joinTimeout, "ManagedCluster "+cluster+" Available", func(ctx context.Context) (bool, error) {
		if t.Process == 0 && f.Pid(cluster, config.AgentNamespace, AgentDeployment) != 0 {
			t.Process = time.Since(start)
		}
		if res == nil {
			select {
			case r := <-acceptance:
				if r.err != nil {
					b.Fatalf("accept %s: %v", cluster, r.err)
				}
				res = &r
			default:
			}
		}
		if err := f.HubClient.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		now := time.Since(start)
		for typ, at := range map[string]*time.Duration{
			clusterv1.ManagedClusterConditionHubAccepted: &t.Accepted,
			clusterv1.ManagedClusterConditionJoined:      &t.Joined,
			clusterv1.ManagedClusterConditionAvailable:   &t.Available,
		} {
			if *at == 0 && meta.IsStatusConditionTrue(mc.Status.Conditions, typ) {
				*at = now
			}
		}
		return t.Available != 0 && res != nil, nil
	})
	if err != nil {
		b.Fatalf("%v; ManagedCluster conditions: %+v; stages so far: %s; acceptor: %+v; agent log: %s",
			err, mc.Status.Conditions, t, res, f.Runner.LogPath(cluster, config.AgentNamespace, AgentDeployment))
	}
	t.CSR, t.Approved, t.Issued = res.seen.Sub(start), res.approved.Sub(start), res.issued.Sub(start)
	return t
}

// acceptorResult is what the acceptor saw and did for one join.
type acceptorResult struct {
	csr      string
	seen     time.Time // the CSR appeared in the watch
	approved time.Time // approval and hubAcceptsClient were written
	issued   time.Time // the certificate appeared in the watch
	err      error
}

// startAcceptor starts a goroutine that plays the hub admin running
// `kubectl ocm accept --clusters <cluster>` the moment the agent's CSR shows
// up: it watches the cluster's CSRs, approves the first new pending one from
// the bootstrap identity (as accept does, reason accept.ReasonApproved), sets
// spec.hubAcceptsClient, and reports once the certificate is issued. It
// returns when the watch has synced; CSRs present by then are ignored.
func startAcceptor(ctx context.Context, b *testing.B, f *Fleet, cluster string) <-chan acceptorResult {
	b.Helper()
	ctx, cancel := context.WithTimeout(ctx, joinTimeout)
	cs := f.Hub.Clientset()
	lw := cache.NewFilteredListWatchFromClient(cs.CertificatesV1().RESTClient(), "certificatesigningrequests", metav1.NamespaceAll,
		func(o *metav1.ListOptions) { o.LabelSelector = clusterv1.ClusterNameLabelKey + "=" + cluster })
	synced, done := make(chan struct{}), make(chan struct{})
	out := make(chan acceptorResult, 1)
	old := map[string]bool{}
	go func() {
		defer cancel()
		defer close(done)
		var res acceptorResult
		_, res.err = watchtools.UntilWithSync(ctx, lw, &certificatesv1.CertificateSigningRequest{}, func(store cache.Store) (bool, error) {
			for _, k := range store.ListKeys() {
				old[k] = true
			}
			close(synced)
			return false, nil
		}, func(ev watch.Event) (bool, error) {
			csr, ok := ev.Object.(*certificatesv1.CertificateSigningRequest)
			if !ok || old[csr.Name] {
				return false, nil
			}
			if res.csr == "" {
				if regcsr.Decided(csr) || !firstJoinApprovable(csr) {
					return false, nil
				}
				res.csr, res.seen = csr.Name, time.Now()
				if err := approve(ctx, cs, csr); err != nil {
					return false, err
				}
				if err := AcceptCluster(ctx, f.HubClient, cluster); err != nil {
					return false, err
				}
				res.approved = time.Now()
			}
			if csr.Name == res.csr && certs.StateOf(csr).Phase == certs.RequestIssued {
				res.issued = time.Now()
				return true, nil
			}
			return false, nil
		})
		out <- res
	}()
	select {
	case <-synced:
	case <-done:
	}
	return out
}

// firstJoinApprovable reports whether `kubectl ocm accept` would approve
// csr: the shared approval policy of a first join.
func firstJoinApprovable(csr *certificatesv1.CertificateSigningRequest) bool {
	req, err := regcsr.ParseRequest(csr)
	if err != nil {
		return false
	}
	ok, _ := regcsr.DecideFirstJoin(req, regcsr.FirstJoinTrust{})
	return ok
}

// approve approves csr as the hub admin, as `kubectl ocm accept` does,
// reading it again after a conflict.
func approve(ctx context.Context, cs kubernetes.Interface, csr *certificatesv1.CertificateSigningRequest) error {
	csr = csr.DeepCopy()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
			Reason: accept.ReasonApproved, Message: "Approved by the " + strings.ToLower(benchName) + " benchmark as kubectl ocm accept would",
		})
		_, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			fresh, getErr := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
			if getErr != nil {
				return getErr
			}
			csr = fresh
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("approve CSR %s: %w", csr.Name, err)
	}
	return nil
}

// AcceptCluster sets spec.hubAcceptsClient of the ManagedCluster as the hub
// admin, waiting briefly for the agent to have created it.
func AcceptCluster(ctx context.Context, hub client.Client, cluster string) error {
	patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"hubAcceptsClient":true}}`))
	_, err := PollErr(ctx, FastPoll, 30*time.Second, "ManagedCluster "+cluster+" to accept", func(ctx context.Context) (bool, error) {
		err := hub.Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}, patch)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	return err
}

// StandbyHub returns, for JoinCluster, an edit of the agent's values that
// names the fleet's standby hub (FleetOptions.Standby) as the agent's second
// hub, with a fresh bootstrap token of it, and timeout as the agent's hub
// connection timeout.
func (f *Fleet) StandbyHub(ctx context.Context, b *testing.B, timeout time.Duration) func(*config.AgentValues) {
	b.Helper()
	info, err := hubcli.NewJoinInfo(ctx, f.Standby.Client(), f.Standby.RESTConfig(), time.Hour, "")
	if err != nil {
		b.Fatal(err)
	}
	boot, err := kubeconfig.ForToken(info.HubAPIServer, f.Standby.CAData(), info.HubToken)
	if err != nil {
		b.Fatal(err)
	}
	return func(v *config.AgentValues) {
		v.StandbyHubs = []config.StandbyHub{{Secret: config.StandbySecretName(2), Kubeconfig: boot}}
		v.HubConnectionTimeoutSeconds = int32(timeout / time.Second)
	}
}
