package hub

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/servingcert"
)

// The tunnel's serving certificate, and its TLS profile (ConfigMap
// ocm-tls-profile, which `ocm-controller tunnel` reads at start and watches).
// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=secrets,verbs=get,resourceNames=ocm-hub-tunnel-serving-cert
// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=configmaps,verbs=get;list;watch,resourceNames=ocm-tls-profile

// certificateRefresh is how often the tunnel reads its serving certificate
// again. The hub controller renews it once less than a fifth of its life
// (30 days by default) remains, so a minute is plenty.
const certificateRefresh = time.Minute

// Certificate is the tunnel's serving certificate, read from Secret
// hubtunnel.SecretName, which the hub controller keeps (see the registrar
// package). The tunnel never writes it: its ServiceAccount may read that one
// Secret only.
type Certificate struct {
	// Reader reads the Secret, uncached.
	Reader client.Reader
	// Namespace holds the Secret.
	Namespace string
	// Log receives progress.
	Log logr.Logger

	serving atomic.Pointer[tls.Certificate]

	// mu guards current, the PEM of the loaded certificate and key.
	mu      sync.Mutex
	current []byte

	// first serializes the reads a handshake makes before the first
	// certificate is loaded; tried is when the last one started.
	first sync.Mutex
	tried time.Time
}

// NeedLeaderElection is false: every replica serves.
func (c *Certificate) NeedLeaderElection() bool { return false }

// GetCertificate returns the current serving certificate, for
// tls.Config.GetCertificate. Until one is loaded, a handshake reads the
// Secret itself, at most once a second.
func (c *Certificate) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if cert := c.serving.Load(); cert != nil {
		return cert, nil
	}
	c.first.Lock()
	defer c.first.Unlock()
	if cert := c.serving.Load(); cert != nil || time.Since(c.tried) < time.Second {
		if cert != nil {
			return cert, nil
		}
		return nil, errors.New("the hub tunnel's serving certificate is not loaded yet")
	}
	c.tried = time.Now()
	ctx := hello.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Load(ctx); err != nil {
		return nil, err
	}
	return c.serving.Load(), nil
}

// Load reads the Secret and serves the certificate it holds from now on.
func (c *Certificate) Load(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: c.Namespace, Name: hubtunnel.SecretName}
	if err := c.Reader.Get(ctx, key, secret); err != nil {
		return fmt.Errorf("read the hub tunnel's serving certificate (Secret %s, which the hub controller writes): %w", key, err)
	}
	pem := append(append([]byte{}, secret.Data[servingcert.CertKey]...), secret.Data[servingcert.KeyKey]...)
	if c.serving.Load() != nil && bytes.Equal(pem, c.current) {
		return nil
	}
	pair, err := tls.X509KeyPair(secret.Data[servingcert.CertKey], secret.Data[servingcert.KeyKey])
	if err != nil {
		return fmt.Errorf("the hub tunnel's serving certificate in Secret %s: %w", key, err)
	}
	c.current = pem
	c.serving.Store(&pair)
	c.Log.Info("Loaded the serving certificate", "secret", key.String())
	return nil
}

// Start reads the Secret again every certificateRefresh until ctx ends.
func (c *Certificate) Start(ctx context.Context) error {
	ticker := time.NewTicker(certificateRefresh)
	defer ticker.Stop()
	for {
		if err := c.Load(ctx); err != nil && ctx.Err() == nil {
			c.Log.Error(err, "Reading the serving certificate")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// Loaded is a readiness check: ready once a certificate is loaded.
func (c *Certificate) Loaded(*http.Request) error {
	if c.serving.Load() == nil {
		return errors.New("no serving certificate loaded yet")
	}
	return nil
}
