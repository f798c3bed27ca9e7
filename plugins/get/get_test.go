package get

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

func TestClustersTable(t *testing.T) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	mc := clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name: "cluster1", CreationTimestamp: metav1.NewTime(now.Add(-3 * time.Hour)),
			Labels: map[string]string{"cluster.open-cluster-management.io/clusterset": "default"},
		},
		Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true, ManagedClusterClientConfigs: []clusterv1.ClientConfig{{URL: "https://127.0.0.1:6443"}}},
		Status: clusterv1.ManagedClusterStatus{
			Conditions: []metav1.Condition{
				{Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue},
				{Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionUnknown},
			},
			Version:       clusterv1.ManagedClusterVersion{Kubernetes: "v1.37.1"},
			Allocatable:   clusterv1.ResourceList{clusterv1.ResourceCPU: resource.MustParse("4")},
			ClusterClaims: []clusterv1.ManagedClusterClaim{{Name: "platform.open-cluster-management.io", Value: "Other"}},
		},
	}
	pending := clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster2", CreationTimestamp: metav1.NewTime(now.Add(-time.Minute))}}
	tests := []struct {
		name    string
		wide    bool
		want    []string
		notWant []string
	}{
		{"default columns", false, []string{
			"NAME       HUB ACCEPTED   MANAGED CLUSTER URLS     JOINED   AVAILABLE   AGE\n",
			"cluster1   true           https://127.0.0.1:6443   True     Unknown     3h\n",
			"cluster2   false                                                        60s\n",
		}, []string{"VERSION", "v1.37.1", "platform.open-cluster-management.io=Other"}},
		{"wide", true, []string{
			"VERSION   CPU   MEMORY   CLUSTERSET   CLAIMS",
			"v1.37.1   4              default      platform.open-cluster-management.io=Other",
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			table := ClustersTable([]clusterv1.ManagedCluster{mc, pending}, now)
			if err := printers.NewTablePrinter(printers.PrintOptions{Wide: tt.wide}).PrintObj(table, streams.Out); err != nil {
				t.Fatal(err)
			}
			for _, line := range tt.want {
				if !strings.Contains(out.String(), line) {
					t.Errorf("table lacks %q:\n%s", line, out.String())
				}
			}
			for _, text := range tt.notWant {
				if strings.Contains(out.String(), text) {
					t.Errorf("table shows the wide-only %q:\n%s", text, out.String())
				}
			}
		})
	}
}

func TestClustersValidate(t *testing.T) {
	for _, tt := range []struct {
		output  string
		wantErr bool
	}{{"", false}, {"wide", false}, {"json", false}, {"yaml", false}, {"name", false}, {"jsonpath={.items[*].metadata.name}", false}, {"jsonpath={.items[", true}, {"tree", true}} {
		o := NewClustersOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
		o.PrintFlags.OutputFormat = &tt.output
		if err := o.Validate(); (err != nil) != tt.wantErr {
			t.Errorf("Validate(-o %q) = %v, wantErr %v", tt.output, err, tt.wantErr)
		}
	}
}
