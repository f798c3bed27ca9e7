package hub

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestJoinInfoKeys checks that -o json and -o yaml carry the token and the
// URL under both our keys and clusteradm's.
func TestJoinInfoKeys(t *testing.T) {
	pin := "sha256:" + strings.Repeat("ab", 32)
	j := JoinInfo{HubToken: "tok", HubAPIServer: "https://hub:6443", ClusterName: "c1", CACertHashes: []string{pin}}
	data, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"hubToken": "tok", "hub-token": "tok", "hubApiserver": "https://hub:6443", "hub-apiserver": "https://hub:6443", "clusterName": "c1"} {
		if got[key] != want {
			t.Errorf("%s = %v, want %q in %s", key, got[key], want, data)
		}
	}
	if hashes, _ := got["caCertHashes"].([]any); len(hashes) != 1 || hashes[0] != pin {
		t.Errorf("caCertHashes = %v, want [%s] in %s", got["caCertHashes"], pin, data)
	}
	if want := "kubectl ocm join --hub-token tok --hub-apiserver https://hub:6443 --ca-cert-hash " + pin + " --cluster-name c1"; j.Command() != want {
		t.Errorf("Command() = %q, want %q", j.Command(), want)
	}
	y, err := yaml.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	var fromYAML map[string]any
	if err := yaml.Unmarshal(y, &fromYAML); err != nil || fromYAML["hub-token"] != "tok" {
		t.Errorf("yaml %s lacks hub-token (%v)", y, err)
	}
}
