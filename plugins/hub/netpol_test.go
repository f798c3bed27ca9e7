package hub

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/config"
)

// TestInitNetworkPolicyFlags checks that --network-policy and the two
// namespace flags, each of which implies it, become the ClusterManager's
// spec.networkPolicyConfiguration, which is absent without them; init
// itself writes no NetworkPolicy (the operator renders them).
func TestInitNetworkPolicyFlags(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want any // the field, nil when absent
	}{
		{name: "no flag", want: nil},
		{name: "--network-policy", args: []string{"--network-policy"}, want: map[string]any{}},
		{name: "--network-policy-monitoring-namespace", args: []string{"--network-policy-monitoring-namespace", "monitoring"},
			want: map[string]any{"monitoringNamespace": "monitoring"}},
		{name: "--network-policy-apiserver-namespace", args: []string{"--network-policy-apiserver-namespace", "kube-system"},
			want: map[string]any{"apiServerNamespace": "kube-system"}},
		{name: "all three", args: []string{"--network-policy", "--network-policy-monitoring-namespace", "monitoring", "--network-policy-apiserver-namespace", "kube-system"},
			want: map[string]any{"monitoringNamespace": "monitoring", "apiServerNamespace": "kube-system"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			cmd := NewCmdHub(kubeconfigFor(t, "https://127.0.0.1:1"), streams)
			cmd.SetArgs(append([]string{"init", "--dry-run", "-o", "yaml"}, tt.args...))
			require.NoError(t, cmd.ExecuteContext(context.Background()))
			objs, err := config.DecodeDocuments(out.Bytes())
			require.NoError(t, err)
			var got any
			clusterManagers := 0
			for _, obj := range objs {
				switch obj.GetKind() {
				case "ClusterManager":
					clusterManagers++
					if np, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "networkPolicyConfiguration"); found {
						got = np
					}
				case "NetworkPolicy":
					t.Errorf("hub init writes NetworkPolicy %s, which the operator renders", obj.GetName())
				}
			}
			require.Equal(t, 1, clusterManagers)
			require.Equal(t, tt.want, got)
		})
	}
}

// TestInitNetworkPolicyRefused checks that a namespace flag that names no
// namespace stops init, naming the flag, before it sends the hub any
// request.
func TestInitNetworkPolicyRefused(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		requests.Add(1)
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer srv.Close()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{args: []string{"--network-policy-monitoring-namespace", "Monitoring"},
			want: `--network-policy-monitoring-namespace "Monitoring" is not a namespace name`},
		{args: []string{"--network-policy", "--network-policy-apiserver-namespace", "kube_system"},
			want: `--network-policy-apiserver-namespace "kube_system" is not a namespace name`},
	} {
		t.Run(tt.args[len(tt.args)-2], func(t *testing.T) {
			cmd := NewCmdHub(kubeconfigFor(t, srv.URL), genericiooptions.NewTestIOStreamsDiscard())
			cmd.SetArgs(append([]string{"init"}, tt.args...))
			require.ErrorContains(t, cmd.ExecuteContext(context.Background()), tt.want)
			if n := requests.Load(); n != 0 {
				t.Errorf("init sent %d requests before refusing the flag", n)
			}
		})
	}
}
