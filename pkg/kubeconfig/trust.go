package kubeconfig

import (
	"errors"
	"fmt"
	"maps"
	"path"

	"k8s.io/client-go/tools/clientcmd"
)

// WithCAData returns a copy of the data of a Secret holding a kubeconfig
// (KubeconfigKey) whose current context's cluster trusts the PEM bundle ca
// instead of what it trusted: the agent follows a hub CA rotation so
// (certs.UpdateTrust). Everything else of the kubeconfig and the Secret is
// kept; a CA the kubeconfig named by file, a key of the Secret (see
// FromSecret), is rewritten in that key.
func WithCAData(data map[string][]byte, ca []byte) (map[string][]byte, error) {
	if len(ca) == 0 {
		return nil, errors.New("the CA bundle is empty")
	}
	raw := data[KubeconfigKey]
	if len(raw) == 0 {
		return nil, fmt.Errorf("key %s is missing", KubeconfigKey)
	}
	kc, err := clientcmd.Load(raw)
	if err != nil {
		return nil, fmt.Errorf("key %s: decode kubeconfig: %w", KubeconfigKey, err)
	}
	ctx, ok := kc.Contexts[kc.CurrentContext]
	if !ok {
		return nil, fmt.Errorf("key %s: kubeconfig has no current context (current-context %q)", KubeconfigKey, kc.CurrentContext)
	}
	cluster, ok := kc.Clusters[ctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("key %s: kubeconfig context %q names no cluster", KubeconfigKey, kc.CurrentContext)
	}
	out := maps.Clone(data)
	if file := cluster.CertificateAuthority; file != "" {
		if key := path.Base(file); len(data[key]) > 0 {
			out[key] = ca
			return out, nil
		}
	}
	cluster.CertificateAuthority, cluster.CertificateAuthorityData = "", ca
	if out[KubeconfigKey], err = clientcmd.Write(*kc); err != nil {
		return nil, fmt.Errorf("encode kubeconfig: %w", err)
	}
	return out, nil
}
