package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
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

// parseCredential reads the hub credential Secret (kubeconfig.HubCredential,
// which also reads OCM's Secrets, whose kubeconfig names tls.crt and tls.key
// by file). clusterName overrides the Secret's cluster-name.
func parseCredential(s *corev1.Secret, clusterName string) (*hubCredential, error) {
	cred, err := kubeconfig.ReadHubCredential(s.Data)
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	restCfg, err := cred.Kubeconfig.RESTConfig()
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
	for _, part := range [][]byte{s.Data[kubeconfig.KubeconfigKey], restCfg.CertData, restCfg.KeyData, []byte(clusterName), []byte(cred.AgentName)} {
		fp.Write(part)
		fp.Write([]byte{0})
	}
	return &hubCredential{
		config:      restCfg,
		clusterName: clusterName,
		agentID:     cred.AgentName,
		hubHash:     HubHash(restCfg.Host),
		fingerprint: hex.EncodeToString(fp.Sum(nil)),
	}, nil
}
