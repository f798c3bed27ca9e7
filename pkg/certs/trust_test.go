package certs

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestUpdateTrustRotation(t *testing.T) {
	now := time.Now()
	ca := func() []byte {
		c, _, _ := testCA(t, true, now.Add(-time.Hour), now.Add(time.Hour))
		return c
	}
	old, next, joined := ca(), ca(), ca()
	cat := func(bundles ...[]byte) []byte { return bytes.Join(bundles, nil) }
	fp := func(b []byte) string {
		cs, err := ParseCertificates(b)
		require.NoError(t, err)
		return Fingerprint(cs[0])
	}
	// serving says which CA the hub serves with.
	serving := func(b []byte) func(*x509.Certificate) bool {
		cs, err := ParseCertificates(b)
		require.NoError(t, err)
		return func(c *x509.Certificate) bool { return c.Equal(cs[0]) }
	}

	// Nothing new: nothing changes.
	u, err := UpdateTrust(old, old, serving(old))
	require.NoError(t, err)
	assert.False(t, u.Changed)
	assert.Equal(t, old, u.Trusted)

	// The hub adds the new CA to its bundle: the agent trusts both.
	u, err = UpdateTrust(old, cat(old, next), serving(old))
	require.NoError(t, err)
	assert.True(t, u.Changed)
	assert.Equal(t, []string{fp(next)}, u.Added)
	assert.Empty(t, u.Dropped)
	assert.Equal(t, cat(old, next), u.Trusted)

	// The hub removes the old CA from its bundle while it still serves
	// with it: the agent keeps it.
	u, err = UpdateTrust(cat(old, next), next, serving(old))
	require.NoError(t, err)
	assert.False(t, u.Changed)
	assert.Equal(t, cat(old, next), u.Trusted)

	// The old CA left the bundle and the hub serves with the new one: the
	// agent drops it.
	u, err = UpdateTrust(cat(old, next), next, serving(next))
	require.NoError(t, err)
	assert.True(t, u.Changed)
	assert.Equal(t, []string{fp(old)}, u.Dropped)
	assert.Equal(t, next, u.Trusted)

	// A CA the agent was given at join, which the hub never published but
	// serves with (a public CA in front of it), stays.
	u, err = UpdateTrust(joined, old, serving(joined))
	require.NoError(t, err)
	assert.Equal(t, cat(joined, old), u.Trusted)
	assert.Empty(t, u.Dropped)

	// Bad input changes nothing and says which bundle.
	_, err = UpdateTrust(old, []byte("not a bundle"), serving(old))
	assert.ErrorContains(t, err, "published")
	_, err = UpdateTrust(nil, old, serving(old))
	assert.ErrorContains(t, err, "trusted")
}

func TestServingVerifier(t *testing.T) {
	now := time.Now()
	caPEM, _, caKey := testCA(t, true, now.Add(-time.Hour), now.Add(time.Hour))
	otherPEM, _, _ := testCA(t, true, now.Add(-time.Hour), now.Add(time.Hour))
	ca, err := ParseCertificates(caPEM)
	require.NoError(t, err)
	other, err := ParseCertificates(otherPEM)
	require.NoError(t, err)
	key, _, err := NewPrivateKey()
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "hub"}, DNSNames: []string{"hub.example"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca[0], key.Public(), caKey)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	verifies := ServingVerifier([]*x509.Certificate{leaf}, "hub.example")
	assert.True(t, verifies(ca[0]), "the issuing CA")
	assert.False(t, verifies(other[0]), "another CA")
	assert.False(t, ServingVerifier([]*x509.Certificate{leaf}, "other.example")(ca[0]), "another host")
	assert.False(t, ServingVerifier(nil, "hub.example")(ca[0]), "no chain")
}

func TestBundlesShareCA(t *testing.T) {
	now := time.Now()
	a, _, _ := testCA(t, true, now.Add(-time.Hour), now.Add(time.Hour))
	b, _, _ := testCA(t, true, now.Add(-time.Hour), now.Add(time.Hour))
	assert.True(t, BundlesShareCA(append(append([]byte{}, a...), b...), b))
	assert.False(t, BundlesShareCA(a, b))
	assert.False(t, BundlesShareCA(a, nil))
}

func TestHubCAsClaimValue(t *testing.T) {
	now := time.Now()
	a, _, _ := testCA(t, true, now.Add(-time.Hour), now.Add(time.Hour))
	b, _, _ := testCA(t, true, now.Add(-time.Hour), now.Add(time.Hour))
	v := HubCAsClaimValue(append(append(append([]byte{}, a...), b...), a...))
	ids := strings.Split(v, ",")
	require.Len(t, ids, 2, "one ID per distinct CA: %s", v)
	assert.True(t, slices.IsSorted(ids))
	ca, err := ParseCertificates(a)
	require.NoError(t, err)
	assert.Contains(t, ids, HubCAID(ca[0]))
	assert.Len(t, ids[0], 16)
	assert.Empty(t, HubCAsClaimValue(nil))
}

func TestSignedByAnyAndKeyID(t *testing.T) {
	now := time.Now()
	parse := func(b []byte) *x509.Certificate {
		cs, err := ParseCertificates(b)
		require.NoError(t, err)
		return cs[0]
	}
	oldPEM, _, oldKey := testCA(t, true, now.Add(-time.Hour), now.Add(time.Hour))
	newPEM, _, _ := testCA(t, true, now.Add(-time.Hour), now.Add(time.Hour))
	oldCA, newCA := parse(oldPEM), parse(newPEM)
	leafKey, _, err := NewPrivateKey()
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "agent"}, NotBefore: now, NotAfter: now.Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, oldCA, leafKey.Public(), oldKey)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)

	assert.True(t, SignedByAny(leaf, []*x509.Certificate{newCA, oldCA}))
	assert.False(t, SignedByAny(leaf, []*x509.Certificate{newCA}), "another CA with the same name did not sign it")
	assert.False(t, SignedByAny(leaf, nil))
	assert.Equal(t, KeyID(oldCA.SubjectKeyId), KeyID(leaf.AuthorityKeyId), "a leaf names its CA's key")
	assert.NotEqual(t, KeyID(newCA.SubjectKeyId), KeyID(leaf.AuthorityKeyId))
	assert.Len(t, KeyID(oldCA.SubjectKeyId), 16)
	assert.Empty(t, KeyID(nil))
}

func TestReadHubCABundle(t *testing.T) {
	now := time.Now()
	ca, _, _ := testCA(t, true, now.Add(-time.Hour), now.Add(time.Hour))
	bundle := func(data string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-public", Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": data}}
	}
	tests := []struct {
		name     string
		objs     []client.Object
		wantCAs  int
		wantErr  string
		notFound bool
	}{
		{name: "published", objs: []client.Object{bundle(string(ca) + string(ca))}, wantCAs: 2},
		{name: "none", wantErr: "ConfigMap kube-public/kube-root-ca.crt", notFound: true},
		{name: "empty", objs: []client.Object{bundle("")}, wantErr: "kube-public/kube-root-ca.crt key ca.crt: no PEM certificate"},
		{name: "another namespace's copy is not the hub's", objs: []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": string(ca)}},
		}, wantErr: "kube-public/kube-root-ca.crt", notFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithObjects(tt.objs...).Build()
			pem, cs, err := ReadHubCABundle(context.Background(), c)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.Equal(t, tt.notFound, apierrors.IsNotFound(err))
				return
			}
			require.NoError(t, err)
			assert.Len(t, cs, tt.wantCAs)
			assert.Equal(t, string(ca)+string(ca), string(pem))
		})
	}
}
