package hub

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

// testCA is a CA that issues test certificates.
type testCA struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// newTestCA returns a self-signed CA named cn.
func newTestCA(t *testing.T, cn string) *testCA {
	t.Helper()
	key := newKey(t)
	cert := createCert(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil, key.Public(), key)
	return &testCA{cert: cert, key: key}
}

// intermediate returns a CA named cn that ca signs.
func (ca *testCA) intermediate(t *testing.T, cn string) *testCA {
	t.Helper()
	key := newKey(t)
	cert := createCert(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, ca.cert, key.Public(), ca.key)
	return &testCA{cert: cert, key: key}
}

// issue returns a certificate named cn for usages that ca signs.
func (ca *testCA) issue(t *testing.T, cn string, usages ...x509.ExtKeyUsage) *x509.Certificate {
	t.Helper()
	return createCert(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: cn}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usages,
	}, ca.cert, newKey(t).Public(), ca.key)
}

// client returns a client certificate named cn that ca signs.
func (ca *testCA) client(t *testing.T, cn string) *x509.Certificate {
	return ca.issue(t, cn, x509.ExtKeyUsageClientAuth)
}

// pem is the CA's certificate in PEM.
func (ca *testCA) pem() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}))
}

func newKey(t *testing.T) crypto.Signer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return key
}

// createCert signs template with key as parent, or self-signed without one.
func createCert(t *testing.T, template, parent *x509.Certificate, pub any, key crypto.Signer) *x509.Certificate {
	t.Helper()
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	require.NoError(t, err)
	template.SerialNumber = serial
	if template.NotBefore.IsZero() {
		template.NotBefore = time.Now().Add(-time.Hour)
	}
	if template.NotAfter.IsZero() {
		template.NotAfter = time.Now().Add(time.Hour)
	}
	if parent == nil {
		parent = template
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, pub, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return cert
}

// jsonList is list as the API server writes it in the ConfigMap.
func jsonList(t *testing.T, list ...string) string {
	t.Helper()
	b, err := json.Marshal(list)
	require.NoError(t, err)
	return string(b)
}

// authData is the ConfigMap data of an API server whose front proxy ca
// signs, with kube-apiserver's usual header names.
func authData(t *testing.T, ca *testCA, allowedNames ...string) map[string]string {
	return map[string]string{
		"requestheader-client-ca-file":       ca.pem(),
		"requestheader-allowed-names":        jsonList(t, allowedNames...),
		"requestheader-username-headers":     jsonList(t, "X-Remote-User"),
		"requestheader-uid-headers":          jsonList(t, "X-Remote-Uid"),
		"requestheader-group-headers":        jsonList(t, "X-Remote-Group"),
		"requestheader-extra-headers-prefix": jsonList(t, "X-Remote-Extra-"),
	}
}

func authConfigMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: authConfigNamespace, Name: authConfigName}, Data: data}
}

func TestParseRequestHeaderConfig(t *testing.T) {
	ca := newTestCA(t, "front-proxy-ca")
	with := func(key, value string) map[string]string {
		d := authData(t, ca, "front-proxy-client")
		if value == "" {
			delete(d, key)
		} else {
			d[key] = value
		}
		return d
	}
	tests := []struct {
		name    string
		data    map[string]string
		want    *requestHeaderConfig
		wantErr string
	}{{
		name: "every key",
		data: authData(t, ca, "front-proxy-client", "aggregator"),
		want: &requestHeaderConfig{
			allowedNames: []string{"front-proxy-client", "aggregator"}, userHeaders: []string{"X-Remote-User"},
			uidHeaders: []string{"X-Remote-Uid"}, groupHeaders: []string{"X-Remote-Group"}, extraPrefixes: []string{"X-Remote-Extra-"},
		},
	}, {
		name: "only the CA and the user header",
		data: map[string]string{"requestheader-client-ca-file": ca.pem(), "requestheader-username-headers": `["X-Remote-User"]`},
		want: &requestHeaderConfig{userHeaders: []string{"X-Remote-User"}},
	}, {
		name:    "no CA: the aggregation layer is not configured",
		data:    with("requestheader-client-ca-file", ""),
		wantErr: "no requestheader-client-ca-file",
	}, {
		name:    "a CA that is not PEM",
		data:    with("requestheader-client-ca-file", "not a certificate"),
		wantErr: "holds no PEM certificate",
	}, {
		name:    "allowed names that are not a JSON list",
		data:    with("requestheader-allowed-names", "front-proxy-client"),
		wantErr: "requestheader-allowed-names: ",
	}, {
		name:    "group headers that are not a JSON list",
		data:    with("requestheader-group-headers", `{"X-Remote-Group":1}`),
		wantErr: "requestheader-group-headers: ",
	}, {
		name:    "no user header",
		data:    with("requestheader-username-headers", ""),
		wantErr: "requestheader-username-headers is empty",
	}, {
		name:    "an empty list of user headers",
		data:    with("requestheader-username-headers", "[]"),
		wantErr: "requestheader-username-headers is empty",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseRequestHeaderConfig(tt.data)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, got.roots)
			assert.True(t, got.roots.Equal(certPool(ca.cert)), "roots are the CA of the ConfigMap")
			got.roots = nil
			assert.Equal(t, tt.want, got)
		})
	}
}

func certPool(certs ...*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}

func TestVerify(t *testing.T) {
	ca := newTestCA(t, "front-proxy-ca")
	other := newTestCA(t, "other-ca")
	inter := ca.intermediate(t, "front-proxy-intermediate")
	expired := createCert(t, &x509.Certificate{
		Subject: pkix.Name{CommonName: "front-proxy-client"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: time.Now().Add(-time.Hour),
	}, ca.cert, newKey(t).Public(), ca.key)

	tests := []struct {
		name         string
		allowedNames []string
		chain        []*x509.Certificate
		wantErr      string
	}{{
		name:         "the front proxy's certificate",
		allowedNames: []string{"front-proxy-client"},
		chain:        []*x509.Certificate{ca.client(t, "front-proxy-client")},
	}, {
		name:         "one of several allowed names",
		allowedNames: []string{"aggregator", "front-proxy-client"},
		chain:        []*x509.Certificate{ca.client(t, "front-proxy-client")},
	}, {
		name:  "any name when none is listed",
		chain: []*x509.Certificate{ca.client(t, "anyone")},
	}, {
		name:         "through an intermediate the request carries",
		allowedNames: []string{"front-proxy-client"},
		chain:        []*x509.Certificate{inter.client(t, "front-proxy-client"), inter.cert},
	}, {
		name:         "an intermediate the request does not carry",
		allowedNames: []string{"front-proxy-client"},
		chain:        []*x509.Certificate{inter.client(t, "front-proxy-client")},
		wantErr:      `the client certificate "front-proxy-client" is not the hub API server's front proxy`,
	}, {
		name:         "an allowed name from the wrong CA",
		allowedNames: []string{"front-proxy-client"},
		chain:        []*x509.Certificate{other.client(t, "front-proxy-client")},
		wantErr:      `the client certificate "front-proxy-client" is not the hub API server's front proxy`,
	}, {
		name:    "the wrong CA when no name is listed",
		chain:   []*x509.Certificate{other.client(t, "anyone")},
		wantErr: "is not the hub API server's front proxy",
	}, {
		name:         "a name that is not allowed",
		allowedNames: []string{"front-proxy-client"},
		chain:        []*x509.Certificate{ca.client(t, "system:admin")},
		wantErr:      `the client certificate "system:admin" is not one of the front proxy names [front-proxy-client]`,
	}, {
		name:         "an allowed name in another case",
		allowedNames: []string{"front-proxy-client"},
		chain:        []*x509.Certificate{ca.client(t, "Front-Proxy-Client")},
		wantErr:      "is not one of the front proxy names",
	}, {
		name:         "a serving certificate",
		allowedNames: []string{"front-proxy-client"},
		chain:        []*x509.Certificate{ca.issue(t, "front-proxy-client", x509.ExtKeyUsageServerAuth)},
		wantErr:      "is not the hub API server's front proxy",
	}, {
		name:         "an expired certificate",
		allowedNames: []string{"front-proxy-client"},
		chain:        []*x509.Certificate{expired},
		wantErr:      "is not the hub API server's front proxy",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &requestHeaderConfig{roots: certPool(ca.cert), allowedNames: tt.allowedNames, userHeaders: []string{"X-Remote-User"}}
			err := cfg.verify(tt.chain)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
		})
	}
}

func TestAuthenticate(t *testing.T) {
	ca := newTestCA(t, "front-proxy-ca")
	other := newTestCA(t, "other-ca")
	frontProxyCert := ca.client(t, "front-proxy-client")

	tests := []struct {
		name    string
		data    map[string]string
		cert    *x509.Certificate // nil: no TLS
		header  http.Header
		want    *caller
		wantErr string
		// unauthenticated is true for errors that are the caller's: 401, not 503.
		unauthenticated bool
	}{{
		name:   "user, uid, groups and extra",
		data:   authData(t, ca, "front-proxy-client"),
		cert:   frontProxyCert,
		header: http.Header{"X-Remote-User": {"alice"}, "X-Remote-Uid": {"42"}, "X-Remote-Group": {"devs", "system:authenticated"}, "X-Remote-Extra-Scopes": {"read", "write"}},
		want:   &caller{user: "alice", uid: "42", groups: []string{"devs", "system:authenticated"}, extra: map[string][]string{"scopes": {"read", "write"}}},
	}, {
		name:   "only a user",
		data:   authData(t, ca, "front-proxy-client"),
		cert:   frontProxyCert,
		header: http.Header{"X-Remote-User": {"alice"}},
		want:   &caller{user: "alice"},
	}, {
		name: "header names in the ConfigMap in lower case",
		data: func() map[string]string {
			d := authData(t, ca, "front-proxy-client")
			d["requestheader-username-headers"] = `["x-remote-user"]`
			d["requestheader-uid-headers"] = `["x-remote-uid"]`
			d["requestheader-group-headers"] = `["x-remote-group"]`
			d["requestheader-extra-headers-prefix"] = `["x-remote-extra-"]`
			return d
		}(),
		cert:   frontProxyCert,
		header: http.Header{"X-Remote-User": {"alice"}, "X-Remote-Uid": {"42"}, "X-Remote-Group": {"devs"}, "X-Remote-Extra-Scopes": {"read"}},
		want:   &caller{user: "alice", uid: "42", groups: []string{"devs"}, extra: map[string][]string{"scopes": {"read"}}},
	}, {
		name: "the first user header that has a value",
		data: func() map[string]string {
			d := authData(t, ca, "front-proxy-client")
			d["requestheader-username-headers"] = `["X-Remote-User","X-Forwarded-User"]`
			return d
		}(),
		cert:   frontProxyCert,
		header: http.Header{"X-Remote-User": {""}, "X-Forwarded-User": {"bob"}},
		want:   &caller{user: "bob"},
	}, {
		name: "groups and extra from several headers and prefixes",
		data: func() map[string]string {
			d := authData(t, ca, "front-proxy-client")
			d["requestheader-group-headers"] = `["X-Remote-Group","X-Other-Group"]`
			d["requestheader-extra-headers-prefix"] = `["X-Remote-Extra-","X-Other-Extra-"]`
			return d
		}(),
		cert: frontProxyCert,
		header: http.Header{
			"X-Remote-User": {"alice"}, "X-Remote-Group": {"a", "b"}, "X-Other-Group": {"c"},
			"X-Remote-Extra-Scopes": {"read"}, "X-Other-Extra-Scopes": {"write"}, "X-Other-Extra-Tenant": {"t1"},
		},
		want: &caller{user: "alice", groups: []string{"a", "b", "c"}, extra: map[string][]string{"scopes": {"read", "write"}, "tenant": {"t1"}}},
	}, {
		name: "extra keys lower-cased and unescaped, an empty key skipped",
		data: authData(t, ca, "front-proxy-client"),
		cert: frontProxyCert,
		header: http.Header{
			"X-Remote-User": {"alice"}, "X-Remote-Extra-Example.com%2fteam": {"blue"},
			"X-Remote-Extra-Bad%zz": {"kept"}, "X-Remote-Extra-": {"dropped"}, "X-Remote-Extras": {"not extra"},
		},
		want: &caller{user: "alice", extra: map[string][]string{"example.com/team": {"blue"}, "bad%zz": {"kept"}}},
	}, {
		name:            "no user",
		data:            authData(t, ca, "front-proxy-client"),
		cert:            frontProxyCert,
		header:          http.Header{"X-Remote-Group": {"system:masters"}},
		wantErr:         "the API server named no user",
		unauthenticated: true,
	}, {
		name:            "an empty user",
		data:            authData(t, ca, "front-proxy-client"),
		cert:            frontProxyCert,
		header:          http.Header{"X-Remote-User": {""}, "X-Remote-Group": {"system:masters"}},
		wantErr:         "the API server named no user",
		unauthenticated: true,
	}, {
		name:            "no client certificate",
		data:            authData(t, ca, "front-proxy-client"),
		header:          http.Header{"X-Remote-User": {"alice"}},
		wantErr:         "no client certificate",
		unauthenticated: true,
	}, {
		name:            "a client certificate from the wrong CA",
		data:            authData(t, ca, "front-proxy-client"),
		cert:            other.client(t, "front-proxy-client"),
		header:          http.Header{"X-Remote-User": {"system:admin"}},
		wantErr:         "is not the hub API server's front proxy",
		unauthenticated: true,
	}, {
		name:            "a client certificate of the CA with a name not allowed",
		data:            authData(t, ca, "front-proxy-client"),
		cert:            ca.client(t, "system:kube-controller-manager"),
		header:          http.Header{"X-Remote-User": {"system:admin"}},
		wantErr:         "is not one of the front proxy names",
		unauthenticated: true,
	}, {
		name:    "the aggregation layer is not configured",
		data:    map[string]string{"requestheader-username-headers": `["X-Remote-User"]`},
		cert:    frontProxyCert,
		header:  http.Header{"X-Remote-User": {"alice"}},
		wantErr: "no requestheader-client-ca-file",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &frontProxy{reader: fake.NewClientBuilder().WithObjects(authConfigMap(tt.data)).Build()}
			r := httptest.NewRequest(http.MethodGet, "/apis/proxy.kubectl-ocm.io/v1alpha1/managedclusters/c1/proxy/", nil)
			r.TLS = nil
			if tt.cert != nil {
				r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{tt.cert}}
			}
			r.Header = tt.header
			got, err := f.authenticate(r)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.Equal(t, tt.unauthenticated, errors.Is(err, errUnauthenticated))
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestAuthenticateReadsRotatedCA(t *testing.T) {
	oldCA, newCA := newTestCA(t, "front-proxy-ca-1"), newTestCA(t, "front-proxy-ca-2")
	reads := 0
	reader := fake.NewClientBuilder().WithObjects(authConfigMap(authData(t, newCA, "front-proxy-client"))).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			reads++
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	old, err := parseRequestHeaderConfig(authData(t, oldCA, "front-proxy-client"))
	require.NoError(t, err)
	request := func(ca *testCA) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/apis", nil)
		r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{ca.client(t, "front-proxy-client")}}
		r.Header.Set("X-Remote-User", "alice")
		return r
	}

	// Read within authConfigRetry: the certificate of the new CA fails
	// without a read.
	f := &frontProxy{reader: reader, cur: old, read: time.Now()}
	_, err = f.authenticate(request(newCA))
	require.ErrorContains(t, err, "is not the hub API server's front proxy")
	assert.Zero(t, reads)

	// Read longer ago: the ConfigMap is read again and the new CA trusted,
	// the old one no longer.
	f = &frontProxy{reader: reader, cur: old, read: time.Now().Add(-authConfigRetry - time.Second)}
	c, err := f.authenticate(request(newCA))
	require.NoError(t, err)
	assert.Equal(t, "alice", c.user)
	assert.Equal(t, 1, reads)
	_, err = f.authenticate(request(oldCA))
	require.ErrorContains(t, err, "is not the hub API server's front proxy")
	assert.Equal(t, 1, reads, "a read within authConfigRetry is reused")
}

func TestConfigKeepsLastReadOnError(t *testing.T) {
	ca := newTestCA(t, "front-proxy-ca")
	cur, err := parseRequestHeaderConfig(authData(t, ca, "front-proxy-client"))
	require.NoError(t, err)
	empty := fake.NewClientBuilder().Build()

	f := &frontProxy{reader: empty, cur: cur, read: time.Now().Add(-2 * authConfigTTL)}
	got, err := f.config(context.Background(), false)
	require.NoError(t, err)
	assert.Same(t, cur, got, "a failed read keeps the last good one")

	f = &frontProxy{reader: empty}
	_, err = f.config(context.Background(), false)
	require.ErrorContains(t, err, "read ConfigMap kube-system/extension-apiserver-authentication")
}

func TestCutPrefixFold(t *testing.T) {
	tests := []struct {
		s, prefix string
		want      string
		ok        bool
	}{
		{s: "X-Remote-Extra-Scopes", prefix: "X-Remote-Extra-", want: "Scopes", ok: true},
		{s: "x-remote-extra-scopes", prefix: "X-Remote-Extra-", want: "scopes", ok: true},
		{s: "X-Remote-Extra-Scopes", prefix: "x-REMOTE-extra-", want: "Scopes", ok: true},
		{s: "X-Remote-Extra-", prefix: "X-Remote-Extra-", want: "", ok: true},
		{s: "X-Remote-Extra", prefix: "X-Remote-Extra-", want: "X-Remote-Extra", ok: false},
		{s: "X-Remote-User", prefix: "X-Remote-Extra-", want: "X-Remote-User", ok: false},
		{s: "Y-X-Remote-Extra-Scopes", prefix: "X-Remote-Extra-", want: "Y-X-Remote-Extra-Scopes", ok: false},
		{s: "anything", prefix: "", want: "anything", ok: true},
		{s: "", prefix: "X-", want: "", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.s+"/"+tt.prefix, func(t *testing.T) {
			got, ok := cutPrefixFold(tt.s, tt.prefix)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.ok, ok)
		})
	}
}

func TestFirstHeader(t *testing.T) {
	h := http.Header{"X-Remote-User": {"", "ignored"}, "X-Forwarded-User": {"bob", "carol"}}
	assert.Equal(t, "bob", firstHeader(h, []string{"X-Remote-User", "x-forwarded-user"}))
	assert.Equal(t, "bob", firstHeader(h, []string{"X-Missing", "X-Forwarded-User", "X-Remote-User"}))
	assert.Empty(t, firstHeader(h, []string{"X-Remote-User"}), "only the first value of a header counts")
	assert.Empty(t, firstHeader(h, nil))
}

func TestReviewSpec(t *testing.T) {
	c := &caller{user: "alice", uid: "42", groups: []string{"devs", "system:authenticated"}, extra: map[string][]string{"scopes": {"read", "write"}}}
	got := reviewSpec(c, "create", hubtunnel.ProxySubresource, "cluster1")
	assert.Equal(t, authorizationv1.SubjectAccessReviewSpec{
		User: "alice", UID: "42", Groups: []string{"devs", "system:authenticated"},
		Extra: map[string]authorizationv1.ExtraValue{"scopes": {"read", "write"}},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: "proxy.kubectl-ocm.io", Version: "v1alpha1", Resource: "managedclusters",
			Subresource: "proxy", Name: "cluster1", Verb: "create",
		},
	}, got)
	assert.Empty(t, got.ResourceAttributes.Namespace, "managedclusters are cluster-scoped")
}

// testServer is a Server whose front proxy ca signs for, and whose
// SubjectAccessReviews allow what allow says; reviews records them.
func testServer(t *testing.T, ca *testCA, allow func(authorizationv1.SubjectAccessReviewSpec) bool) (*Server, *[]authorizationv1.SubjectAccessReviewSpec) {
	t.Helper()
	var reviews []authorizationv1.SubjectAccessReviewSpec
	reviewClient := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
		Create: func(_ context.Context, _ client.WithWatch, obj client.Object, _ ...client.CreateOption) error {
			sar := obj.(*authorizationv1.SubjectAccessReview)
			reviews = append(reviews, sar.Spec)
			sar.Status.Allowed = allow(sar.Spec)
			if !sar.Status.Allowed {
				sar.Status.Reason = "no RBAC policy matched"
			}
			return nil
		},
	}).Build()
	reader := fake.NewClientBuilder().WithObjects(authConfigMap(authData(t, ca, "front-proxy-client"))).Build()
	return New(Options{Reviews: reviewClient, Reader: reader, Log: logr.Discard()}), &reviews
}

func TestServeHTTP(t *testing.T) {
	ca := newTestCA(t, "front-proxy-ca")
	other := newTestCA(t, "other-ca")
	const clusterPath = "/apis/proxy.kubectl-ocm.io/v1alpha1/managedclusters/cluster1/"

	tests := []struct {
		name     string
		method   string
		path     string
		cert     *x509.Certificate
		allow    bool
		wantCode int
		wantBody string
		// wantVerb is the verb of the SubjectAccessReview asked; "" for none.
		wantVerb string
	}{{
		name: "group list", method: http.MethodGet, path: "/apis",
		wantCode: http.StatusOK, wantBody: `"name":"proxy.kubectl-ocm.io"`,
	}, {
		name: "group", method: http.MethodGet, path: "/apis/proxy.kubectl-ocm.io/",
		wantCode: http.StatusOK, wantBody: `"preferredVersion":{"groupVersion":"proxy.kubectl-ocm.io/v1alpha1"`,
	}, {
		name: "resource list", method: http.MethodGet, path: "/apis/proxy.kubectl-ocm.io/v1alpha1",
		wantCode: http.StatusOK, wantBody: `"name":"managedclusters/proxy"`,
	}, {
		name: "another path", method: http.MethodGet, path: "/apis/proxy.kubectl-ocm.io/v1alpha1/secrets/x",
		wantCode: http.StatusNotFound, wantBody: "is not a path of proxy.kubectl-ocm.io/v1alpha1",
	}, {
		name: "a cluster name that is not one", method: http.MethodGet, path: "/apis/proxy.kubectl-ocm.io/v1alpha1/managedclusters/Cluster_1/proxy/",
		cert: ca.client(t, "front-proxy-client"), wantCode: http.StatusNotFound, wantBody: "is not a cluster name",
	}, {
		name: "no client certificate", method: http.MethodGet, path: clusterPath + "proxy/api",
		wantCode: http.StatusUnauthorized, wantBody: "no client certificate",
	}, {
		name: "a certificate from the wrong CA", method: http.MethodGet, path: clusterPath + "proxy/api",
		cert: other.client(t, "front-proxy-client"), wantCode: http.StatusUnauthorized, wantBody: "is not the hub API server's front proxy",
	}, {
		name: "another subresource", method: http.MethodGet, path: clusterPath + "status",
		cert: ca.client(t, "front-proxy-client"), wantCode: http.StatusNotFound, wantBody: `not \"status\"`,
	}, {
		name: "a denied GET", method: http.MethodGet, path: clusterPath + "proxy/api/v1/pods",
		cert: ca.client(t, "front-proxy-client"), wantCode: http.StatusForbidden, wantVerb: "get",
		wantBody: `user \"alice\" cannot get managedclusters/proxy \"cluster1\" in API group \"proxy.kubectl-ocm.io\": no RBAC policy matched`,
	}, {
		name: "a denied POST", method: http.MethodPost, path: clusterPath + "proxy/api/v1/namespaces",
		cert: ca.client(t, "front-proxy-client"), wantCode: http.StatusForbidden, wantVerb: "create", wantBody: "cannot create",
	}, {
		name: "a denied PATCH", method: http.MethodPatch, path: clusterPath + "proxy/api/v1/namespaces/a",
		cert: ca.client(t, "front-proxy-client"), wantCode: http.StatusForbidden, wantVerb: "patch", wantBody: "cannot patch",
	}, {
		name: "an allowed DELETE to a cluster without a tunnel", method: http.MethodDelete, path: clusterPath + "proxy/api/v1/namespaces/a",
		cert: ca.client(t, "front-proxy-client"), allow: true, wantCode: http.StatusServiceUnavailable, wantVerb: "delete",
		wantBody: "cluster cluster1 has no tunnel to the hub",
	}, {
		name: "an attach by someone not the cluster's agent", method: http.MethodGet, path: clusterPath + "attach",
		cert: ca.client(t, "front-proxy-client"), allow: true, wantCode: http.StatusForbidden,
		wantBody: "only the agent of cluster cluster1 may attach its tunnel",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, reviews := testServer(t, ca, func(authorizationv1.SubjectAccessReviewSpec) bool { return tt.allow })
			r := httptest.NewRequest(tt.method, tt.path, nil)
			r.TLS = nil
			if tt.cert != nil {
				r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{tt.cert}}
			}
			r.Header.Set("X-Remote-User", "alice")
			r.Header.Add("X-Remote-Group", "devs")
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			assert.Equal(t, tt.wantCode, w.Code, w.Body.String())
			assert.Contains(t, w.Body.String(), tt.wantBody)
			if tt.wantVerb == "" {
				assert.Empty(t, *reviews)
				return
			}
			require.Len(t, *reviews, 1)
			assert.Equal(t, reviewSpec(&caller{user: "alice", groups: []string{"devs"}}, tt.wantVerb, hubtunnel.ProxySubresource, "cluster1"), (*reviews)[0])
		})
	}
}

func TestReviewerReusesAnswers(t *testing.T) {
	ca := newTestCA(t, "front-proxy-ca")
	s, reviews := testServer(t, ca, func(spec authorizationv1.SubjectAccessReviewSpec) bool { return spec.User == "alice" })
	ctx := context.Background()
	alice, bob := &caller{user: "alice"}, &caller{user: "bob"}

	for range 3 {
		ok, _, err := s.review.allowed(ctx, alice, "get", hubtunnel.ProxySubresource, "cluster1")
		require.NoError(t, err)
		assert.True(t, ok)
	}
	assert.Len(t, *reviews, 1, "answers are reused within decisionTTL")
	ok, reason, err := s.review.allowed(ctx, bob, "get", hubtunnel.ProxySubresource, "cluster1")
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, "no RBAC policy matched", reason)
	_, _, err = s.review.allowed(ctx, alice, "delete", hubtunnel.ProxySubresource, "cluster1")
	require.NoError(t, err)
	assert.Len(t, *reviews, 3, "another caller or verb is asked again")
	_, _, err = s.review.ask(ctx, alice, "get", hubtunnel.ProxySubresource, "cluster1")
	require.NoError(t, err)
	assert.Len(t, *reviews, 4, "ask never reuses an answer")

	s.review.mu.Lock()
	for k, d := range s.review.decisions {
		d.expires = time.Now().Add(-time.Second)
		s.review.decisions[k] = d
	}
	s.review.mu.Unlock()
	_, _, err = s.review.allowed(ctx, alice, "get", hubtunnel.ProxySubresource, "cluster1")
	require.NoError(t, err)
	assert.Len(t, *reviews, 5, "an expired answer is asked again")
}

func TestOpenAPIDocuments(t *testing.T) {
	for name, serve := range map[string]http.HandlerFunc{"v2": serveOpenAPIV2, "v3": serveOpenAPIV3} {
		t.Run(name, func(t *testing.T) {
			w := httptest.NewRecorder()
			serve(w, httptest.NewRequest(http.MethodGet, "/openapi/"+name, nil))
			assert.Equal(t, http.StatusOK, w.Code)
			var doc map[string]any
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &doc))
			assert.Equal(t, map[string]any{}, doc["paths"])
		})
	}
}
