package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// An agent with two or more bootstrap kubeconfigs (Options.
// BootstrapKubeconfigSecrets, the Klusterlet's bootstrapKubeConfigs of type
// LocalSecrets) has one current hub, whose bootstrap kubeconfig it
// registers with and whose hub credential it keeps. When the current hub has
// not renewed the cluster's lease for Options.HubConnectionTimeout (it is
// unreachable, or it no longer accepts the cluster), the agent moves to the
// next hub, in the Secrets' order, whose API server answers, and registers
// there as it did with the first. The work agent follows the new hub
// credential: the new hub's works take over the objects the old hub's works
// applied, which stay in place meanwhile (the old records are evicted only
// after the work agent's grace period, and an object that a record of the
// new hub also owns loses only the old owner).

const (
	// hubProbeTimeout bounds one check of whether a hub answers.
	hubProbeTimeout = 5 * time.Second
	// failoverRetryInterval is the wait before the agent looks for another
	// hub again when none answered.
	failoverRetryInterval = 10 * time.Second
)

// bootstrapSecret names the bootstrap kubeconfig Secret of the current hub.
func (a *Agent) bootstrapSecret() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.opts.BootstrapKubeconfigSecrets[a.hubIndex]
}

// noteContact records that the current hub renewed the cluster's lease, or
// that the agent has just chosen or connected to it.
func (a *Agent) noteContact() {
	a.mu.Lock()
	a.contact = a.now()
	a.mu.Unlock()
}

// hubLost reports for how long the current hub has not been in contact and
// whether the agent should look for another hub now: it has standby hubs,
// the time has reached HubConnectionTimeout and the last search is not
// too recent.
func (a *Agent) hubLost() (time.Duration, bool) {
	if !a.opts.multipleHubs() {
		return 0, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	lost := now.Sub(a.contact)
	return lost, lost >= a.opts.HubConnectionTimeout && !now.Before(a.nextHubSearch)
}

// hubCandidates reads the bootstrap kubeconfigs in order, nil for one that
// is missing or cannot be read.
func (a *Agent) hubCandidates(ctx context.Context) []*kubeconfig.Info {
	out := make([]*kubeconfig.Info, len(a.opts.BootstrapKubeconfigSecrets))
	for i, name := range a.opts.BootstrapKubeconfigSecrets {
		data, err := a.secretData(ctx, name)
		if err != nil || data == nil {
			continue
		}
		if info, err := kubeconfig.FromSecret(data); err == nil {
			out[i] = info
		}
	}
	return out
}

// selectInitialHub chooses the current hub when the agent starts: the one
// its hub credential is for, else the first whose API server answers, else
// the first.
func (a *Agent) selectInitialHub(ctx context.Context) {
	if !a.opts.multipleHubs() {
		return
	}
	cands := a.hubCandidates(ctx)
	i, why := -1, "its hub credential is for it"
	if data, err := a.secretData(ctx, a.opts.HubKubeconfigSecret); err == nil && data != nil {
		if cred, err := kubeconfig.ReadHubCredential(data); err == nil {
			i = kubeconfig.HubIndex(cred.Kubeconfig, cands)
		}
	}
	if i < 0 {
		i, why = firstAnswering(ctx, cands, -1), "the first hub that answers"
	}
	if i < 0 {
		i, why = 0, "no hub answers yet"
	}
	a.mu.Lock()
	a.hubIndex, a.contact = i, a.now()
	a.mu.Unlock()
	server := ""
	if cands[i] != nil {
		server = cands[i].Server
	}
	ctrl.LoggerFrom(ctx).Info("Selected the hub", "secret", a.opts.BootstrapKubeconfigSecrets[i], "server", server, "reason", why)
}

// failover moves the agent to the next hub after the current one, in the
// Secrets' order, whose API server answers, because the current one has
// been lost for lost; it reports whether the agent moved. When no other
// hub answers, the agent stays and looks again after failoverRetryInterval.
func (a *Agent) failover(ctx context.Context, id identity, lost time.Duration) bool {
	log := ctrl.LoggerFrom(ctx)
	a.mu.Lock()
	cur := a.hubIndex
	a.mu.Unlock()
	cands := a.hubCandidates(ctx)
	from := a.opts.BootstrapKubeconfigSecrets[cur]
	if cands[cur] != nil {
		from = cands[cur].Server
	}
	next := firstAnswering(ctx, cands, cur)
	if next < 0 {
		a.mu.Lock()
		a.nextHubSearch = a.now().Add(failoverRetryInterval)
		a.mu.Unlock()
		log.Info("The hub has been lost, but no other hub answers; looking again later", "hub", from, "lostFor", lost.Round(time.Second), "retryAfter", failoverRetryInterval)
		return false
	}
	a.mu.Lock()
	a.hubIndex, a.contact = next, a.now()
	a.mu.Unlock()
	secret := a.opts.BootstrapKubeconfigSecrets[next]
	log.Info("The hub has been lost; registering with the next hub", "from", from, "to", cands[next].Server, "secret", secret, "lostFor", lost.Round(time.Second))
	a.reportDegraded(ctx, operatorv1.KlusterletReasonBootstrapSelected, fmt.Sprintf(
		"Hub %s has not renewed the lease of cluster %s for %s (hub connection timeout %s); registering with hub %s of Secret %s/%s",
		from, id.cluster, lost.Round(time.Second), a.opts.HubConnectionTimeout, cands[next].Server, a.opts.Namespace, secret))
	return true
}

// firstAnswering returns the index of the first of cands after index after,
// wrapping around and leaving after out, whose API server answers; -1 when
// none does. after -1 tries them all from the first.
func firstAnswering(ctx context.Context, cands []*kubeconfig.Info, after int) int {
	n := len(cands)
	for k := 1; k <= n; k++ {
		i := (after + k) % n
		if i == after || cands[i] == nil {
			continue
		}
		if answers(ctx, cands[i]) {
			return i
		}
	}
	return -1
}

// answers reports whether the API server of the kubeconfig info answers
// /readyz with anything but a server error. The credential is not judged:
// an expired bootstrap token still shows a hub that is up.
func answers(ctx context.Context, info *kubeconfig.Info) bool {
	cfg, err := info.RESTConfig()
	if err != nil {
		return false
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return false
	}
	hc.Timeout = hubProbeTimeout
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode < http.StatusInternalServerError
}

// hubAnswered reports whether err (nil included) came with an answer of the
// hub's API server, rather than from failing to reach it.
func hubAnswered(err error) bool {
	if err == nil {
		return true
	}
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Code < http.StatusInternalServerError
}
