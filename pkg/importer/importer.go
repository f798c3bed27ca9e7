package importer

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// The import Secret: a Secret of this name in a cluster's namespace on the
// hub asks the importer to install the Klusterlet on that cluster with the
// credential it holds, as RHACM's auto-import-secret does.
const (
	// SecretName is the import Secret's name.
	SecretName = "auto-import-secret"
	// KubeconfigKey holds a kubeconfig for the cluster; its current context
	// is used.
	KubeconfigKey = "kubeconfig"
	// ServerKey and TokenKey hold, instead of a kubeconfig, the cluster's
	// API server URL and a bearer token.
	ServerKey = "server"
	TokenKey  = "token"
	// CAKey holds, with ServerKey and TokenKey, the PEM CA bundle that
	// verifies the server; without it the system's roots do.
	CAKey = "ca.crt"
	// RetryKey holds how many times a failed import is tried again with
	// the same Secret; without it the importer tries until the Secret
	// changes or is deleted.
	RetryKey = "autoImportRetry"
	// KeepAnnotation set to "true" on the Secret keeps it after a
	// successful import; otherwise the importer deletes it.
	KeepAnnotation = "managedcluster-import-controller.open-cluster-management.io/keeping-auto-import-secret"
	// ImportedAnnotation is what the importer writes on a kept Secret once
	// it imported the cluster with it: the hash of its data (DataHash). A
	// kept Secret is used again only when its data changes.
	ImportedAnnotation = "import.open-cluster-management.io/imported-data-hash"
)

// The import configuration: the klusterlet chart's values, in a Secret of
// this name in a cluster's namespace, that the importer's renderer
// render-from-config-secret installs the cluster with (OCM's
// cluster-import-config).
const (
	// ConfigSecretName is the import configuration Secret's name.
	ConfigSecretName = "cluster-import-config"
	// ConfigValuesKey holds the values, as YAML.
	ConfigValuesKey = "values.yaml"
)

// NewConfigSecret returns the import configuration Secret of cluster,
// holding the klusterlet chart's values.
func NewConfigSecret(cluster string, values []byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: ConfigSecretName, Labels: map[string]string{clusterv1.ClusterNameLabelKey: cluster}},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{ConfigValuesKey: values},
	}
}

// The condition the importer sets on the ManagedCluster, with OCM's reasons.
const (
	// ConditionImportSucceeded says whether the importer installed the
	// Klusterlet; the cluster's agent then registers as a joining agent
	// does.
	ConditionImportSucceeded = "ManagedClusterImportSucceeded"

	ReasonKubeConfigNotFound   = "KubeConfigNotFound"
	ReasonKubeConfigGetFailed  = "KubeConfigGetFailed"
	ReasonConfigRendererFailed = "ConfigRendererFailed"
	ReasonImportFailed         = "ImportFailed"
	ReasonImportSucceed        = "ImportSucceed"
)

// BootstrapTokenDuration is how long the bootstrap token the importer hands
// a cluster's agent is valid: the agent uses it within minutes of the
// import, once for its first certificate request.
const BootstrapTokenDuration = 24 * time.Hour

// ReadCredential returns the client configuration of an import Secret's
// data: a kubeconfig (KubeconfigKey), or a server and token (ServerKey,
// TokenKey, optionally CAKey). The error names the key at fault and what to
// put there; it never quotes the credential.
func ReadCredential(data map[string][]byte) (*rest.Config, error) {
	kc, server, token := data[KubeconfigKey], string(data[ServerKey]), string(data[TokenKey])
	switch {
	case len(kc) > 0 && (server != "" || token != ""):
		return nil, fmt.Errorf("it holds both a %s and a %s/%s: keep one of them", KubeconfigKey, ServerKey, TokenKey)
	case len(kc) > 0:
		cfg, err := clientcmd.Load(kc)
		if err != nil {
			return nil, fmt.Errorf("key %s does not hold a kubeconfig: %w", KubeconfigKey, err)
		}
		return FromKubeconfig(cfg, "")
	case server == "" && token == "":
		return nil, fmt.Errorf("it holds neither a %s nor a %s and %s: write the cluster's kubeconfig under %s", KubeconfigKey, ServerKey, TokenKey, KubeconfigKey)
	case server == "":
		return nil, fmt.Errorf("it holds a %s without a %s: write both, or a kubeconfig under %s", TokenKey, ServerKey, KubeconfigKey)
	case token == "":
		return nil, fmt.Errorf("it holds a %s without a %s: write both, or a kubeconfig under %s", ServerKey, TokenKey, KubeconfigKey)
	}
	if err := checkServer(ServerKey, server); err != nil {
		return nil, err
	}
	cfg := &rest.Config{Host: server, BearerToken: strings.TrimSpace(token)}
	cfg.CAData = data[CAKey]
	return cfg, nil
}

// FromKubeconfig returns the client configuration of context contextName
// of cfg (its current context when empty), built from the kubeconfig's own
// data only. It refuses what would make the reader run a command or read a
// file of its own (exec, auth providers, file paths), skip TLS
// verification, go through a proxy or impersonate, naming the field.
func FromKubeconfig(cfg *clientcmdapi.Config, contextName string) (*rest.Config, error) {
	ctxName := contextName
	if ctxName == "" {
		ctxName = cfg.CurrentContext
	}
	if ctxName == "" {
		return nil, errors.New("the kubeconfig has no current context: set one, or name the context")
	}
	kctx, ok := cfg.Contexts[ctxName]
	if !ok {
		return nil, fmt.Errorf("the kubeconfig has no context %q (it has %s)", ctxName, names(cfg.Contexts))
	}
	cluster, ok := cfg.Clusters[kctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("context %q names cluster %q, which the kubeconfig does not hold", ctxName, kctx.Cluster)
	}
	user, ok := cfg.AuthInfos[kctx.AuthInfo]
	if !ok {
		return nil, fmt.Errorf("context %q names user %q, which the kubeconfig does not hold", ctxName, kctx.AuthInfo)
	}
	if err := checkServer("the kubeconfig's server", cluster.Server); err != nil {
		return nil, err
	}
	var refused []string
	refuse := func(set bool, field string) {
		if set {
			refused = append(refused, field)
		}
	}
	refuse(cluster.CertificateAuthority != "", "certificate-authority (a file)")
	refuse(cluster.InsecureSkipTLSVerify, "insecure-skip-tls-verify")
	refuse(cluster.ProxyURL != "", "proxy-url")
	refuse(user.Exec != nil, "exec")
	refuse(user.AuthProvider != nil, "auth-provider")
	refuse(user.TokenFile != "", "tokenFile")
	refuse(user.ClientCertificate != "", "client-certificate (a file)")
	refuse(user.ClientKey != "", "client-key (a file)")
	refuse(user.Impersonate != "" || user.ImpersonateUID != "" || len(user.ImpersonateGroups) > 0 || len(user.ImpersonateUserExtra) > 0, "as (impersonation)")
	refuse(user.Username != "" || user.Password != "", "username/password")
	if len(refused) > 0 {
		return nil, fmt.Errorf("the kubeconfig's context %q uses %s, which an import credential may not: embed the certificates (kubectl config view --minify --flatten) and use a token or client certificate", ctxName, strings.Join(refused, ", "))
	}
	if user.Token == "" && (len(user.ClientCertificateData) == 0 || len(user.ClientKeyData) == 0) {
		return nil, fmt.Errorf("the kubeconfig's context %q has no token and no client certificate and key: the importer needs a credential that may install the Klusterlet (cluster-admin)", ctxName)
	}
	return &rest.Config{
		Host:        cluster.Server,
		BearerToken: user.Token,
		TLSClientConfig: rest.TLSClientConfig{
			ServerName: cluster.TLSServerName,
			CAData:     cluster.CertificateAuthorityData,
			CertData:   user.ClientCertificateData,
			KeyData:    user.ClientKeyData,
		},
	}, nil
}

// checkServer checks that server, the value of what, is an https URL.
func checkServer(what, server string) error {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s %q is not a URL: write the cluster's API server URL, https://HOST:PORT", what, server)
	}
	if u.Scheme != "https" {
		return fmt.Errorf("%s %q is not https: the importer sends the credential over TLS only", what, server)
	}
	return nil
}

// names lists the keys of m, sorted.
func names[V any](m map[string]V) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, fmt.Sprintf("%q", k))
	}
	if len(out) == 0 {
		return "none"
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// NewSecret returns the import Secret of cluster holding kubeconfig, kept
// after the import when keep.
func NewSecret(cluster string, kubeconfig []byte, keep bool) *corev1.Secret {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: SecretName, Labels: map[string]string{clusterv1.ClusterNameLabelKey: cluster}},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{KubeconfigKey: kubeconfig},
	}
	if keep {
		s.Annotations = map[string]string{KeepAnnotation: "true"}
	}
	return s
}

// Kept reports whether s asks to be kept after a successful import.
func Kept(s *corev1.Secret) bool {
	return strings.EqualFold(s.Annotations[KeepAnnotation], "true")
}

// Kubeconfig returns a kubeconfig holding cfg, a configuration
// ReadCredential or FromKubeconfig returned, with every certificate
// embedded: what `kubectl ocm import` writes into the import Secret.
func Kubeconfig(cfg *rest.Config) ([]byte, error) {
	const name = "import"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, TLSServerName: cfg.ServerName}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	return clientcmd.Write(*kc)
}

// DataHash returns the hash of an import Secret's data that
// ImportedAnnotation records.
func DataHash(data map[string][]byte) string {
	h := sha256.New()
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(h, "%d:%s%d:", len(k), k, len(data[k]))
		h.Write(data[k])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Retries returns how many times a failed import with data is tried again
// (RetryKey), -1 for without end.
func Retries(data map[string][]byte) (int, error) {
	v, ok := data[RetryKey]
	if !ok {
		return -1, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(v)))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("key %s is %q, not a number of retries: write 0 or more, or remove it to retry until the import succeeds", RetryKey, v)
	}
	return n, nil
}

// Note returns what the importer appends to its condition's message: the
// version of the import Secret it used and, for a failure, the attempt
// with that version. `kubectl ocm import --wait` reads it (ForVersion) to
// tell the outcome of its own Secret from an earlier one.
func Note(secretVersion string, attempt int) string {
	if attempt > 0 {
		return fmt.Sprintf(" (import Secret version %s, attempt %d)", secretVersion, attempt)
	}
	return fmt.Sprintf(" (import Secret version %s)", secretVersion)
}

// ForVersion reports whether message, of the import condition, is about
// the import Secret at resourceVersion secretVersion.
func ForVersion(message, secretVersion string) bool {
	return strings.Contains(message, "(import Secret version "+secretVersion+")") ||
		strings.Contains(message, "(import Secret version "+secretVersion+", attempt ")
}

// Cluster API's kubeconfig Secret of a Cluster: <cluster>-kubeconfig in the
// Cluster's namespace, the kubeconfig under key value.
const CAPIKubeconfigKey = "value"

// CAPIAnnotation, on a ManagedCluster, names the Cluster API Cluster
// (namespace/name) it is imported from, as in OCM. Without it a
// ManagedCluster is imported from the Cluster of its name in the namespace
// of its name. Whoever sets it must be able to update that Cluster (the hub's
// admission policy capi-annotation.open-cluster-management.io).
const CAPIAnnotation = "cluster.x-k8s.io/cluster"

// CAPIKubeconfigSecret returns the name of the kubeconfig Secret of
// Cluster API Cluster cluster.
func CAPIKubeconfigSecret(cluster string) string { return cluster + "-kubeconfig" }
