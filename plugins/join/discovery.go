package join

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	certutil "k8s.io/client-go/util/cert"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusterinfo"
)

// Discovery: how join decides which CA to trust for a hub before it sends
// the bootstrap token, as kubeadm's token discovery does.
//
//   - --ca-file: the file's CAs (which must include a pinned one when
//     --ca-cert-hash is given too).
//   - --ca-cert-hash: join reads the hub's CA bundle anonymously, over a
//     connection it cannot verify yet and that carries no credential
//     (ConfigMap kube-public/kube-root-ca.crt, which `hub init` lets
//     anonymous clients read; else kube-public/cluster-info, which kubeadm
//     clusters publish), adds the certificates of the TLS handshake, and
//     trusts only the CAs among them whose pin was given and that verify the
//     hub's serving certificate.
//   - --insecure-skip-ca-verification: the same anonymous read, trusting
//     whatever CA verifies the serving certificate, with a warning.
//
// Only then does join open a connection that verifies the hub with that CA
// and carries the token (hubConfig).

// maxPublishedCA bounds what join reads of an anonymous answer.
const maxPublishedCA = 1 << 20

// hubCAFlags names the flags that make join verify the hub, for messages.
const hubCAFlags = "--ca-cert-hash (the pin `kubectl ocm hub token` prints on the hub) or --ca-file (the hub's CA bundle)"

// trustHub returns the CA bundle join trusts for the hub, and where it came
// from, having checked that the hub's serving certificate (chain, what the
// hub presented) is signed by it. It sends the hub nothing but anonymous
// requests.
func (o *Options) trustHub(ctx context.Context, chain []*x509.Certificate) ([]byte, string, error) {
	u, err := url.Parse(o.HubAPIServer)
	if err != nil {
		return nil, "", err
	}
	host := u.Hostname()
	if len(o.hubCA) > 0 {
		source := "--ca-file " + o.CAFile
		cas, err := certs.ParseCertificates(o.hubCA)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w; pass a PEM file with the hub's CA certificates", source, err)
		}
		if len(o.pins) > 0 {
			if _, err := certs.VerifyPinned(cas, chain, host, o.pins); err != nil {
				return nil, "", fmt.Errorf("%s does not hold the hub CA of --ca-cert-hash for %s: %v; join sent the hub nothing", source, o.HubAPIServer, err)
			}
		} else {
			fmt.Fprintf(o.ErrOut, "Trusting the CAs of %s for the hub at %s: %s.\n", source, o.HubAPIServer, strings.Join(certs.Pins(cas), ", "))
		}
		return o.hubCA, source, nil
	}
	published, from, fetchErr := o.fetchHubCA(ctx)
	candidates := append(published, chain...)
	if len(o.pins) > 0 {
		trusted, err := certs.VerifyPinned(candidates, chain, host, o.pins)
		if err != nil {
			if len(certs.ServingCAs(candidates, chain, host)) == 0 && fetchErr != nil {
				return nil, "", fmt.Errorf("cannot learn the CA of the hub at %s without a credential: %v, and its TLS handshake presents no CA that signs its certificate; pass the hub's CA bundle with --ca-file", o.HubAPIServer, fetchErr)
			}
			return nil, "", fmt.Errorf("the hub at %s is not the hub of --ca-cert-hash: %v; join sent it nothing. Check the pin with `kubectl ocm hub token` on the hub (a pin changes when the hub's CA key does), or pass the hub's CA bundle with --ca-file", o.HubAPIServer, err)
		}
		bundle, err := certutil.EncodeCertificates(trusted...)
		if err != nil {
			return nil, "", fmt.Errorf("encode the CA of --ca-cert-hash: %w", err)
		}
		return bundle, "the CA of --ca-cert-hash " + strings.Join(certs.Pins(trusted), ", ") + " (" + from + ")", nil
	}
	// --insecure-skip-ca-verification: Validate allows nothing else here.
	trusted := certs.ServingCAs(candidates, chain, host)
	if len(trusted) == 0 {
		why := "no CA it presents signs its serving certificate"
		if fetchErr != nil {
			why = fmt.Sprintf("%v, and its TLS handshake presents no CA that signs its certificate", fetchErr)
		}
		return nil, "", fmt.Errorf("--insecure-skip-ca-verification: cannot learn the CA of the hub at %s: %s; pass the hub's CA bundle with --ca-file", o.HubAPIServer, why)
	}
	pins := certs.Pins(trusted)
	fmt.Fprintf(o.ErrOut, "WARNING: --insecure-skip-ca-verification: trusting the CA %s that the hub at %s presented (%s) over a connection nothing verified. Whoever answered there receives the bootstrap token and becomes this cluster's hub. Compare the pin with what `kubectl ocm hub token` prints on the hub, and pass --ca-cert-hash %s instead.\n",
		strings.Join(pins, ", "), o.HubAPIServer, from, pins[0])
	bundle, err := certutil.EncodeCertificates(trusted...)
	if err != nil {
		return nil, "", fmt.Errorf("encode the CA the hub presented: %w", err)
	}
	return bundle, "the CA the hub presented (" + from + ", not verified)", nil
}

// fetchHubCA reads the CA bundle the hub publishes, anonymously and over a
// connection it cannot verify yet: ConfigMap kube-public/kube-root-ca.crt,
// else the CA of the kubeconfig in kube-public/cluster-info. It returns
// what it found and where, or why it found nothing; the caller trusts none
// of it before checking it against a pin and the hub's serving certificate.
func (o *Options) fetchHubCA(ctx context.Context) ([]*x509.Certificate, string, error) {
	var errs []string
	bundleFrom := "ConfigMap " + certs.HubCABundleRef
	if cm, err := getPublicConfigMap(ctx, o, certs.HubCABundleNamespace, certs.HubCABundleConfigMap); err != nil {
		errs = append(errs, err.Error())
	} else if _, cs, err := certs.HubCABundleOf(cm); err != nil {
		errs = append(errs, err.Error())
	} else {
		return cs, bundleFrom, nil
	}
	infoFrom := "ConfigMap " + clusterinfo.Ref
	if cm, err := getPublicConfigMap(ctx, o, clusterinfo.Namespace, clusterinfo.Name); err != nil {
		errs = append(errs, err.Error())
	} else if cs, err := clusterinfo.CAsOf(cm); err != nil {
		errs = append(errs, fmt.Sprintf("%s: %v", infoFrom, err))
	} else {
		return cs, infoFrom, nil
	}
	return nil, "its TLS handshake", errors.New(strings.Join(errs, "; "))
}

// getPublicConfigMap reads ConfigMap namespace/name from the hub
// anonymously, without verifying the hub.
func getPublicConfigMap(ctx context.Context, o *Options, namespace, name string) (*corev1.ConfigMap, error) {
	ref := namespace + "/" + name
	resp, err := anonymousGet(ctx, o.hubConfig(nil), "/api/v1/namespaces/"+namespace+"/configmaps/"+name)
	if err != nil {
		return nil, fmt.Errorf("read ConfigMap %s anonymously: %w", ref, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPublishedCA))
	if err != nil {
		return nil, fmt.Errorf("read ConfigMap %s anonymously: %w", ref, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("anonymous read of ConfigMap %s: %s", ref, resp.Status)
	}
	cm := &corev1.ConfigMap{}
	if err := json.Unmarshal(body, cm); err != nil {
		return nil, fmt.Errorf("ConfigMap %s: %w", ref, err)
	}
	return cm, nil
}
