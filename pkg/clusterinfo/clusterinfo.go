// Package clusterinfo holds the cluster-info ConfigMap a hub publishes, as
// kubeadm writes it: ConfigMap kube-public/cluster-info, whose key
// kubeconfig holds a kubeconfig naming the hub's API server as clusters
// reach it and the CAs that verify it. Its names are kubeadm's, from
// k8s.io/cluster-bootstrap.
//
// `kubectl ocm hub init` writes it when the hub has none (New); the cluster
// importer reads the server from it for the agents it installs, as does
// `kubectl ocm join --force-internal-endpoint-lookup` (ReadServer); and
// join's discovery reads its CAs anonymously when the hub publishes no CA
// bundle (CAsOf), as kubeadm's token discovery does.
package clusterinfo

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
)

// The ConfigMap's namespace, name and key, kubeadm's.
const (
	Namespace = metav1.NamespacePublic
	Name      = bootstrapapi.ConfigMapClusterInfo
	Key       = bootstrapapi.KubeConfigKey
)

// Ref names the ConfigMap in messages: kube-public/cluster-info.
const Ref = Namespace + "/" + Name

// New returns the cluster-info ConfigMap naming server, verified by the
// PEM CA bundle ca, as kubeadm writes it.
func New(server string, ca []byte) (*corev1.ConfigMap, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[""] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: Name},
		Data:       map[string]string{Key: string(data)},
	}, nil
}

// Get reads the cluster-info ConfigMap through r. The error wraps the API
// server's, so that apierrors.IsNotFound tells a hub without one.
func Get(ctx context.Context, r client.Reader) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: Name}, cm); err != nil {
		return nil, fmt.Errorf("read ConfigMap %s, which names the hub's API server as clusters reach it: %w", Ref, err)
	}
	return cm, nil
}

// ReadServer reads the cluster-info ConfigMap through r and returns the API
// server it names (Get, ServerOf).
func ReadServer(ctx context.Context, r client.Reader) (string, error) {
	cm, err := Get(ctx, r)
	if err != nil {
		return "", err
	}
	return ServerOf(cm)
}

// ServerOf returns the API server that cm, a cluster-info ConfigMap, names.
func ServerOf(cm *corev1.ConfigMap) (string, error) {
	kc, err := load(cm)
	if err != nil {
		return "", err
	}
	for _, c := range kc.Clusters {
		if c.Server != "" {
			return c.Server, nil
		}
	}
	return "", fmt.Errorf("ConfigMap %s/%s names no server", cm.Namespace, cm.Name)
}

// CAsOf returns the CAs of the kubeconfig in cm, a cluster-info ConfigMap.
func CAsOf(cm *corev1.ConfigMap) ([]*x509.Certificate, error) {
	kc, err := load(cm)
	if err != nil {
		return nil, err
	}
	var out []*x509.Certificate
	for _, c := range kc.Clusters {
		if cs, err := certs.ParseCertificates(c.CertificateAuthorityData); err == nil {
			out = append(out, cs...)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("its kubeconfig names no CA")
	}
	return out, nil
}

// load parses the kubeconfig of cm.
func load(cm *corev1.ConfigMap) (*clientcmdapi.Config, error) {
	kc, err := clientcmd.Load([]byte(cm.Data[Key]))
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s holds no kubeconfig under key %s: %w", cm.Namespace, cm.Name, Key, err)
	}
	return kc, nil
}
