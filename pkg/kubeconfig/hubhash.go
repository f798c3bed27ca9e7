package kubeconfig

import (
	"crypto/sha256"
	"encoding/hex"
)

// HubHash identifies a hub as OCM's agents do: the hex SHA-256 of the hub
// API server URL of the agent's kubeconfig (rest.Config.Host). The work
// agent prefixes AppliedManifestWork names with it; the registration agent
// labels the managed namespaces it creates with it.
func HubHash(host string) string {
	sum := sha256.Sum256([]byte(host))
	return hex.EncodeToString(sum[:])
}
