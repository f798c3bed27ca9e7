package kubeconfig

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TokenKey holds the bearer token of an add-on's hub credential obtained
// with the token driver; the Secret's kubeconfig names it as its tokenFile.
const TokenKey = "token"

// AddonTokenCredentialData returns the data of the hub-credential Secret
// <addon>-hub-kubeconfig of the agent of addon on cluster with the token
// driver: the ServiceAccount token under TokenKey, a kubeconfig for the
// server, CA and proxy of hub whose user reads its token from the file
// TokenKey, ClusterNameKey, AgentNameKey (the add-on's name) and
// AddonNameKey. As in OCM, the kubeconfig names the token by file rather
// than embedding it: an add-on agent that mounts the Secret as a directory
// then picks up each refreshed token without restarting, since client-go
// reads a token file again as it changes. FromSecret reads the file from
// the Secret's key.
func AddonTokenCredentialData(hub *Info, cluster, addon string, token []byte) (map[string][]byte, error) {
	data, err := TokenCredentialData(hub, cluster, addon, token)
	if err != nil {
		return nil, err
	}
	data[AddonNameKey] = []byte(addon)
	return data, nil
}

// TokenCredentialData returns the data of a hub-credential Secret that holds
// a ServiceAccount token: the token under TokenKey, a kubeconfig for the
// server, CA and proxy of hub whose user reads its token from the file
// TokenKey, ClusterNameKey and AgentNameKey. The registration agent's
// Secret hub-kubeconfig-secret holds one with the token registration driver
// (for the cluster's agent ServiceAccount), an add-on agent's one with the
// add-on token driver (AddonTokenCredentialData).
func TokenCredentialData(hub *Info, cluster, agentName string, token []byte) (map[string][]byte, error) {
	if len(token) == 0 {
		return nil, errors.New("the token is empty")
	}
	kc, err := write(hub.Server, hub.CAData, hub.ProxyURL, HubContextName, &clientcmdapi.AuthInfo{TokenFile: TokenKey}, HubUserName)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		KubeconfigKey:  kc,
		TokenKey:       token,
		ClusterNameKey: []byte(cluster),
		AgentNameKey:   []byte(agentName),
	}, nil
}

// ServiceAccountToken is what a ServiceAccount token issued by the
// TokenRequest API says of itself (its JWT claims). The claims are read,
// not verified: the hub verifies the token; the agent only needs to know
// whom it names and when to refresh it.
type ServiceAccountToken struct {
	// Namespace and Name name the ServiceAccount; UID is its UID.
	Namespace, Name, UID string
	// IssuedAt and Expiry bound the token's lifetime.
	IssuedAt, Expiry time.Time
}

// saClaims are the JWT claims of a ServiceAccount token that
// ServiceAccountToken reads.
type saClaims struct {
	IssuedAt   int64 `json:"iat"`
	Expiry     int64 `json:"exp"`
	Kubernetes struct {
		Namespace      string `json:"namespace"`
		ServiceAccount struct {
			Name string `json:"name"`
			UID  string `json:"uid"`
		} `json:"serviceaccount"`
	} `json:"kubernetes.io"`
}

// ParseServiceAccountToken reads the claims of a ServiceAccount token
// (JWTClaims).
func ParseServiceAccountToken(token []byte) (*ServiceAccountToken, error) {
	var c saClaims
	if err := JWTClaims(string(token), &c); err != nil {
		return nil, err
	}
	if c.Expiry == 0 || c.Kubernetes.ServiceAccount.Name == "" {
		return nil, errors.New("the token names no ServiceAccount or no expiry")
	}
	return &ServiceAccountToken{
		Namespace: c.Kubernetes.Namespace, Name: c.Kubernetes.ServiceAccount.Name, UID: c.Kubernetes.ServiceAccount.UID,
		IssuedAt: time.Unix(c.IssuedAt, 0), Expiry: time.Unix(c.Expiry, 0),
	}, nil
}

// JWTClaims decodes the claims of token, a JWT (header, payload and
// signature, base64url encoded and joined by dots), into claims, without
// verifying its signature: the server that receives the token verifies it;
// its holder only reads whom it names and when it expires.
func JWTClaims(token string, claims any) error {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return errors.New("the token is not a JWT (three dot-separated parts)")
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return fmt.Errorf("decode the token's claims: %w", err)
	}
	if err := json.Unmarshal(payload, claims); err != nil {
		return fmt.Errorf("decode the token's claims: %w", err)
	}
	return nil
}

// JWTExpiry returns the exp claim of token when it is a JWT with one
// (JWTClaims), and false for any other token (an opaque or a bootstrap
// token).
func JWTExpiry(token string) (time.Time, bool) {
	var claims struct {
		Exp *json.Number `json:"exp"`
	}
	if err := JWTClaims(token, &claims); err != nil || claims.Exp == nil {
		return time.Time{}, false
	}
	exp, err := claims.Exp.Float64()
	if err != nil || exp <= 0 {
		return time.Time{}, false
	}
	return time.Unix(int64(exp), 0).UTC(), true
}

// TokenRefreshFraction is the part of a token's lifetime after which the
// agent refreshes it (OCM's 80 %).
const TokenRefreshFraction = 0.8

// RefreshTime returns when t should be refreshed: once TokenRefreshFraction
// of its lifetime has passed.
func (t *ServiceAccountToken) RefreshTime() time.Time {
	return t.IssuedAt.Add(time.Duration(float64(t.Expiry.Sub(t.IssuedAt)) * TokenRefreshFraction))
}

// ValidateToken checks that c is a usable token credential of the
// ServiceAccount namespace/name with UID uid (any UID when empty) at now:
// the kubeconfig carries a token (from TokenKey or embedded), the token
// names that ServiceAccount and has not expired. It returns the token's
// claims.
func (c *HubCredential) ValidateToken(namespace, name, uid string, now time.Time) (*ServiceAccountToken, error) {
	if c.Kubeconfig.Token == "" {
		return nil, fmt.Errorf("its kubeconfig carries no token (key %s)", TokenKey)
	}
	t, err := ParseServiceAccountToken([]byte(c.Kubeconfig.Token))
	if err != nil {
		return nil, err
	}
	switch {
	case t.Namespace != namespace || t.Name != name:
		return nil, fmt.Errorf("the token is for ServiceAccount %s/%s, not %s/%s", t.Namespace, t.Name, namespace, name)
	case uid != "" && t.UID != uid:
		return nil, fmt.Errorf("the token is for ServiceAccount UID %s, but %s/%s now has UID %s (it was recreated)", t.UID, namespace, name, uid)
	case !now.Before(t.Expiry):
		return nil, fmt.Errorf("the token expired at %s", t.Expiry.UTC().Format(time.RFC3339))
	}
	return t, nil
}
