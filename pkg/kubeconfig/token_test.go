package kubeconfig

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// jwt returns an unsigned token with the claims of ServiceAccount ns/name.
func jwt(t *testing.T, ns, name, uid string, iat, exp time.Time) string {
	t.Helper()
	claims := map[string]any{"iat": iat.Unix(), "exp": exp.Unix(),
		"kubernetes.io": map[string]any{"namespace": ns, "serviceaccount": map[string]any{"name": name, "uid": uid}}}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return "e30." + base64.RawURLEncoding.EncodeToString(payload) + ".sig"
}

func TestTokenCredential(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hub := &Info{Server: "https://hub:6443", CAData: []byte("CA")}
	good := jwt(t, "c1", "hello-agent", "u1", now.Add(-time.Hour), now.Add(9*time.Hour))
	tests := []struct {
		name, token, uid, wantErr string
		wantRefresh               time.Time
	}{
		{name: "valid", token: good, uid: "u1", wantRefresh: now.Add(7 * time.Hour)},
		{name: "any UID", token: good},
		{name: "recreated ServiceAccount", token: good, uid: "u2", wantErr: "was recreated"},
		{name: "other ServiceAccount", token: jwt(t, "c1", "other-agent", "u1", now, now.Add(time.Hour)), wantErr: "not c1/hello-agent"},
		{name: "expired", token: jwt(t, "c1", "hello-agent", "u1", now.Add(-2*time.Hour), now.Add(-time.Hour)), wantErr: "expired"},
		{name: "not a JWT", token: "opaque", wantErr: "not a JWT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := AddonTokenCredentialData(hub, "c1", "hello", []byte(tt.token))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data[KubeconfigKey]), "tokenFile: token") || string(data[AddonNameKey]) != "hello" {
				t.Errorf("Secret data: kubeconfig %s, addon-name %q", data[KubeconfigKey], data[AddonNameKey])
			}
			cred, err := ReadHubCredential(data)
			if err != nil {
				t.Fatal(err)
			}
			tok, err := cred.ValidateToken("c1", "hello-agent", tt.uid, now)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.wantRefresh.IsZero() && !tok.RefreshTime().Equal(tt.wantRefresh) {
				t.Errorf("RefreshTime = %s, want %s (80 %% of the lifetime)", tok.RefreshTime(), tt.wantRefresh)
			}
		})
	}
}

func TestJWTExpiry(t *testing.T) {
	enc := base64.RawURLEncoding.EncodeToString
	unsigned := func(claims string) string {
		return enc([]byte(`{"alg":"RS256","kid":"k"}`)) + "." + enc([]byte(claims)) + "." + enc([]byte("signature"))
	}
	tests := []struct {
		name, token string
		want        int64
	}{
		{"integer exp", unsigned(`{"exp":1900000000}`), 1900000000},
		{"fractional exp", unsigned(`{"exp":1900000000.5}`), 1900000000},
		{"no exp", unsigned(`{"sub":"x"}`), 0},
		{"zero exp", unsigned(`{"exp":0}`), 0},
		{"claims not JSON", unsigned(`not json`), 0},
		{"opaque", "opaque", 0},
		{"parts not base64url JSON", "a.b.c", 0},
		{"bootstrap token", "abcdef.0123456789abcdef", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := JWTExpiry(tt.token)
			require.Equal(t, tt.want != 0, ok)
			if ok {
				require.Equal(t, tt.want, got.Unix())
			}
		})
	}
}
