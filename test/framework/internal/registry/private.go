package registry

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
)

const (
	// PrivatePort is where the private registry listens on each node's
	// loopback.
	PrivatePort = 5001
	// PrivateHost is the private registry's name on the nodes: images in
	// it are named PrivateHost/<repository>:<tag>, and the nodes' runtime
	// pulls them from it directly, over plain HTTP.
	PrivateHost = "localhost:5001"
	// Realm is the realm of the private registry's Basic challenge.
	Realm = "kubectl-ocm development registry"
)

// Credentials are the user name and password the private registry
// requires.
type Credentials struct {
	Username, Password string
}

// StartPrivate starts the private registry with its blobs under dir,
// serving on the host's loopback: a registry of its own, whose every
// request must carry new random credentials (Credentials), else it is
// answered 401 with a Basic challenge.
func StartPrivate(dir string) (*Server, error) {
	user, err := randomHex(4)
	if err != nil {
		return nil, err
	}
	password, err := randomHex(16)
	if err != nil {
		return nil, err
	}
	return start(dir, PrivatePort, &Credentials{Username: "ocm-" + user, Password: password})
}

// Credentials returns what the private registry requires, nil for the
// environment's registry.
func (r *Server) Credentials() *Credentials {
	if r.creds == nil {
		return nil
	}
	c := *r.creds
	return &c
}

// DockerConfigJSON returns a docker config.json holding c for the private
// registry as the nodes name it: the .dockerconfigjson of a Secret of type
// kubernetes.io/dockerconfigjson that lets a Pod pull from it.
func (c Credentials) DockerConfigJSON() []byte {
	type entry struct {
		Username string `json:"username"`
		Password string `json:"password"`
		Auth     string `json:"auth"`
	}
	b, err := json.Marshal(map[string]map[string]entry{"auths": {PrivateHost: {
		Username: c.Username, Password: c.Password,
		Auth: base64.StdEncoding.EncodeToString([]byte(c.Username + ":" + c.Password)),
	}}})
	if err != nil {
		panic(err) // strings only
	}
	return b
}

// requireBasicAuth answers a request without creds 401 with a Basic
// challenge, as a registry with user names and passwords does, and passes
// the others to next.
func requireBasicAuth(creds Credentials, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, password, ok := r.BasicAuth()
		if ok && subtle.ConstantTimeCompare([]byte(user), []byte(creds.Username)) == 1 &&
			subtle.ConstantTimeCompare([]byte(password), []byte(creds.Password)) == 1 {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", fmt.Sprintf("Basic realm=%q", Realm))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		// The registry API's error body, which clients show.
		_, _ = w.Write([]byte(`{"errors":[{"code":"UNAUTHORIZED","message":"authentication required","detail":null}]}`))
	})
}

// PrivateHostsTOML is the containerd hosts.toml for PrivateHost: pull from
// it over plain HTTP.
func PrivateHostsTOML() string {
	server := "http://" + PrivateHost
	return fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", server, server)
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
