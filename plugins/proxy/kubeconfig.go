package proxy

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

// contextSuffix follows the cluster's name in the names of the kubeconfig's
// cluster, user and context: cluster1-via-hub.
const contextSuffix = "-via-hub"

// ContextName is the name of the context (and of the cluster and user) of
// the kubeconfig that reaches cluster through the hub.
func ContextName(cluster string) string { return cluster + contextSuffix }

// HubConfig returns the kubeconfig that flags select (--kubeconfig or
// $KUBECONFIG), merged with the overrides of flags (--context, --user,
// --cluster, --server, --token, --as, ...) exactly as kubectl merges them:
// its current context, and that context's cluster and user, are the ones a
// kubectl command with flags would use.
func HubConfig(flags *genericclioptions.ConfigFlags) (*clientcmdapi.Config, error) {
	loader := flags.ToRawKubeConfigLoader()
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	overrides := configOverrides(flags)
	merged, err := clientcmd.NewNonInteractiveClientConfig(raw, overrides.CurrentContext, overrides, loader.ConfigAccess()).MergedRawConfig()
	if clientcmd.IsEmptyConfig(err) || err == nil && len(raw.Contexts) == 0 && overrides.ClusterInfo.Server == "" {
		return nil, errors.New("no kubeconfig selects a hub: give the hub's kubeconfig with --kubeconfig or KUBECONFIG, and its context with --context")
	}
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	return &merged, nil
}

// configOverrides returns the overrides flags give, as
// genericclioptions.ConfigFlags builds them for its own loader (which does
// not expose them).
func configOverrides(f *genericclioptions.ConfigFlags) *clientcmd.ConfigOverrides {
	o := &clientcmd.ConfigOverrides{ClusterDefaults: clientcmd.ClusterDefaults}
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	if f.CertFile != nil {
		o.AuthInfo.ClientCertificate = *f.CertFile
	}
	if f.KeyFile != nil {
		o.AuthInfo.ClientKey = *f.KeyFile
	}
	if f.BearerToken != nil {
		o.AuthInfo.Token = *f.BearerToken
	}
	set(&o.AuthInfo.Impersonate, f.Impersonate)
	set(&o.AuthInfo.ImpersonateUID, f.ImpersonateUID)
	if f.ImpersonateGroup != nil {
		o.AuthInfo.ImpersonateGroups = *f.ImpersonateGroup
	}
	if f.ImpersonateUserExtra != nil && len(*f.ImpersonateUserExtra) > 0 {
		o.AuthInfo.ImpersonateUserExtra = map[string][]string{}
		for _, extra := range *f.ImpersonateUserExtra {
			if key, value, ok := strings.Cut(extra, "="); ok {
				o.AuthInfo.ImpersonateUserExtra[key] = append(o.AuthInfo.ImpersonateUserExtra[key], value)
			}
		}
	}
	set(&o.AuthInfo.Username, f.Username)
	set(&o.AuthInfo.Password, f.Password)
	set(&o.ClusterInfo.Server, f.APIServer)
	set(&o.ClusterInfo.TLSServerName, f.TLSServerName)
	set(&o.ClusterInfo.CertificateAuthority, f.CAFile)
	set(&o.ClusterInfo.ProxyURL, f.ProxyURL)
	if f.Insecure != nil {
		o.ClusterInfo.InsecureSkipTLSVerify = *f.Insecure
	}
	if f.DisableCompression != nil {
		o.ClusterInfo.DisableCompression = *f.DisableCompression
	}
	set(&o.CurrentContext, f.Context)
	set(&o.Context.Cluster, f.ClusterName)
	set(&o.Context.AuthInfo, f.AuthInfoName)
	set(&o.Context.Namespace, f.Namespace)
	set(&o.Timeout, f.Timeout)
	return o
}

// Kubeconfig returns the kubeconfig that reaches cluster through the
// hub of hub's current context, as that context's user: one cluster, whose
// server is the hub's URL (with its path, if any) followed by
// hubtunnel.ProxyPath(cluster) and whose CA, TLS server name, proxy URL and
// TLS verification are the hub's; one user, a copy of the hub context's
// user; and one context, ContextName(cluster), current, in namespace (empty
// for none). Files the hub's CA, client certificate and key are in are
// read and embedded, so that the kubeconfig stands alone; a token file, an
// exec plugin and an auth provider are kept as they are.
func Kubeconfig(hub *clientcmdapi.Config, cluster, namespace string) (*clientcmdapi.Config, error) {
	hubContext := hub.Contexts[hub.CurrentContext]
	if hubContext == nil {
		return nil, errors.New("the kubeconfig has no current context: select the hub with --context")
	}
	hubCluster := hub.Clusters[hubContext.Cluster]
	if hubCluster == nil || hubCluster.Server == "" {
		return nil, fmt.Errorf("context %q names no cluster with a server: select the hub with --context", hub.CurrentContext)
	}
	server, err := hubtunnel.ServerURL(hubCluster.Server, cluster)
	if err != nil {
		return nil, fmt.Errorf("server of context %q: %w", hub.CurrentContext, err)
	}
	c := &clientcmdapi.Cluster{
		Server:                   server,
		TLSServerName:            hubCluster.TLSServerName,
		InsecureSkipTLSVerify:    hubCluster.InsecureSkipTLSVerify,
		CertificateAuthorityData: hubCluster.CertificateAuthorityData,
		ProxyURL:                 hubCluster.ProxyURL,
		DisableCompression:       hubCluster.DisableCompression,
		Extensions:               hubCluster.Extensions,
	}
	if len(c.CertificateAuthorityData) == 0 && hubCluster.CertificateAuthority != "" {
		if c.CertificateAuthorityData, err = readFile("certificate-authority", hubCluster.CertificateAuthority); err != nil {
			return nil, err
		}
	}
	user := clientcmdapi.NewAuthInfo()
	if hubUser := hub.AuthInfos[hubContext.AuthInfo]; hubUser != nil {
		user = hubUser.DeepCopy()
	}
	if len(user.ClientCertificateData) == 0 && user.ClientCertificate != "" {
		if user.ClientCertificateData, err = readFile("client-certificate", user.ClientCertificate); err != nil {
			return nil, err
		}
	}
	if len(user.ClientKeyData) == 0 && user.ClientKey != "" {
		if user.ClientKeyData, err = readFile("client-key", user.ClientKey); err != nil {
			return nil, err
		}
	}
	user.ClientCertificate, user.ClientKey, user.LocationOfOrigin = "", "", ""
	name := ContextName(cluster)
	out := clientcmdapi.NewConfig()
	out.Clusters[name] = c
	out.AuthInfos[name] = user
	out.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: namespace}
	out.CurrentContext = name
	return out, nil
}

// readFile reads the file the kubeconfig field field names.
func readFile(field, path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the hub kubeconfig's %s: %w", field, err)
	}
	return data, nil
}
