package kubeconfig

import (
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Keys of the Secrets that hold an agent's kubeconfigs and credentials, as
// OCM names them. A hub-credential Secret (see HubCredential) holds all of
// KubeconfigKey, TLSCertKey, TLSKeyKey, ClusterNameKey and AgentNameKey, and
// an add-on's also AddonNameKey; the bootstrap and the managed cluster's
// kubeconfig Secrets hold KubeconfigKey.
const (
	// KubeconfigKey holds a kubeconfig.
	KubeconfigKey = "kubeconfig"
	// TLSCertKey holds the PEM client certificate.
	TLSCertKey = corev1.TLSCertKey
	// TLSKeyKey holds the PEM private key of the client certificate.
	TLSKeyKey = corev1.TLSPrivateKeyKey
	// ClusterNameKey holds the managed cluster's name.
	ClusterNameKey = "cluster-name"
	// AgentNameKey holds the agent ID, the last part of the agent's identity.
	AgentNameKey = "agent-name"
	// AddonNameKey holds the add-on's name in an add-on agent's
	// hub-credential Secret <addon>-hub-kubeconfig.
	AddonNameKey = "addon-name"
	// CSRNameKey is a key of the Secret that keeps a credential still being
	// requested, next to its private key (TLSKeyKey), ClusterNameKey and
	// AgentNameKey: the name of the pending CertificateSigningRequest, so that
	// a restarted agent waits for it instead of filing another.
	CSRNameKey = "csr-name"
)

// FromSecret reads the kubeconfig under KubeconfigKey of a Secret's data: its
// current context, with its credentials.
//
// OCM mounts these Secrets as directories, and the kubeconfig it writes
// names the client certificate and key by file (tls.crt, tls.key, resolved
// next to the kubeconfig). So a file the kubeconfig names (certificate-
// authority, client-certificate, client-key, tokenFile) whose base name is a
// key of the same Secret is read from that key, wherever the Secret would be
// mounted. Any other file is an error naming it: it does not exist where an
// agent reads the Secret. Writers embed the data instead (HubCredentialData).
// An exec credential plugin or an auth provider is an error too: the agent
// runs nothing a Secret names.
func FromSecret(data map[string][]byte) (*Info, error) {
	raw := data[KubeconfigKey]
	if len(raw) == 0 {
		return nil, fmt.Errorf("key %s is missing", KubeconfigKey)
	}
	info, err := parse(raw, data)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", KubeconfigKey, err)
	}
	return info, nil
}

// parse reads the current context of the kubeconfig raw, the key
// KubeconfigKey of secret. Files it names are read from the keys of secret
// (see FromSecret).
func parse(raw []byte, secret map[string][]byte) (*Info, error) {
	loaded, err := clientcmd.Load(raw)
	if err != nil {
		return nil, fmt.Errorf("decode kubeconfig: %w", err)
	}
	ctx, ok := loaded.Contexts[loaded.CurrentContext]
	if !ok {
		return nil, fmt.Errorf("kubeconfig has no current context (current-context %q)", loaded.CurrentContext)
	}
	cluster, ok := loaded.Clusters[ctx.Cluster]
	if !ok || cluster.Server == "" {
		return nil, fmt.Errorf("kubeconfig context %q names no cluster with a server", loaded.CurrentContext)
	}
	// Keep the current context only, so that nothing else is resolved or used.
	// This is not clientcmdapi.MinifyConfig: that refuses a context whose
	// user is missing, and an empty current-context, and drops a cluster or
	// user named "", all of which client-go's loader accepts.
	kc := clientcmdapi.NewConfig()
	kc.CurrentContext = loaded.CurrentContext
	kc.Contexts[loaded.CurrentContext] = ctx.DeepCopy()
	kc.Clusters[ctx.Cluster] = cluster.DeepCopy()
	cluster = kc.Clusters[ctx.Cluster]
	auth := &clientcmdapi.AuthInfo{}
	if a, ok := loaded.AuthInfos[ctx.AuthInfo]; ok {
		auth = a.DeepCopy()
	}
	kc.AuthInfos[ctx.AuthInfo] = auth
	// The agent runs no command and no provider a Secret names: an exec
	// plugin would run whatever the Secret's writer chose in the agent's
	// container, with its credentials.
	switch {
	case auth.Exec != nil:
		return nil, fmt.Errorf("kubeconfig user %q runs the exec credential plugin %q, which the agent does not run; use a client certificate or a token embedded in the Secret", ctx.AuthInfo, auth.Exec.Command)
	case auth.AuthProvider != nil:
		return nil, fmt.Errorf("kubeconfig user %q uses the auth provider %q, which the agent does not run; use a client certificate or a token embedded in the Secret", ctx.AuthInfo, auth.AuthProvider.Name)
	}

	r := resolver{secret: secret}
	r.embed("certificate-authority", &cluster.CertificateAuthority, &cluster.CertificateAuthorityData)
	r.embed("client-certificate", &auth.ClientCertificate, &auth.ClientCertificateData)
	r.embed("client-key", &auth.ClientKey, &auth.ClientKeyData)
	var token []byte
	if r.embed("tokenFile", &auth.TokenFile, &token) {
		auth.Token = string(token)
	}
	if r.err != nil {
		return nil, r.err
	}
	return &Info{
		Server: cluster.Server, CAData: cluster.CertificateAuthorityData, ProxyURL: cluster.ProxyURL,
		Token: auth.Token, CertData: auth.ClientCertificateData, KeyData: auth.ClientKeyData,
		config: kc,
	}, nil
}

// resolver replaces the files a kubeconfig names by keys of a Secret,
// keeping the first error.
type resolver struct {
	secret map[string][]byte
	err    error
}

// embed moves the data of the file *file names (the kubeconfig field field)
// into *data and clears *file. It reports whether it embedded a file.
func (r *resolver) embed(field string, file *string, data *[]byte) bool {
	if *file == "" || r.err != nil {
		return false
	}
	key := path.Base(*file)
	content := r.secret[key]
	if len(content) == 0 {
		r.err = fmt.Errorf("kubeconfig names file %s (%s), which is not a key of the Secret; add it to the Secret under key %s, or embed its data instead (kubectl config view --flatten --minify)", *file, field, key)
		return false
	}
	*data, *file = content, ""
	return true
}
