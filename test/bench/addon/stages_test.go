package addon

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	addonregistration "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/agent/registration"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// stage is one step of an add-on's registration on one cluster, as a watch
// sees it.
type stage int

// The stages, in protocol order.
const (
	// stageCreated: the ManagedClusterAddOn arrived in the hub watch.
	stageCreated stage = iota
	// stageRegistered: its status.registrations name the
	// kube-apiserver-client signer.
	stageRegistered
	// stageCSR: the add-on agent's certificate signing request arrived.
	stageCSR
	// stageApproved: the hub approved it.
	stageApproved
	// stageIssued: the signer wrote its certificate.
	stageIssued
	// stageTokenReady: TokenInfrastructureReady True (token driver).
	stageTokenReady
	// stageSecret: Secret <addon>-hub-kubeconfig arrived on the managed
	// cluster.
	stageSecret
	// stageAvailable: the ManagedClusterAddOn is Available.
	stageAvailable
	numStages
)

// stageNames name the stages in the figures.
var stageNames = [numStages]string{
	"ManagedClusterAddOn created", "registrations written", "CSR created", "CSR approved", "certificate issued",
	"TokenInfrastructureReady", "hub-kubeconfig Secret on the cluster", "Available",
}

// String names s.
func (s stage) String() string { return stageNames[s] }

// pair is one add-on on one cluster.
type pair struct{ cluster, addon string }

// stageTimes records when each pair first reached each stage.
type stageTimes struct {
	mu sync.Mutex
	at map[pair]*[numStages]time.Time
}

// mark records that p reached s at t, unless it had already.
func (st *stageTimes) mark(p pair, s stage, t time.Time) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.at == nil {
		st.at = map[pair]*[numStages]time.Time{}
	}
	row := st.at[p]
	if row == nil {
		row = &[numStages]time.Time{}
		st.at[p] = row
	}
	if row[s].IsZero() {
		row[s] = t
	}
}

// get returns when p reached s, zero when it has not.
func (st *stageTimes) get(p pair, s stage) time.Time {
	st.mu.Lock()
	defer st.mu.Unlock()
	if row := st.at[p]; row != nil {
		return row[s]
	}
	return time.Time{}
}

// missing lists, for every pair of pairs, the stages of want(pair) not
// reached yet, as "cluster/addon: stage, stage".
func (st *stageTimes) missing(pairs []pair, want func(pair) []stage) []string {
	var out []string
	for _, p := range pairs {
		var not []string
		for _, s := range want(p) {
			if st.get(p, s).IsZero() {
				not = append(not, s.String())
			}
		}
		if len(not) > 0 {
			out = append(out, fmt.Sprintf("%s/%s: %s", p.cluster, p.addon, strings.Join(not, ", ")))
		}
	}
	return out
}

// since returns, over pairs that reached s, the time from origin(pair) to s
// in seconds; origin returning zero skips the pair.
func (st *stageTimes) since(pairs []pair, s stage, origin func(pair) time.Time) []float64 {
	var xs []float64
	for _, p := range pairs {
		at, from := st.get(p, s), origin(p)
		if !at.IsZero() && !from.IsZero() {
			xs = append(xs, at.Sub(from).Seconds())
		}
	}
	return xs
}

// observeAddon records the stages a ManagedClusterAddOn shows.
func (st *stageTimes) observeAddon(at time.Time, mca *addonv1alpha1.ManagedClusterAddOn) {
	p := pair{cluster: mca.Namespace, addon: mca.Name}
	st.mark(p, stageCreated, at)
	if slices.ContainsFunc(mca.Status.Registrations, func(r addonv1alpha1.RegistrationConfig) bool {
		return r.SignerName == certificatesv1.KubeAPIServerClientSignerName
	}) {
		st.mark(p, stageRegistered, at)
	}
	if meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnTokenInfrastructureReady) {
		st.mark(p, stageTokenReady, at)
	}
	if available(mca) {
		st.mark(p, stageAvailable, at)
	}
}

// observeCSR records the stages an add-on's certificate signing request
// shows.
func (st *stageTimes) observeCSR(at time.Time, csr *certificatesv1.CertificateSigningRequest) {
	p := pair{cluster: csr.Labels[clusterv1.ClusterNameLabelKey], addon: csr.Labels[addonv1alpha1.AddonLabelKey]}
	st.mark(p, stageCSR, at)
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue {
			st.mark(p, stageApproved, at)
		}
	}
	if len(csr.Status.Certificate) > 0 {
		st.mark(p, stageIssued, at)
	}
}

// observeSecret records an add-on's hub credential Secret on cluster.
func (st *stageTimes) observeSecret(at time.Time, cluster string, s *corev1.Secret) {
	addon := s.Labels[addonv1alpha1.AddonLabelKey]
	if addon != "" && s.Name == addon+addonregistration.SecretSuffix && len(s.Data) > 0 {
		st.mark(pair{cluster: cluster, addon: addon}, stageSecret, at)
	}
}

// watchStages starts informers, in loops until ctx ends, on the hub's
// ManagedClusterAddOns and add-on certificate signing requests and on the
// add-on Secrets in the install namespace of each real cluster, recording
// into st, and returns once all have synced. Objects present at the sync
// count as arriving then.
func (af *addonFleet) watchStages(ctx context.Context, b *testing.B, loops *sync.WaitGroup, st *stageTimes) {
	b.Helper()
	hasAddon := func(o *metav1.ListOptions) { o.LabelSelector = addonv1alpha1.AddonLabelKey }
	csrLW := cache.NewFilteredListWatchFromClient(af.Hub.Clientset().CertificatesV1().RESTClient(), "certificatesigningrequests", metav1.NamespaceAll, hasAddon)
	synced := []cache.InformerSynced{
		benchkit.RunInformer(ctx, loops, benchkit.ListWatch(af.hubW, &addonv1alpha1.ManagedClusterAddOnList{}), &addonv1alpha1.ManagedClusterAddOn{}, func(o any) {
			if mca, ok := o.(*addonv1alpha1.ManagedClusterAddOn); ok {
				st.observeAddon(time.Now(), mca)
			}
		}),
		benchkit.RunInformer(ctx, loops, csrLW, &certificatesv1.CertificateSigningRequest{}, func(o any) {
			if csr, ok := o.(*certificatesv1.CertificateSigningRequest); ok {
				st.observeCSR(time.Now(), csr)
			}
		}),
	}
	for _, c := range realClusters {
		lw := cache.NewFilteredListWatchFromClient(af.Env.Cluster(c).Clientset().CoreV1().RESTClient(), "secrets", addonv1alpha1.DefaultAddonInstallNamespace, hasAddon)
		synced = append(synced, benchkit.RunInformer(ctx, loops, lw, &corev1.Secret{}, func(o any) {
			if s, ok := o.(*corev1.Secret); ok {
				st.observeSecret(time.Now(), c, s)
			}
		}))
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		b.Fatalf("the watches of the add-on registrations did not sync: %v", ctx.Err())
	}
}
