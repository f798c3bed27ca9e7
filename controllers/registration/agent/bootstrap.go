package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// Bootstrap poll intervals.
const (
	// csrPollInterval is how often a bootstrapping agent checks a request
	// that has been pending for a while.
	csrPollInterval = time.Second
	// csrFirstPollInterval is the first wait after a request is made. The
	// wait doubles up to csrPollInterval: an auto-approved request, or one a
	// waiting admin accepts at once, is issued within a fraction of a second.
	csrFirstPollInterval = 100 * time.Millisecond
	// bootstrapRetryInterval is the wait after an error.
	bootstrapRetryInterval = 5 * time.Second
	// deniedRetryInterval is the wait after a denied request before a new one.
	deniedRetryInterval = 30 * time.Second
	// csrWatchTimeout bounds one watch of a pending request, after which
	// the agent reads the request again.
	csrWatchTimeout = 10 * time.Second
)

// bootstrap obtains a hub credential for id with the bootstrap kubeconfig and
// writes it to the hub kubeconfig Secret. Unless force is set, it stops as
// soon as a valid hub credential appears (written by another replica or an
// administrator). It returns only when done or when ctx ends.
func (a *Agent) bootstrap(ctx context.Context, id identity, force bool) error {
	log := ctrl.LoggerFrom(ctx).WithValues("phase", "bootstrap")
	ctx = ctrl.LoggerInto(ctx, log)
	for {
		if !force {
			if _, err := a.loadHubCredential(ctx, id); err == nil {
				return nil
			}
		}
		done, wait, err := a.bootstrapOnce(ctx, id)
		if done {
			log.Info("Obtained the hub credential", "secret", a.opts.HubKubeconfigSecret, "bootstrapSecret", a.bootstrapSecret())
			return nil
		}
		if hubAnswered(err) {
			a.noteContact()
		} else if lost, due := a.hubLost(); due && a.failover(ctx, id, lost) {
			continue
		}
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// bootstrapOnce takes one step of the bootstrap and reports whether the hub
// credential was written, or how long to wait before the next step, and the
// error that stopped the step: nil when the hub answered every request
// (hubAnswered tells whether it reached the hub).
func (a *Agent) bootstrapOnce(ctx context.Context, id identity) (bool, time.Duration, error) {
	log := ctrl.LoggerFrom(ctx)
	info, err := a.bootstrapKubeconfig(ctx)
	if err != nil {
		reason := operatorv1.KlusterletReasonBootstrapSecretError
		var be *bootstrapError
		if errors.As(err, &be) && be.missing {
			reason = operatorv1.KlusterletReasonBootstrapSecretMissing
		}
		a.reportDegraded(ctx, reason, fmt.Sprintf("Cannot read the bootstrap kubeconfig: %v; run `kubectl ocm join` again on this cluster", err))
		return false, bootstrapRetryInterval, err
	}
	hub, err := bootstrapClient(info)
	if err != nil {
		a.reportDegraded(ctx, operatorv1.KlusterletReasonBootstrapSecretError, fmt.Sprintf("Cannot use the bootstrap kubeconfig: %v; run `kubectl ocm join` again on this cluster", err))
		return false, bootstrapRetryInterval, err
	}
	if err := a.ensureManagedCluster(ctx, hub, id); err != nil {
		log.Error(err, "Cannot create the ManagedCluster on the hub")
		a.reportDegraded(ctx, operatorv1.KlusterletReasonManagedClusterCreateFailed, fmt.Sprintf("Cannot create ManagedCluster %s on hub %s: %v", id.cluster, info.Server, err))
		return false, bootstrapRetryInterval, err
	}
	p, err := a.loadPending(ctx, id)
	if err != nil {
		log.Error(err, "Cannot load or create the private key")
		return false, bootstrapRetryInterval, nil
	}
	res, created, err := a.requestCertificate(ctx, hub, id, p)
	if err != nil {
		log.Error(err, "Cannot request a client certificate")
		reason, fix := operatorv1.KlusterletReasonCSRCreateFailed, "check that the hub is reachable"
		if apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) {
			reason, fix = operatorv1.KlusterletReasonBootstrapUnauthorized, "the bootstrap token expired or was revoked: get a new one with `kubectl ocm hub token` on the hub and run `kubectl ocm join` again"
		}
		a.reportDegraded(ctx, reason, fmt.Sprintf("Cannot request a client certificate from hub %s: %v; %s", info.Server, err, fix))
		return false, bootstrapRetryInterval, err
	}
	if created {
		if err := a.savePending(ctx, id, p); err != nil {
			log.Error(err, "Cannot record the pending CertificateSigningRequest")
		}
	}
	switch res.Phase {
	case certs.RequestIssued:
		data, err := a.issuedSecretData(id, info, res, p)
		if err == nil {
			err = a.writeSecret(ctx, a.opts.HubKubeconfigSecret, data)
		}
		if err != nil {
			log.Error(err, "Cannot write the hub credential")
			return false, bootstrapRetryInterval, nil
		}
		if err := a.deleteSecret(ctx, a.opts.pendingSecretName()); err != nil {
			log.Error(err, "Cannot delete the pending-request Secret")
		}
		return true, 0, nil
	case certs.RequestDenied:
		log.Info("The CertificateSigningRequest was denied; a new one follows", "csr", res.Name, "reason", res.Message)
		a.reportDegraded(ctx, operatorv1.KlusterletReasonCSRDenied, fmt.Sprintf("The hub denied CertificateSigningRequest %s (%s); a new request follows in %s", res.Name, res.Message, deniedRetryInterval))
		p.CSRName = ""
		if err := a.savePending(ctx, id, p); err != nil {
			log.Error(err, "Cannot record the pending CertificateSigningRequest")
		}
		return false, deniedRetryInterval, nil
	}
	// The request's key names this agent for the hub admin, who compares
	// it with the key `kubectl ocm accept` shows for each request.
	key, err := certs.KeyPin(p.Key.Public())
	if err != nil {
		key = "unknown"
	}
	a.reportDegraded(ctx, operatorv1.KlusterletReasonCSRPending, fmt.Sprintf(
		"CertificateSigningRequest %s (key %s) is pending: waiting for the hub admin to accept cluster %s: run `kubectl ocm accept --clusters %s` on the hub "+
			"(with --rejoin when cluster %s had joined the hub before: a new registration of a joined cluster is approved only with it, after comparing its key with the one shown here)",
		res.Name, key, id.cluster, id.cluster, id.cluster))
	return false, awaitCSR(ctx, hub, res.Name, a.csrPoll.next(res.Name)), nil
}

// issuedSecretData returns the hub kubeconfig Secret's data for the issued
// request res of the pending request p: its certificate with p's key, or
// with the token driver its token, opened with p's key.
func (a *Agent) issuedSecretData(id identity, hub *kubeconfig.Info, res certs.RequestState, p *certs.PendingRequest) (map[string][]byte, error) {
	if !a.opts.tokenAuth() {
		return hubSecretData(id, hub, res.CertPEM, p.KeyPEM)
	}
	token, err := certs.OpenToken(res.SealedToken, res.Name, res.UID, p.Key)
	if err != nil {
		return nil, err
	}
	return hubTokenSecretData(id, hub, token)
}

// awaitCSR watches the pending request name until the hub issues its
// certificate or denies it, at most csrWatchTimeout, and returns the wait
// before the next bootstrap step: none, or fallback (the poll interval) when
// the watch cannot be used.
func awaitCSR(ctx context.Context, hub client.WithWatch, name string, fallback time.Duration) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, csrWatchTimeout)
	defer cancel()
	w, err := hub.Watch(ctx, &certificatesv1.CertificateSigningRequestList{}, client.MatchingFields{"metadata.name": name})
	if err != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("Cannot watch the CertificateSigningRequest; polling it", "csr", name, "error", err.Error())
		return fallback
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return 0
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fallback
			}
			csr, isCSR := ev.Object.(*certificatesv1.CertificateSigningRequest)
			if !isCSR {
				return fallback
			}
			if certs.StateOf(csr).Phase != certs.RequestPending {
				return 0
			}
		}
	}
}

// quickPoller spaces the checks of one awaited change, keyed by what is
// awaited: first after first, then doubling up to max. A new key starts over.
type quickPoller struct {
	first, max time.Duration
	key        string
	wait       time.Duration
}

// next returns the wait before the next check for key.
func (p *quickPoller) next(key string) time.Duration {
	if p.key != key {
		p.key, p.wait = key, p.first
		return p.wait
	}
	p.wait = min(2*p.wait, p.max)
	return p.wait
}

// bootstrapClient returns a hub client from the bootstrap kubeconfig. Its
// watches, of a pending request, are shorter than its requests' timeout.
func bootstrapClient(bootstrap *kubeconfig.Info) (client.WithWatch, error) {
	cfg, err := bootstrap.RESTConfig()
	if err != nil {
		return nil, err
	}
	cfg.Timeout = hubRequestTimeout
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		return nil, fmt.Errorf("create hub client: %w", err)
	}
	return c, nil
}

// ensureManagedCluster creates the cluster's ManagedCluster on the hub when it
// does not exist. A bootstrap identity that may not read or create it
// (401/403) is not an error: the hub admin may have created it already.
func (a *Agent) ensureManagedCluster(ctx context.Context, hub client.Client, id identity) error {
	mc := &clusterv1.ManagedCluster{}
	err := hub.Get(ctx, types.NamespacedName{Name: id.cluster}, mc)
	switch {
	case err == nil:
		return nil
	case apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err):
		ctrl.LoggerFrom(ctx).V(1).Info("May not read the ManagedCluster; assuming it exists", "error", err.Error())
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("read ManagedCluster %s: %w", id.cluster, err)
	}
	mc = &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: id.cluster},
		Spec:       clusterv1.ManagedClusterSpec{ManagedClusterClientConfigs: a.clientConfigs(ctx)},
	}
	err = hub.Create(ctx, mc)
	switch {
	case err == nil:
		ctrl.LoggerFrom(ctx).Info("Created the ManagedCluster on the hub")
		return nil
	case apierrors.IsAlreadyExists(err):
		return nil
	case apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err):
		ctrl.LoggerFrom(ctx).V(1).Info("May not create the ManagedCluster; assuming the hub admin creates it", "error", err.Error())
		return nil
	}
	return fmt.Errorf("create ManagedCluster %s: %w", id.cluster, err)
}

// clientConfigs returns the managed cluster's API server URLs for the hub:
// --spoke-external-server-urls with the managed cluster's CA, else the
// Klusterlet's spec.externalServerURLs.
func (a *Agent) clientConfigs(ctx context.Context) []clusterv1.ClientConfig {
	var out []clusterv1.ClientConfig
	for _, u := range a.opts.SpokeExternalServerURLs {
		out = append(out, clusterv1.ClientConfig{URL: u, CABundle: a.spokeCA})
	}
	if len(out) > 0 {
		return out
	}
	k := &operatorv1.Klusterlet{}
	if err := a.mgmt.Get(ctx, types.NamespacedName{Name: a.opts.KlusterletName}, k); err != nil {
		return nil
	}
	for _, s := range k.Spec.ExternalServerURLs {
		ca := s.CABundle
		if len(ca) == 0 {
			ca = a.spokeCA
		}
		out = append(out, clusterv1.ClientConfig{URL: s.URL, CABundle: ca})
	}
	return out
}
