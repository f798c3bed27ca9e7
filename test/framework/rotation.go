package framework

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/atomicfile"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/process"
)

// A cluster's CAs rotate as an administrator rotates them, in steps that
// each keep every client that follows the published CAs working:
//
// Serving CA (the CA clients verify the API server with):
//
//  1. AddServingCA: a new CA joins the root CA bundle the controller manager
//     publishes in every namespace's ConfigMap kube-root-ca.crt, and the
//     CAs the framework's own clients trust (CAData, the kubeconfig).
//  2. ServeWithNewCA: the API server restarts with a serving certificate of
//     the new CA.
//  3. RemoveOldServingCA: the old CA leaves the published bundle and the
//     framework's trust.
//
// Client CA (the CA the API server authenticates client certificates with,
// and the controller manager signs approved CSRs with):
//
//  1. AddClientCA: the API server accepts certificates of a new CA too.
//  2. SignWithNewClientCA: the controller manager signs with the new CA; the
//     framework's own credentials come from it.
//  3. RemoveOldClientCA: the API server no longer accepts the old CA.
//
// On a cluster with a node, the steps that change what the node's clients
// of the API server (kube-scheduler, kubelet, kube-proxy) need give them new
// kubeconfigs and restart them, as an administrator does: AddServingCA and
// RemoveOldServingCA (the CAs they trust), SignWithNewClientCA (their
// certificates). Pods keep the CAs their clients loaded when they started:
// add the serving CA before starting the Pods that must live through the
// serving certificate's change, or expect them to restart (the projected
// kube-root-ca.crt follows the published bundle).

// AddServingCA creates a new serving CA for cluster c and adds it to the
// root CA bundle its controller manager publishes (a restart of the
// controller manager with the new --root-ca-file) and to the CAs the
// framework's clients trust. The API server keeps serving with the old CA.
func (e *Environment) AddServingCA(ctx context.Context, c *Cluster) error {
	if c.nextServingCA != nil {
		return fmt.Errorf("cluster %s: a serving CA rotation is already under way", c.Name)
	}
	next, err := newAuthority(fmt.Sprintf("%s-serving-ca-%d", c.Name, time.Now().UnixNano()))
	if err != nil {
		return err
	}
	c.nextServingCA = next
	trusted := slices.Concat(c.servingCA.certPEM, next.certPEM)
	if err := e.setTrusted(ctx, c, trusted); err != nil {
		return err
	}
	if err := e.restartNodeClients(ctx, c); err != nil {
		return err
	}
	e.logf("cluster %s: serving CA %s added to the published bundle", c.Name, next.cert.Subject.CommonName)
	return nil
}

// ServeWithNewCA restarts cluster c's API server with a serving certificate
// of the CA AddServingCA added.
func (e *Environment) ServeWithNewCA(ctx context.Context, c *Cluster) error {
	if c.nextServingCA == nil {
		return fmt.Errorf("cluster %s: no serving CA was added (AddServingCA)", c.Name)
	}
	c.servingCA = c.nextServingCA
	serving, err := c.issueServing()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(c.files.servingCert, serving.certPEM, 0o600); err != nil {
		return err
	}
	if err := atomicfile.Write(c.files.servKey, serving.keyPEM, 0o600); err != nil {
		return err
	}
	if err := c.RestartAPIServer(ctx); err != nil {
		return err
	}
	e.logf("cluster %s: the API server serves with %s", c.Name, c.servingCA.cert.Subject.CommonName)
	return nil
}

// RemoveOldServingCA removes the old serving CA from cluster c's published
// bundle (a restart of the controller manager) and from the CAs the
// framework's clients trust, ending the rotation ServeWithNewCA began.
func (e *Environment) RemoveOldServingCA(ctx context.Context, c *Cluster) error {
	if c.nextServingCA == nil || c.servingCA != c.nextServingCA {
		return fmt.Errorf("cluster %s: the API server does not serve with a new CA yet (ServeWithNewCA)", c.Name)
	}
	c.nextServingCA = nil
	if err := e.setTrusted(ctx, c, c.servingCA.certPEM); err != nil {
		return err
	}
	if err := e.restartNodeClients(ctx, c); err != nil {
		return err
	}
	e.logf("cluster %s: the old serving CA left the published bundle", c.Name)
	return nil
}

// setTrusted makes trusted the CAs cluster c publishes and its framework
// clients trust, and restarts the controller manager, which publishes them.
func (e *Environment) setTrusted(ctx context.Context, c *Cluster, trusted []byte) error {
	if err := atomicfile.Write(c.files.rootCAs, trusted, 0o600); err != nil {
		return err
	}
	c.mu.Lock()
	c.trusted = append([]byte(nil), trusted...)
	c.mu.Unlock()
	c.setAdminConfig()
	if err := e.writeKubeconfig(); err != nil {
		return err
	}
	if err := c.restartControllerManager(ctx); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		return err
	}
	return c.kcm.WaitFor(ctx, "the published root CA bundle (kube-public/kube-root-ca.crt) to change", func(ctx context.Context) (bool, error) {
		cm, err := cs.CoreV1().ConfigMaps("kube-public").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil && cm.Data["ca.crt"] == string(trusted), err
	})
}

// AddClientCA creates a new client CA for cluster c and makes the API
// server accept its certificates besides the old CA's (its --client-ca-file
// is read again when it changes); it returns once the API server does.
func (e *Environment) AddClientCA(ctx context.Context, c *Cluster) error {
	if c.nextClientCA != nil {
		return fmt.Errorf("cluster %s: a client CA rotation is already under way", c.Name)
	}
	next, err := newAuthority(fmt.Sprintf("%s-client-ca-%d", c.Name, time.Now().UnixNano()))
	if err != nil {
		return err
	}
	c.nextClientCA = next
	if err := atomicfile.Write(c.files.clientCAs, slices.Concat(c.ca.certPEM, next.certPEM), 0o600); err != nil {
		return err
	}
	if err := c.waitAuthenticates(ctx, next, true); err != nil {
		return err
	}
	e.logf("cluster %s: the API server accepts client CA %s", c.Name, next.cert.Subject.CommonName)
	return nil
}

// SignWithNewClientCA makes the CA AddClientCA added cluster c's signer: the
// controller manager restarts signing approved CSRs with it, and the
// framework's admin and controller manager credentials come from it.
func (e *Environment) SignWithNewClientCA(ctx context.Context, c *Cluster) error {
	if c.nextClientCA == nil {
		return fmt.Errorf("cluster %s: no client CA was added (AddClientCA)", c.Name)
	}
	c.ca = c.nextClientCA
	if err := atomicfile.Write(c.files.caCert, c.ca.certPEM, 0o600); err != nil {
		return err
	}
	if err := atomicfile.Write(c.files.caKey, c.ca.keyPEM, 0o600); err != nil {
		return err
	}
	admin, err := c.ca.issue(AdminUser, []string{"system:masters"}, nil, nil)
	if err != nil {
		return err
	}
	kcm, err := c.ca.issue("system:kube-controller-manager", nil, nil, nil)
	if err != nil {
		return err
	}
	c.oldAdmin, c.admin, c.kcmCreds = c.admin, admin, kcm
	c.setAdminConfig()
	if err := e.writeKubeconfig(); err != nil {
		return err
	}
	if err := c.restartControllerManager(ctx); err != nil {
		return err
	}
	if err := e.restartNodeClients(ctx, c); err != nil {
		return err
	}
	e.logf("cluster %s: the controller manager signs with %s", c.Name, c.ca.cert.Subject.CommonName)
	return nil
}

// RemoveOldClientCA makes cluster c's API server accept certificates of the
// new client CA only, ending the rotation SignWithNewClientCA began; it
// returns once the API server rejects the old CA's certificates.
func (e *Environment) RemoveOldClientCA(ctx context.Context, c *Cluster) error {
	if c.nextClientCA == nil || c.ca != c.nextClientCA {
		return fmt.Errorf("cluster %s: the controller manager does not sign with a new CA yet (SignWithNewClientCA)", c.Name)
	}
	old, err := oldClientCA(c)
	if err != nil {
		return err
	}
	c.nextClientCA = nil
	if err := atomicfile.Write(c.files.clientCAs, c.ca.certPEM, 0o600); err != nil {
		return err
	}
	if err := c.waitAuthenticates(ctx, old, false); err != nil {
		return err
	}
	e.logf("cluster %s: the API server no longer accepts client CA %s", c.Name, old.cert.Subject.CommonName)
	return nil
}

// oldClientCA returns the CA of the certificates the API server of cluster
// c accepts besides the current client CA, from its --client-ca-file, as an
// authority without a key.
func oldClientCA(c *Cluster) (*authority, error) {
	bundle, err := os.ReadFile(c.files.clientCAs)
	if err != nil {
		return nil, err
	}
	cas, err := cert.ParseCertsPEM(bundle)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %s: %w", c.Name, c.files.clientCAs, err)
	}
	for _, ca := range cas {
		if !ca.Equal(c.ca.cert) {
			return &authority{cert: ca, certPEM: encodeCert(ca.Raw)}, nil
		}
	}
	return nil, fmt.Errorf("cluster %s: no old client CA in %s", c.Name, c.files.clientCAs)
}

// waitAuthenticates waits until cluster c's API server authenticates a
// client certificate of ca (accept) or rejects it (!accept). Without ca's
// key (an old CA), the check uses the admin certificate ca issued earlier.
func (c *Cluster) waitAuthenticates(ctx context.Context, ca *authority, accept bool) error {
	var creds keyPair
	switch {
	case ca.key != nil:
		kp, err := ca.issue("kubectl-ocm-ca-probe", nil, nil, nil)
		if err != nil {
			return err
		}
		creds = kp
	default:
		creds = c.oldAdmin
	}
	cs, err := kubernetes.NewForConfig(c.configWith(rest.TLSClientConfig{CertData: creds.certPEM, KeyData: creds.keyPEM}))
	if err != nil {
		return err
	}
	what := "accepts"
	if !accept {
		what = "rejects"
	}
	return c.apiserver.WaitFor(ctx, fmt.Sprintf("the API server %s certificates of %s", what, ca.cert.Subject.CommonName), func(ctx context.Context) (bool, error) {
		_, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err == nil {
			return accept, nil
		}
		return !accept && apierrors.IsUnauthorized(err), nil
	})
}

// restartControllerManager stops cluster c's kube-controller-manager and
// starts it again with its kubeconfig rewritten for the current CAs and
// credentials.
func (c *Cluster) restartControllerManager(ctx context.Context) error {
	if err := c.StopControllerManager(); err != nil {
		return err
	}
	return c.StartControllerManager(ctx)
}

// StopControllerManager stops cluster c's kube-controller-manager and
// leaves it stopped until StartControllerManager. Meanwhile no controller of
// it runs: nothing signs approved certificate requests, and the root CA
// publisher does not put back a namespace's kube-root-ca.crt that someone
// edited, as it otherwise does within moments.
func (c *Cluster) StopControllerManager() error {
	old := c.kcm
	if old == nil {
		return nil
	}
	if err := old.Stop(10 * time.Second); err != nil {
		return fmt.Errorf("stop the controller manager of cluster %s: %w", c.Name, err)
	}
	c.procs = slices.DeleteFunc(c.procs, func(p *process.Process) bool { return p == old })
	c.kcm = nil
	return nil
}

// StartControllerManager starts cluster c's kube-controller-manager, stopped
// by StopControllerManager, with its kubeconfig rewritten for the current
// CAs and credentials, and waits until it has published the root CA.
func (c *Cluster) StartControllerManager(ctx context.Context) error {
	if c.kcm != nil {
		return fmt.Errorf("the controller manager of cluster %s is running", c.Name)
	}
	kcmCfg := c.configWith(rest.TLSClientConfig{CertData: c.kcmCreds.certPEM, KeyData: c.kcmCreds.keyPEM})
	if err := WriteKubeconfig(c.files.kcmKubeconfig, c.Name, kcmCfg); err != nil {
		return err
	}
	if err := c.runControllerManager(ctx); err != nil {
		return fmt.Errorf("start the controller manager of cluster %s: %w", c.Name, err)
	}
	return nil
}

// ClientCAData returns the PEM-encoded CA cluster c's controller manager
// signs client certificates with: the cluster CA, until SignWithNewClientCA.
func (c *Cluster) ClientCAData() []byte { return append([]byte(nil), c.ca.certPEM...) }
