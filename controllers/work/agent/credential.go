package agent

import (
	"crypto/sha256"
	"encoding/hex"
)

// HubHash identifies a hub as OCM does: the hex SHA-256 of the hub API
// server URL from the hub kubeconfig (rest.Config.Host). It prefixes the
// names of AppliedManifestWorks.
func HubHash(host string) string {
	sum := sha256.Sum256([]byte(host))
	return hex.EncodeToString(sum[:])
}
