package clusterset

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
)

func TestValidate(t *testing.T) {
	streams := genericiooptions.NewTestIOStreamsDiscard()
	tests := []struct {
		name    string
		o       interface{ Validate() error }
		wantErr string
	}{
		{"create", &CreateOptions{Name: "prod", DryRun: "none", PrintFlags: NewCreateOptions(nil, streams).PrintFlags}, ""},
		{"create without name", &CreateOptions{DryRun: "none"}, "no cluster set name given"},
		{"create bad name", &CreateOptions{Name: "Prod.eu", DryRun: "none"}, `cluster set name "Prod.eu" is invalid`},
		{"create bad dry run", &CreateOptions{Name: "prod", DryRun: "maybe"}, "--dry-run maybe is not supported"},
		{"delete", &DeleteOptions{Name: "prod"}, ""},
		{"delete default", &DeleteOptions{Name: "default"}, "ManagedClusterSet default cannot be deleted"},
		{"delete global", &DeleteOptions{Name: "global"}, "ManagedClusterSet global cannot be deleted"},
		{"set", &SetOptions{Name: "prod", Clusters: []string{"c1", "c2"}}, ""},
		{"set without clusters or namespaces", &SetOptions{Name: "prod"}, "nothing to set: use --clusters a,b"},
		{"set bad cluster", &SetOptions{Name: "prod", Clusters: []string{"C_1"}}, `--clusters: cluster name "C_1" is invalid`},
		{"set into global", &SetOptions{Name: "global", Clusters: []string{"c1"}}, "clusters cannot be set into it"},
		{"set namespaces only", &SetOptions{Name: "prod", Namespaces: []string{"team-a", "b"}}, ""},
		{"set namespaces of global", &SetOptions{Name: "global", Namespaces: []string{"team-a"}}, ""},
		{"set clusters and namespaces", &SetOptions{Name: "prod", Clusters: []string{"c1"}, Namespaces: []string{"team-a"}, DryRun: "server", Output: "yaml"}, ""},
		{"set bad namespace", &SetOptions{Name: "prod", Namespaces: []string{"team-a", "Team_B"}}, `--namespaces: namespace name "Team_B" is invalid`},
		{"set long namespace", &SetOptions{Name: "prod", Namespaces: []string{strings.Repeat("n", 64)}}, "must be no more than 63 characters"},
		{"set dotted namespace", &SetOptions{Name: "prod", Namespaces: []string{"team.a"}}, `namespace name "team.a" is invalid`},
		{"set bad dry run", &SetOptions{Name: "prod", Clusters: []string{"c1"}, DryRun: "yes"}, "--dry-run yes is not supported"},
		{"set bad output", &SetOptions{Name: "prod", Clusters: []string{"c1"}, Output: "name"}, `--output "name" is not supported`},
		{"bind", &BindOptions{Name: "prod", Namespace: "apps"}, ""},
		{"bind bad namespace", &BindOptions{Name: "prod", Namespace: "Apps"}, `--namespace "Apps" is invalid`},
		{"bind dry run", &BindOptions{Name: "prod", Namespace: "apps", DryRun: "client", Output: "json"}, ""},
		{"unbind bad dry run", &BindOptions{Name: "prod", Namespace: "apps", Unbind: true, DryRun: "all"}, "--dry-run all is not supported"},
		{"unbind bad output", &BindOptions{Name: "prod", Namespace: "apps", Unbind: true, Output: "wide"}, `--output "wide" is not supported`},
		{"get all", &GetOptions{PrintFlags: NewGetOptions(nil, streams).PrintFlags}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
	t.Run("set drops repeated names", func(t *testing.T) {
		o := &SetOptions{Clusters: []string{"c1", "c2", "c1"}, Namespaces: []string{"a", "a", "b"}}
		if err := o.Complete(nil, []string{"prod"}); err != nil {
			t.Fatal(err)
		}
		if strings.Join(o.Clusters, ",") != "c1,c2" || strings.Join(o.Namespaces, ",") != "a,b" {
			t.Errorf("clusters %v, namespaces %v; want c1,c2 and a,b", o.Clusters, o.Namespaces)
		}
	})
	t.Run("create parses --cluster-selector", func(t *testing.T) {
		o := &CreateOptions{ClusterSelector: "env=prod,region in (eu)"}
		if err := o.Complete(nil, []string{"prod"}); err != nil {
			t.Fatal(err)
		}
		if o.selector == nil || o.selector.MatchLabels["env"] != "prod" || len(o.selector.MatchExpressions) != 1 {
			t.Errorf("selector = %+v, want env=prod and region in (eu)", o.selector)
		}
		err := (&CreateOptions{ClusterSelector: "env in ("}).Complete(nil, []string{"x"})
		assert.ErrorContains(t, err, "--cluster-selector")
	})
}

func TestSetsTable(t *testing.T) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	created := metav1.NewTime(now.Add(-2 * time.Hour))
	cluster := func(name string, labels map[string]string) clusterv1.ManagedCluster {
		return clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	sets := []clusterv1beta2.ManagedClusterSet{
		{ObjectMeta: metav1.ObjectMeta{Name: "default", CreationTimestamp: created}},
		{ObjectMeta: metav1.ObjectMeta{Name: "eu", CreationTimestamp: created}, Spec: clusterv1beta2.ManagedClusterSetSpec{
			ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector,
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"region": "eu"}}}},
			Status: clusterv1beta2.ManagedClusterSetStatus{Conditions: []metav1.Condition{{Type: clusterv1beta2.ManagedClusterSetConditionEmpty, Status: metav1.ConditionFalse}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "global", CreationTimestamp: created}, Spec: clusterv1beta2.ManagedClusterSetSpec{
			ClusterSelector:   clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{}},
			ManagedNamespaces: []clusterv1.ManagedNamespaceConfig{{Name: "team-a"}, {Name: "team-b"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "legacy", CreationTimestamp: created}, Spec: clusterv1beta2.ManagedClusterSetSpec{
			ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LegacyClusterSetLabel}}},
	}
	clusters := []clusterv1.ManagedCluster{
		cluster("c1", map[string]string{clusterv1beta2.ClusterSetLabel: "default", "region": "eu"}),
		cluster("c2", map[string]string{clusterv1beta2.ClusterSetLabel: "default"}),
		cluster("c3", map[string]string{clusterv1beta2.ClusterSetLabel: "legacy", "region": "eu"}),
	}
	bound := map[string][]string{"default": {"apps", "ops"}, "eu": {"apps"}}
	tests := []struct {
		name string
		wide bool
		want []string
	}{
		{"narrow", false, []string{
			"NAME BOUND NAMESPACES CLUSTERS SELECTOR TYPE MANAGED NAMESPACES AGE",
			"default apps,ops 2 ExclusiveClusterSetLabel 120m",
			"eu apps 2 LabelSelector 120m",
			"global 3 LabelSelector team-a,team-b 120m",
			"legacy 1 ExclusiveClusterSetLabel 120m",
		}},
		{"wide", true, []string{
			"NAME BOUND NAMESPACES CLUSTERS SELECTOR TYPE MANAGED NAMESPACES AGE EMPTY",
			"default apps,ops 2 ExclusiveClusterSetLabel 120m",
			"eu apps 2 LabelSelector 120m False",
			"global 3 LabelSelector team-a,team-b 120m",
			"legacy 1 ExclusiveClusterSetLabel 120m",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := printers.NewTablePrinter(printers.PrintOptions{Wide: tt.wide}).PrintObj(SetsTable(sets, bound, clusters, now), &out); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				got = append(got, strings.Join(strings.Fields(l), " "))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("table =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
