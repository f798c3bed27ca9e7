package version

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	pkgversion "github.com/kubectl-ocm/kubectl-ocm/pkg/version"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// cluster builds a ManagedCluster whose agent reports agent ("" for none).
func cluster(name, agent string) clusterv1.ManagedCluster {
	mc := clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	mc.Status.Version.Kubernetes = "v1.37.1"
	mc.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue}}
	if agent != "" {
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{pkgversion.AgentClaim(agent)}
	}
	return mc
}

func TestClusterVersionsAndWarning(t *testing.T) {
	tests := []struct {
		name     string
		hub      string
		clusters []clusterv1.ManagedCluster
		// rows are the expected table lines, warning the expected parts of
		// the warning ("" for none).
		rows    []string
		warning []string
	}{
		{
			name: "all within the policy", hub: "v0.7.1",
			clusters: []clusterv1.ManagedCluster{cluster("b", "v0.5.0"), cluster("a", "v0.7.1")},
			rows:     []string{"a      True        v0.7.1          v1.37.1              ok", "b      True        v0.5.0          v1.37.1              ok"},
		},
		{
			name: "older and newer agents named with the fix", hub: "v0.7.1",
			clusters: []clusterv1.ManagedCluster{cluster("new", "v0.8.0"), cluster("old", "v0.4.2"), cluster("fine", "v0.6.0"), cluster("ocm", "")},
			rows: []string{
				"new    True        v0.8.0          v1.37.1              unsupported: newer than the hub controller v0.7.1",
				"ocm    True        <unknown>       v1.37.1              -",
				"old    True        v0.4.2          v1.37.1              unsupported: 3 minor versions older",
			},
			warning: []string{"the agents of 2 managed clusters are outside", "\n  new: agent v0.8.0, newer than the hub controller v0.7.1\n",
				"\n  old: agent v0.4.2, 3 minor versions older than the hub controller v0.7.1", "\nFix: ", "`kubectl ocm upgrade klusterlet --bundle-version v0.7.1 --context <cluster>`", "upgrade the hub first with `kubectl ocm upgrade hub`"},
		},
		{
			name: "one older agent", hub: "v1.4.0",
			clusters: []clusterv1.ManagedCluster{cluster("a", "v1.1.0")},
			rows:     []string{"a      True        v1.1.0          v1.37.1              unsupported: 3 minor versions older"},
			warning:  []string{"the agent of 1 managed cluster is outside", "\n  a: agent v1.1.0, 3 minor versions older than the hub controller v1.4.0 (the policy allows 2)\n"},
		},
		{
			name: "a development hub judges nothing", hub: "v0.0.0-dev",
			clusters: []clusterv1.ManagedCluster{cluster("a", "v0.1.0")},
			rows:     []string{"a      True        v0.1.0          v1.37.1              -"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := clusterVersions(tt.clusters, tt.hub)
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			if err := cli.PrintTable(streams.Out, ClustersTable(got), false); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(out.String(), "NAME   AVAILABLE   AGENT VERSION   KUBERNETES VERSION   SKEW\n") {
				t.Errorf("table header:\n%s", out)
			}
			for _, row := range tt.rows {
				if !strings.Contains(out.String(), row) {
					t.Errorf("table lacks %q:\n%s", row, out)
				}
			}
			w := agentSkewWarning(got, tt.hub)
			if (w == "") != (len(tt.warning) == 0) {
				t.Fatalf("warning = %q, want one containing %q", w, tt.warning)
			}
			for _, part := range tt.warning {
				if !strings.Contains(w, part) {
					t.Errorf("warning lacks %q: %s", part, w)
				}
			}
		})
	}
}

func TestRunWithoutHub(t *testing.T) {
	unreachable := genericclioptions.NewConfigFlags(false)
	unreachable.APIServer = ptr.To("https://127.0.0.1:1")
	tests := []struct {
		name       string
		clientOnly bool
		output     string
		wantOut    []string
		wantErrOut string
	}{
		{"client only", true, "", []string{"Client Version: " + pkgversion.Version}, ""},
		{"unreachable hub is a warning", false, "", []string{"Client Version: " + pkgversion.Version}, "Warning: cannot reach the hub at https://127.0.0.1:1"},
		{"unreachable hub as JSON", false, "json", []string{`"clientVersion"`, `"warnings"`, "cannot reach the hub"}, "Warning: cannot reach the hub"},
		{"client only as YAML", true, "yaml", []string{"clientVersion:", "version: " + pkgversion.Version}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			o := NewOptions(unreachable, streams)
			o.ClientOnly, o.Output = tt.clientOnly, tt.output
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			if err := o.Run(context.Background()); err != nil {
				t.Fatalf("Run: %v", err)
			}
			for _, want := range tt.wantOut {
				if !strings.Contains(out.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
			if tt.wantErrOut == "" && errOut.Len() > 0 || !strings.Contains(errOut.String(), tt.wantErrOut) {
				t.Errorf("stderr = %q, want %q", errOut, tt.wantErrOut)
			}
			if tt.output == "json" {
				var res Result
				if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Hub != nil || res.ClientVersion.Version != pkgversion.Version {
					t.Errorf("-o json does not decode to a Result without a hub: %v\n%s", err, out)
				}
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		output  string
		wantErr bool
	}{{"", false}, {"json", false}, {"yaml", false}, {"wide", true}} {
		o := NewOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
		o.Output = tt.output
		if err := o.Validate(); (err != nil) != tt.wantErr {
			t.Errorf("Validate(-o %q) = %v, wantErr %v", tt.output, err, tt.wantErr)
		}
	}
}
