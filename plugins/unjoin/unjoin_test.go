package unjoin

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/config"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name            string
		change          func(*Options)
		wantErrContains string
	}{
		{name: "default mode", change: func(*Options) {}},
		{name: "hosted without kubeconfig", change: func(o *Options) { o.Mode = ModeHosted }},
		{name: "hosted with kubeconfig", change: func(o *Options) { o.Mode, o.ManagedClusterKubeconfig = ModeHosted, "k" }},
		{name: "kubeconfig in default mode", change: func(o *Options) { o.ManagedClusterKubeconfig = "k" }, wantErrContains: "only applies with --mode hosted"},
		{name: "unknown mode", change: func(o *Options) { o.Mode = "x" }, wantErrContains: "not one of default, hosted"},
		{name: "no cluster name", change: func(o *Options) { o.ClusterName = "" }, wantErrContains: "--cluster-name is required"},
		{name: "bad cluster name", change: func(o *Options) { o.ClusterName = "C_1" }, wantErrContains: "not a valid DNS label"},
		{name: "no timeout", change: func(o *Options) { o.Timeout = 0 }, wantErrContains: "--timeout 0s must be positive"},
		{name: "dry run", change: func(o *Options) { o.DryRun = "server" }},
		{name: "unknown dry run", change: func(o *Options) { o.DryRun = "yes" }, wantErrContains: "--dry-run yes is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions(genericclioptions.NewConfigFlags(false), genericiooptions.NewTestIOStreamsDiscard())
			o.ClusterName = "cluster2"
			tt.change(o)
			err := o.Validate()
			if tt.wantErrContains == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			require.ErrorContains(t, err, tt.wantErrContains)
		})
	}
}

func TestTarget(t *testing.T) {
	tests := []struct {
		mode           string
		wantNamespace  string
		wantKlusterlet string
		wantCRDs       []string
		wantManaged    int
	}{
		{mode: ModeDefault, wantNamespace: config.AgentNamespace, wantKlusterlet: "klusterlet",
			wantCRDs: []string{config.AppliedManifestWorksCRDName, config.ClusterClaimsCRDName, config.KlusterletsCRDName}},
		{mode: ModeHosted, wantNamespace: "klusterlet-cluster2", wantKlusterlet: "klusterlet-cluster2",
			wantCRDs: []string{config.KlusterletsCRDName}, wantManaged: 2},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			o := NewOptions(genericclioptions.NewConfigFlags(false), genericiooptions.NewTestIOStreamsDiscard())
			o.ClusterName, o.Mode = "cluster2", tt.mode
			got, err := o.target()
			if err != nil {
				t.Fatal(err)
			}
			if got.namespace != tt.wantNamespace || got.klusterlet != tt.wantKlusterlet {
				t.Errorf("namespace %s klusterlet %s, want %s %s", got.namespace, got.klusterlet, tt.wantNamespace, tt.wantKlusterlet)
			}
			if names := crdNames(got.crds); names != strings.Join(tt.wantCRDs, ", ") {
				t.Errorf("CRDs on the cluster of --context: %s, want %v", names, tt.wantCRDs)
			}
			if len(got.managedCRDs) != tt.wantManaged {
				t.Errorf("%d CRDs on the managed cluster, want %d", len(got.managedCRDs), tt.wantManaged)
			}
			for _, obj := range got.objs {
				if ns := obj.GetNamespace(); ns != "" && ns != tt.wantNamespace {
					t.Errorf("%s %s in namespace %s, want %s", obj.GetKind(), obj.GetName(), ns, tt.wantNamespace)
				}
			}
		})
	}
}
