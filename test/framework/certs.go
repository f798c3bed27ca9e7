package framework

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/cert"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/host"
)

// certValidity is how long every certificate the framework issues stays valid.
// Environments live for minutes to days; a year is plenty and never rotates mid-run.
const certValidity = 365 * 24 * time.Hour

// authority is a certificate authority with its private key, used per cluster
// to sign the API server's serving certificate, client certificates and (through
// kube-controller-manager) approved CSRs.
type authority struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
	keyPEM  []byte
}

// keyPair is a PEM-encoded certificate and private key.
type keyPair struct {
	certPEM []byte
	keyPEM  []byte
}

// newAuthority creates a self-signed CA named commonName.
func newAuthority(commonName string) (*authority, error) {
	key, keyPEM, err := certs.NewPrivateKey()
	if err != nil {
		return nil, err
	}
	caCert, err := cert.NewSelfSignedCACert(cert.Config{CommonName: commonName}, key)
	if err != nil {
		return nil, fmt.Errorf("self-sign CA %s: %w", commonName, err)
	}
	return &authority{cert: caCert, key: key, certPEM: encodeCert(caCert.Raw), keyPEM: keyPEM}, nil
}

// issue signs a new leaf certificate. A certificate with IPs or DNS names is a
// serving certificate; without, a client certificate for user in groups.
func (a *authority) issue(user string, groups []string, ips []net.IP, dnsNames []string) (keyPair, error) {
	key, keyPEM, err := certs.NewPrivateKey()
	if err != nil {
		return keyPair{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return keyPair{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: user, Organization: groups},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		IPAddresses:  ips,
		DNSNames:     dnsNames,
	}
	if len(ips) > 0 || len(dnsNames) > 0 {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, key.Public(), a.key)
	if err != nil {
		return keyPair{}, fmt.Errorf("sign certificate for %s: %w", user, err)
	}
	return keyPair{certPEM: encodeCert(der), keyPEM: keyPEM}, nil
}

func encodeCert(der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// pool returns a certificate pool holding only this authority.
func (a *authority) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(a.cert)
	return p
}

// certFiles are the paths of a cluster's generated credentials.
type certFiles struct {
	// caCert and caKey are the CA kube-controller-manager signs client
	// certificates with.
	caCert, caKey string
	// clientCAs is the API server's --client-ca-file, rootCAs the
	// controller manager's --root-ca-file (the serving CAs it publishes in
	// every namespace's kube-root-ca.crt): the cluster CA, until a CA
	// rotation (rotation.go) adds and removes CAs.
	clientCAs, rootCAs   string
	servingCert, servKey string
	saKey, saPub         string
	kcmKubeconfig        string
	// kubeletClientCert and kubeletClientKey are the API server's
	// credentials towards the kubelet.
	kubeletClientCert, kubeletClientKey string
	// frontProxyCA verifies the requests the API server proxies to an
	// aggregated API server with the user in request headers, sent with
	// frontProxyCert and frontProxyKey (the aggregation layer, as kubeadm
	// sets it up).
	frontProxyCA, frontProxyCert, frontProxyKey string
}

// FrontProxyClient is the name of the client certificate the API servers
// present to aggregated API servers (--requestheader-allowed-names).
const FrontProxyClient = "front-proxy-client"

// writeCertificates creates the cluster CA, the API server's serving
// certificate, the admin and controller-manager client certificates and the
// ServiceAccount signing key, and writes them under the cluster directory.
func (c *Cluster) writeCertificates() (certFiles, error) {
	var err error
	if c.ca, err = newAuthority(c.Name + "-ca"); err != nil {
		return certFiles{}, err
	}
	c.servingCA, c.trusted = c.ca, c.ca.certPEM
	if c.admin, err = c.ca.issue(AdminUser, []string{"system:masters"}, nil, nil); err != nil {
		return certFiles{}, err
	}
	if c.kcmCreds, err = c.ca.issue("system:kube-controller-manager", nil, nil, nil); err != nil {
		return certFiles{}, err
	}
	contents, err := c.issueFiles()
	if err != nil {
		return certFiles{}, err
	}
	f := newCertFiles(c.dir)
	if err := os.MkdirAll(filepath.Dir(f.caCert), 0o700); err != nil {
		return certFiles{}, err
	}
	for path, data := range f.contents(c.ca, contents) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return certFiles{}, err
		}
	}
	c.files = f
	return f, nil
}

// certContents are the credentials of a cluster that its files hold,
// besides the cluster CA's.
type certContents struct {
	serving, kubeletClient keyPair
	frontProxyCA           *authority
	frontProxy             keyPair
	saKeyPEM, saPubPEM     []byte
}

// issueFiles issues the API server's serving certificate and its client
// certificates towards kubelets and aggregated API servers, and makes the
// ServiceAccount signing key.
func (c *Cluster) issueFiles() (certContents, error) {
	var out certContents
	var err error
	if out.serving, err = c.issueServing(); err != nil {
		return out, err
	}
	if out.kubeletClient, err = c.ca.issue("kube-apiserver-kubelet-client", []string{"system:masters"}, nil, nil); err != nil {
		return out, err
	}
	if out.frontProxyCA, err = newAuthority(c.Name + "-front-proxy-ca"); err != nil {
		return out, err
	}
	if out.frontProxy, err = out.frontProxyCA.issue(FrontProxyClient, nil, nil, nil); err != nil {
		return out, err
	}
	saKey, saKeyPEM, err := certs.NewPrivateKey()
	if err != nil {
		return out, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return out, err
	}
	out.saKeyPEM, out.saPubPEM = saKeyPEM, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER})
	return out, nil
}

// newCertFiles returns where the credentials of the cluster whose
// directory is dir go.
func newCertFiles(dir string) certFiles {
	pki := filepath.Join(dir, "pki")
	return certFiles{
		caCert: filepath.Join(pki, "ca.crt"), caKey: filepath.Join(pki, "ca.key"),
		clientCAs: filepath.Join(pki, "client-ca.crt"), rootCAs: filepath.Join(pki, "root-ca.crt"),
		servingCert: filepath.Join(pki, "apiserver.crt"), servKey: filepath.Join(pki, "apiserver.key"),
		saKey: filepath.Join(pki, "sa.key"), saPub: filepath.Join(pki, "sa.pub"),
		kcmKubeconfig:     filepath.Join(dir, "kube-controller-manager.kubeconfig"),
		kubeletClientCert: filepath.Join(pki, "apiserver-kubelet-client.crt"),
		kubeletClientKey:  filepath.Join(pki, "apiserver-kubelet-client.key"),
		frontProxyCA:      filepath.Join(pki, "front-proxy-ca.crt"),
		frontProxyCert:    filepath.Join(pki, "front-proxy-client.crt"),
		frontProxyKey:     filepath.Join(pki, "front-proxy-client.key"),
	}
}

// contents maps the certificate files but the controller manager's
// kubeconfig to what they hold: the cluster CA's of the cluster that
// issued cc.
func (f certFiles) contents(ca *authority, cc certContents) map[string][]byte {
	return map[string][]byte{
		f.caCert: ca.certPEM, f.caKey: ca.keyPEM,
		f.clientCAs: ca.certPEM, f.rootCAs: ca.certPEM,
		f.servingCert: cc.serving.certPEM, f.servKey: cc.serving.keyPEM,
		f.saKey: cc.saKeyPEM, f.saPub: cc.saPubPEM,
		f.kubeletClientCert: cc.kubeletClient.certPEM, f.kubeletClientKey: cc.kubeletClient.keyPEM,
		f.frontProxyCA: cc.frontProxyCA.certPEM, f.frontProxyCert: cc.frontProxy.certPEM, f.frontProxyKey: cc.frontProxy.keyPEM,
	}
}

// issueServing issues the API server's serving certificate from the
// cluster's serving CA.
func (c *Cluster) issueServing() (keyPair, error) {
	ips := []net.IP{loopback}
	if !c.bindIP.Equal(loopback) {
		ips = append(ips, c.bindIP)
	}
	_, svc, err := net.ParseCIDR(c.serviceCIDR)
	if err != nil {
		return keyPair{}, err
	}
	ips = append(ips, host.Gateway(svc))
	return c.servingCA.issue("kube-apiserver", nil, ips, []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", c.Hostname()})
}
