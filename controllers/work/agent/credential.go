package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Keys of the hub credential Secret (the registration agent's contract, see
// docs/design/registration.md).
const (
	kubeconfigKey  = "kubeconfig"
	clusterNameKey = "cluster-name"
	agentNameKey   = "agent-name"
)

// hubCredential is what one version of the hub credential Secret gives the
// work agent.
type hubCredential struct {
	// config connects to the hub as the cluster's agent identity.
	config *rest.Config
	// clusterName is the managed cluster's name, i.e. its namespace on the hub.
	clusterName string
	// agentID is the agent's ID, recorded in AppliedManifestWorks.
	agentID string
	// hubHash identifies the hub (HubHash of its server URL).
	hubHash string
	// fingerprint changes whenever anything above or the credential changes.
	fingerprint string
}

// HubHash identifies a hub as OCM does: the hex SHA-256 of the hub API
// server URL from the hub kubeconfig (rest.Config.Host). It prefixes the
// names of AppliedManifestWorks.
func HubHash(host string) string {
	sum := sha256.Sum256([]byte(host))
	return hex.EncodeToString(sum[:])
}

// parseCredential reads the hub credential Secret. clusterName overrides the
// Secret's cluster-name.
func parseCredential(s *corev1.Secret, clusterName string) (*hubCredential, error) {
	data := s.Data[kubeconfigKey]
	if len(data) == 0 {
		return nil, fmt.Errorf("secret %s/%s has no %s", s.Namespace, s.Name, kubeconfigKey)
	}
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: decode kubeconfig: %w", s.Namespace, s.Name, err)
	}
	// OCM mounts the Secret and its kubeconfig may name the certificate and
	// key by file (tls.crt, tls.key): take them from the Secret instead.
	for _, auth := range cfg.AuthInfos {
		if f := auth.ClientCertificate; f != "" && len(s.Data[path.Base(f)]) > 0 {
			auth.ClientCertificate, auth.ClientCertificateData = "", s.Data[path.Base(f)]
		}
		if f := auth.ClientKey; f != "" && len(s.Data[path.Base(f)]) > 0 {
			auth.ClientKey, auth.ClientKeyData = "", s.Data[path.Base(f)]
		}
	}
	restCfg, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: kubeconfig: %w", s.Namespace, s.Name, err)
	}
	if clusterName == "" {
		clusterName = string(s.Data[clusterNameKey])
	}
	if clusterName == "" {
		return nil, errors.New("no cluster name: the Secret has no " + clusterNameKey + " and none was configured")
	}
	fp := sha256.New()
	for _, part := range [][]byte{data, restCfg.CertData, restCfg.KeyData, []byte(clusterName), s.Data[agentNameKey]} {
		fp.Write(part)
		fp.Write([]byte{0})
	}
	return &hubCredential{
		config:      restCfg,
		clusterName: clusterName,
		agentID:     string(s.Data[agentNameKey]),
		hubHash:     HubHash(restCfg.Host),
		fingerprint: hex.EncodeToString(fp.Sum(nil)),
	}, nil
}
