package process

import (
	"slices"
	"strings"
	"testing"
)

// TestBaseEnv checks what a child inherits: the path, home, temporary
// directory, race log and the Go collector's settings, and no client
// configuration of the machine (KUBECONFIG, proxies, in-cluster Service).
func TestBaseEnv(t *testing.T) {
	for name, value := range map[string]string{
		"PATH": "/usr/bin", "HOME": "/home/tester", "TMPDIR": "/tmp/x", "GORACE": "log_path=/tmp/race",
		"GOGC": "400", "GOMEMLIMIT": "2GiB",
		"KUBECONFIG": "/etc/kubeconfig", "HTTPS_PROXY": "http://proxy:3128", "KUBERNETES_SERVICE_HOST": "10.0.0.1",
	} {
		t.Setenv(name, value)
	}
	env := baseEnv()
	for _, want := range []string{"PATH=/usr/bin", "HOME=/home/tester", "TMPDIR=/tmp/x", "GORACE=log_path=/tmp/race", "GOGC=400", "GOMEMLIMIT=2GiB"} {
		if !slices.Contains(env, want) {
			t.Errorf("the child's environment %q lacks %s", env, want)
		}
	}
	for _, kv := range env {
		for _, banned := range []string{"KUBECONFIG=", "HTTPS_PROXY=", "KUBERNETES_SERVICE_HOST="} {
			if strings.HasPrefix(kv, banned) {
				t.Errorf("the child inherits %s", kv)
			}
		}
	}
}
