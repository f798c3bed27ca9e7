package hubsession

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/transport"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// DefaultRetryDelay is how long Run waits before it starts a new session
// after one failed (for example, its cache could not sync because the hub
// has not granted the agent's permissions yet).
const DefaultRetryDelay = 5 * time.Second

// Credential is what one version of the hub credential Secret gives an
// agent.
type Credential struct {
	// Config connects to the hub as the cluster's agent identity.
	Config *rest.Config
	// Hub is the Secret's kubeconfig: the hub's server, CA and proxy, with
	// the credential.
	Hub *kubeconfig.Info
	// ClusterName is the managed cluster's name, i.e. its namespace on the
	// hub.
	ClusterName string
	// AgentID is the agent ID of the cluster's agent identity.
	AgentID string
	// Fingerprint changes whenever anything above or the credential changes,
	// but for a token read from the Secret's token key: a refreshed token
	// is handed to the running session (Config sends the current one)
	// rather than starting a new session.
	Fingerprint string
	// token is the bearer token Config sends, nil for a client certificate.
	token *bearerToken
}

// bearerToken is the current token of a token credential, which Config's
// transport sends (an oauth2.TokenSource for client-go's
// transport.TokenSourceWrapTransport). Run replaces it when the token is
// refreshed.
type bearerToken struct{ v atomic.Pointer[string] }

func (b *bearerToken) set(token string) { b.v.Store(&token) }

// Token returns the current token.
func (b *bearerToken) Token() (*oauth2.Token, error) {
	return &oauth2.Token{AccessToken: *b.v.Load(), TokenType: "Bearer"}, nil
}

// BearerToken returns the current token of a token credential, empty for a
// client certificate: for connections that do not go through Config's
// transport, such as a WebSocket.
func (c *Credential) BearerToken() string {
	if c.token == nil {
		return ""
	}
	return *c.token.v.Load()
}

// Parse reads the hub credential Secret s (kubeconfig.ReadHubCredential,
// which also reads OCM's Secrets, whose kubeconfig names tls.crt and tls.key
// by file). clusterName, when not empty, overrides the Secret's
// cluster-name.
func Parse(s *corev1.Secret, clusterName string) (*Credential, error) {
	cred, err := kubeconfig.ReadHubCredential(s.Data)
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	cfg, err := cred.Kubeconfig.RESTConfig()
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	if clusterName == "" {
		clusterName = cred.ClusterName
	}
	if clusterName == "" {
		return nil, errors.New("no cluster name: the Secret has no " + kubeconfig.ClusterNameKey + " and none was configured")
	}
	fp := sha256.New()
	for _, part := range [][]byte{s.Data[kubeconfig.KubeconfigKey], cfg.CertData, cfg.KeyData, []byte(clusterName), []byte(cred.AgentName)} {
		fp.Write(part)
		fp.Write([]byte{0})
	}
	var token *bearerToken
	if cfg.BearerToken != "" {
		token = &bearerToken{}
		token.set(cfg.BearerToken)
		cfg.BearerToken, cfg.BearerTokenFile = "", ""
		cfg.WrapTransport = transport.TokenSourceWrapTransport(token)
	}
	return &Credential{
		token:       token,
		Config:      cfg,
		Hub:         cred.Kubeconfig,
		ClusterName: clusterName,
		AgentID:     cred.AgentName,
		Fingerprint: hex.EncodeToString(fp.Sum(nil)),
	}, nil
}

// Options say where the hub credential Secret is.
type Options struct {
	// Config reaches the cluster that holds the Secret: the cluster the
	// agent runs on (the hosting cluster in Hosted mode).
	Config *rest.Config
	// Namespace and Secret name the Secret.
	Namespace, Secret string
	// ClusterName, when not empty, overrides the Secret's cluster-name.
	ClusterName string
	// RetryDelay is the wait before a new session after one failed;
	// DefaultRetryDelay when zero.
	RetryDelay time.Duration
}

// Session runs against the hub with cred until ctx ends (nil) or it cannot
// go on (the error, logged; Run starts a new session after the retry
// delay).
type Session func(ctx context.Context, cred *Credential) error

// Run watches the hub credential Secret until ctx ends and keeps one session
// running with its current usable content. A Secret that is missing or not
// usable yet is waited for; one that disappears leaves the running session
// alone until it fails. It logs through ctrl.LoggerFrom(ctx) and returns
// nil when ctx ends, or an error when the Secret cannot be watched. The
// agent needs list and watch on Secrets in opts.Namespace.
func Run(ctx context.Context, opts Options, session Session) error {
	log := ctrl.LoggerFrom(ctx)
	if opts.RetryDelay <= 0 {
		opts.RetryDelay = DefaultRetryDelay
	}
	ref := opts.Namespace + "/" + opts.Secret
	w, err := watchSecret(ctx, opts, ref)
	if err != nil {
		return err
	}
	defer w.factory.Shutdown()
	log.Info("Watching the hub credential", "secret", ref)
	if !toolscache.WaitForCacheSync(ctx.Done(), w.synced) {
		return nil
	}
	secrets, changed := w.lister, w.changed

	var cur *running
	defer func() { cur.stop() }()
	lastState := ""
	report := func(state string, keysAndValues ...any) {
		if state != lastState {
			log.Info(state, append([]any{"secret", ref}, keysAndValues...)...)
			lastState = state
		}
	}
	for {
		s, err := secrets.Get(opts.Secret)
		switch {
		case apierrors.IsNotFound(err) && cur == nil:
			report("Waiting for the hub credential Secret; the registration agent writes it once the cluster is accepted on the hub")
		case apierrors.IsNotFound(err):
			report("The hub credential Secret is gone; keeping the current hub connection until it fails")
		case err != nil:
			report("Cannot read the hub credential Secret", "error", err.Error())
		default:
			cred, perr := Parse(s, opts.ClusterName)
			switch {
			case perr != nil:
				report("The hub credential Secret is not usable yet", "reason", perr.Error())
			case cur != nil && cur.cred.Fingerprint == cred.Fingerprint && cur.cred.token != nil && cred.token != nil:
				// The same credential but perhaps a refreshed token: the
				// session sends it from its next request on.
				cur.cred.token.set(*cred.token.v.Load())
			case cur == nil || cur.cred.Fingerprint != cred.Fingerprint:
				if cur != nil {
					log.Info("The hub credential changed; reconnecting to the hub")
					cur.stop()
				}
				lastState = ""
				log.Info("Connecting to the hub", "secret", ref, "hub", cred.Config.Host, "cluster", cred.ClusterName, "agentID", cred.AgentID)
				cur = start(ctx, cred, session)
			}
		}
		var done <-chan struct{}
		if cur != nil {
			done = cur.done
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			continue
		case <-done:
		}
		if cur.err != nil {
			log.Error(cur.err, "Hub session ended; starting a new one", "after", opts.RetryDelay)
		}
		cur, lastState = nil, ""
		if !waitRetry(ctx, changed, opts.RetryDelay) {
			return nil
		}
	}
}

// waitRetry waits for delay, or a change of the Secret, before a session
// is started again; false when ctx ended first.
func waitRetry(ctx context.Context, changed <-chan struct{}, delay time.Duration) bool {
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-changed:
	case <-t.C:
	}
	return true
}

// secretWatch is an informer on the hub credential Secret alone.
type secretWatch struct {
	factory informers.SharedInformerFactory
	lister  corelisters.SecretNamespaceLister
	synced  toolscache.InformerSynced
	// changed receives a signal after the Secret changed; signals not yet
	// received are coalesced into one.
	changed chan struct{}
}

// watchSecret starts the informer on the Secret opts names until ctx ends;
// the caller shuts its factory down.
func watchSecret(ctx context.Context, opts Options, ref string) (*secretWatch, error) {
	kube, err := kubernetes.NewForConfig(opts.Config)
	if err != nil {
		return nil, fmt.Errorf("create a client to watch Secret %s: %w", ref, err)
	}
	w := &secretWatch{changed: make(chan struct{}, 1)}
	signal := func(any) {
		select {
		case w.changed <- struct{}{}:
		default:
		}
	}
	w.factory = informers.NewSharedInformerFactoryWithOptions(kube, 0,
		informers.WithNamespace(opts.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", opts.Secret).String()
		}))
	secrets := w.factory.Core().V1().Secrets()
	if _, err := secrets.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    signal,
		UpdateFunc: func(_, obj any) { signal(obj) },
		DeleteFunc: signal,
	}); err != nil {
		return nil, fmt.Errorf("watch Secret %s: %w", ref, err)
	}
	w.lister = secrets.Lister().Secrets(opts.Namespace)
	w.synced = secrets.Informer().HasSynced
	w.factory.Start(ctx.Done())
	return w, nil
}

// running is one session: run with one credential until it fails or is
// stopped.
type running struct {
	cred   *Credential
	cancel context.CancelFunc
	done   chan struct{}
	// err is why the session ended; read it after done is closed.
	err error
}

// start runs session with cred in the background.
func start(ctx context.Context, cred *Credential, session Session) *running {
	ctx, cancel := context.WithCancel(ctx)
	r := &running{cred: cred, cancel: cancel, done: make(chan struct{})}
	log := ctrl.LoggerFrom(ctx).WithValues("cluster", cred.ClusterName)
	go func() {
		defer close(r.done)
		r.err = session(ctrl.LoggerInto(ctx, log), cred)
		if ctx.Err() != nil {
			r.err = nil
		}
	}()
	return r
}

// stop ends the session and waits for it; a nil session is a no-op.
func (r *running) stop() {
	if r == nil {
		return
	}
	r.cancel()
	<-r.done
}
