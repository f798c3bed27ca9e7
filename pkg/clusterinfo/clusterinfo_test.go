package clusterinfo

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// testCA returns the PEM certificate of a new self-signed CA.
func testCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	c, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "hub-ca"}, key)
	require.NoError(t, err)
	pem, err := certutil.EncodeCertificates(c)
	require.NoError(t, err)
	return pem
}

func TestNames(t *testing.T) {
	// kubeadm's names, which every kubeadm cluster and OCM read.
	assert.Equal(t, "kube-public", Namespace)
	assert.Equal(t, "cluster-info", Name)
	assert.Equal(t, "kubeconfig", Key)
}

func TestServerAndCAs(t *testing.T) {
	ca := testCA(t)
	written, err := New("https://hub.example:6443", ca)
	require.NoError(t, err)
	tests := []struct {
		name                  string
		data                  map[string]string
		wantServer, wantCAErr string
		wantServerErr         string
		wantCAs               int
	}{
		{name: "as written", data: written.Data, wantServer: "https://hub.example:6443", wantCAs: 1},
		{name: "no server", data: map[string]string{Key: "apiVersion: v1\nkind: Config\nclusters:\n- name: \"\"\n  cluster: {}\n"},
			wantServerErr: "names no server", wantCAErr: "names no CA"},
		{name: "not a kubeconfig", data: map[string]string{Key: "{"}, wantServerErr: "holds no kubeconfig under key kubeconfig", wantCAErr: "holds no kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := &corev1.ConfigMap{Data: tt.data}
			cm.Namespace, cm.Name = Namespace, Name
			server, err := ServerOf(cm)
			if tt.wantServerErr != "" {
				require.ErrorContains(t, err, tt.wantServerErr)
			} else {
				require.NoError(t, err)
				assert.Equal(t, tt.wantServer, server)
			}
			cas, err := CAsOf(cm)
			if tt.wantCAErr != "" {
				require.ErrorContains(t, err, tt.wantCAErr)
				return
			}
			require.NoError(t, err)
			assert.Len(t, cas, tt.wantCAs)
		})
	}
}

func TestReadServer(t *testing.T) {
	ctx := context.Background()
	_, err := ReadServer(ctx, fake.NewClientBuilder().Build())
	require.True(t, apierrors.IsNotFound(err), "a hub without cluster-info: %v", err)
	require.ErrorContains(t, err, "kube-public/cluster-info")

	cm, err := New("https://hub.example:6443", testCA(t))
	require.NoError(t, err)
	server, err := ReadServer(ctx, fake.NewClientBuilder().WithObjects(cm).Build())
	require.NoError(t, err)
	assert.Equal(t, "https://hub.example:6443", server)
}
