package cli

import (
	"encoding/json"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestJoinInfoKeys checks that -o json and -o yaml carry the token and the
// URL under both our keys and clusteradm's.
func TestJoinInfoKeys(t *testing.T) {
	j := JoinInfo{HubToken: "tok", HubAPIServer: "https://hub:6443", ClusterName: "c1"}
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
	y, err := yaml.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	var fromYAML map[string]any
	if err := yaml.Unmarshal(y, &fromYAML); err != nil || fromYAML["hub-token"] != "tok" {
		t.Errorf("yaml %s lacks hub-token (%v)", y, err)
	}
}
