package agent

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// hubTrustRecheck is how often a connected agent looks at the hub's CA
// bundle again without a change of it: the hub may have stopped serving
// with a CA that already left the bundle.
const hubTrustRecheck = 10 * time.Minute

// hubTrustRetryMax bounds the wait before another attempt when an update
// of the trust failed (a conflict with the credential loop's write of the
// same Secret, a hub that did not answer): the attempts start a second
// apart and double up to it.
const hubTrustRetryMax = 30 * time.Second

// followHubTrust keeps the CA bundle the agent trusts for the hub in step
// with the bundle the hub publishes in kube-public
// (certs.HubCABundleNamespace/certs.HubCABundleConfigMap), until ctx ends:
// it watches that ConfigMap through the current hub connection and, on
// each change and every hubTrustRecheck, updates the trust
// (updateHubTrust), trying a failed update again until it succeeds or the
// bundle changes. The copy in the cluster namespace is never read: a
// namespace editor on the hub may write it.
func (a *Agent) followHubTrust(ctx context.Context) {
	source := certs.HubCABundleNamespace + "/" + certs.HubCABundleConfigMap
	log := ctrl.LoggerFrom(ctx).WithValues("configMap", source)
	ctx = ctrl.LoggerInto(ctx, log)
	lw := a.hubListWatch(func() client.ObjectList { return &corev1.ConfigMapList{} }, certs.HubCABundleNamespace, certs.HubCABundleConfigMap)
	inf := toolscache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, hubTrustRecheck, toolscache.Indexers{})
	err := inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *toolscache.Reflector, err error) {
		if apierrors.IsForbidden(err) || errors.Is(err, errNotConnected) {
			// A hub installed before the agents could read the bundle in
			// kube-public, or the role not granted yet: nothing to follow.
			log.V(1).Info("Cannot watch the hub's CA bundle", "error", err.Error())
			return
		}
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
	})
	if err != nil {
		log.Error(err, "Cannot set the hub CA bundle watch's error handler")
	}
	changed := make(chan struct{}, 1)
	signal := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    signal,
		UpdateFunc: func(_, obj any) { signal(obj) },
	}); err != nil {
		log.Error(err, "Cannot watch the hub's CA bundle")
		return
	}
	go inf.RunWithContext(ctx)
	var (
		retry <-chan time.Time
		delay time.Duration
	)
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		case <-retry:
		}
		retry = nil
		obj, exists, err := inf.GetStore().GetByKey(source)
		cm, ok := obj.(*corev1.ConfigMap)
		if err != nil || !exists || !ok {
			continue
		}
		err = a.updateHubTrust(ctx, cm.Data[certs.HubCABundleKey])
		if err == nil {
			delay = 0
			continue
		}
		if ctx.Err() != nil {
			return
		}
		delay = min(max(2*delay, time.Second), hubTrustRetryMax)
		retry = time.After(delay)
		if errors.Is(err, errNotConnected) {
			log.V(1).Info("Cannot follow the hub's CA bundle yet", "error", err.Error(), "retryIn", delay.String())
			continue
		}
		log.Error(err, "Cannot follow the hub's CA bundle", "retryIn", delay.String())
	}
}

// updateHubTrust computes the agent's hub trust from the bundle the hub
// publishes (certs.UpdateTrust, the hub's serving chain read through the
// current connection) and, when it changed, writes it into the hub
// kubeconfig Secret and then into the bootstrap kubeconfig Secret when that
// points at the same hub: the credential loop then reconnects with the new
// trust, and a later bootstrap trusts the hub too. The trust it starts from
// is the hub kubeconfig Secret's, not the connection's: the connection
// takes up a written trust only at the credential loop's next check. A hub
// kubeconfig that trusts the system's roots (no CA data) is left alone.
// Without a hub connection, or while the Secret names another hub than the
// connection, it returns errNotConnected.
func (a *Agent) updateHubTrust(ctx context.Context, published string) error {
	conn, _ := a.current()
	if conn == nil {
		return errNotConnected
	}
	if published == "" {
		return nil
	}
	sec, err := a.readSecret(ctx, a.opts.HubKubeconfigSecret)
	if err != nil {
		return err
	}
	if sec == nil {
		return errNotConnected
	}
	hub, err := kubeconfig.FromSecret(sec.Data)
	if err != nil {
		return fmt.Errorf("secret %s/%s: %w", a.opts.Namespace, a.opts.HubKubeconfigSecret, err)
	}
	if len(hub.CAData) == 0 {
		return nil
	}
	if !kubeconfig.SameHub(hub, conn.cred.hub) {
		return errNotConnected
	}
	chain, host, err := servingChain(ctx, conn.cred.config)
	if err != nil {
		return fmt.Errorf("read the hub's serving certificate: %w", err)
	}
	u, err := certs.UpdateTrust(hub.CAData, []byte(published), certs.ServingVerifier(chain, host))
	if err != nil {
		return err
	}
	if u.Changed {
		next, err := kubeconfig.WithCAData(sec.Data, u.Trusted)
		if err != nil {
			return fmt.Errorf("secret %s/%s: %w", a.opts.Namespace, a.opts.HubKubeconfigSecret, err)
		}
		if err := a.replaceSecretData(ctx, sec, next); err != nil {
			return err
		}
		log := ctrl.LoggerFrom(ctx)
		for _, fp := range u.Added {
			log.Info("Trusting a new CA for the hub, published in the hub's CA bundle", "fingerprint", fp)
		}
		for _, fp := range u.Dropped {
			log.Info("No longer trusting a CA for the hub: it left the hub's CA bundle and the hub does not serve with it", "fingerprint", fp)
		}
	}
	// The bootstrap kubeconfig follows, also when an earlier write of it
	// failed; one that points at another hub (a standby hub, a join to
	// another hub, or a hub recreated with another CA) is not touched.
	var errs []error
	for _, name := range a.opts.BootstrapKubeconfigSecrets {
		errs = append(errs, a.followInBootstrap(ctx, name, hub, u.Trusted))
	}
	return errors.Join(errs...)
}

// followInBootstrap sets the CAs trusted in bootstrap kubeconfig Secret name
// to trusted when it points at hub.
func (a *Agent) followInBootstrap(ctx context.Context, name string, hub *kubeconfig.Info, trusted []byte) error {
	sec, err := a.readSecret(ctx, name)
	if err != nil || sec == nil {
		return err
	}
	info, err := kubeconfig.FromSecret(sec.Data)
	if err != nil || len(info.CAData) == 0 || string(info.CAData) == string(trusted) || !kubeconfig.SameHub(info, hub) {
		return nil
	}
	boot, err := kubeconfig.WithCAData(sec.Data, trusted)
	if err != nil {
		return fmt.Errorf("secret %s/%s: %w", a.opts.Namespace, name, err)
	}
	return a.replaceSecretData(ctx, sec, boot)
}

// servingChain returns the certificates the hub at cfg serves (leaf first),
// verified with cfg's CA and proxy, and the host name they are for.
func servingChain(ctx context.Context, cfg *rest.Config) ([]*x509.Certificate, string, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, "", err
	}
	hc.Timeout = hubRequestTimeout
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/version", nil)
	if err != nil {
		return nil, "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, "", err
	}
	_ = resp.Body.Close()
	if resp.TLS == nil || len(resp.TLS.PeerCertificates) == 0 {
		return nil, "", errors.New("the hub connection is not TLS")
	}
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, "", err
	}
	host := u.Hostname()
	if cfg.ServerName != "" {
		host = cfg.ServerName
	}
	return resp.TLS.PeerCertificates, host, nil
}
