package addon

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

func TestRequireAddons(t *testing.T) {
	cmas := map[string]*addonv1alpha1.ClusterManagementAddOn{
		"policy": NewClusterManagementAddOn("policy", "policy-1", nil, nil),
		"hello":  NewClusterManagementAddOn("hello", "hello-1", nil, nil),
	}
	tests := []struct {
		name    string
		cmas    map[string]*addonv1alpha1.ClusterManagementAddOn
		names   []string
		wantErr string
	}{
		{"known", cmas, []string{"hello", "policy"}, ""},
		{"unknown", cmas, []string{"hello", "ghost"}, "add-on ghost is not known on this hub: there is no ClusterManagementAddOn ghost; the add-ons are hello, policy (`kubectl ocm addon list`)"},
		{"none registered", nil, []string{"ghost"}, "there is no ClusterManagementAddOn ghost, nor any other; register it with `kubectl ocm addon create ghost -f MANIFESTS`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.wantErr == "" {
				assert.NoError(t, requireAddons(tt.cmas, tt.names...))
			} else {
				assert.ErrorContains(t, requireAddons(tt.cmas, tt.names...), tt.wantErr)
			}
		})
	}
}

func TestCheckClusters(t *testing.T) {
	objs := []client.Object{
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}},
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "pending"}},
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "nonamespace"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}},
	}
	tests := []struct {
		name     string
		objs     []client.Object
		clusters []string
		accepted bool
		wantErr  string
	}{
		{"accepted", objs, []string{"cluster1"}, true, ""},
		{"unknown", objs, []string{"cluster1", "ghost"}, true, "managed cluster ghost does not exist on this hub: the clusters are cluster1, nonamespace, pending"},
		{"no cluster at all", nil, []string{"ghost"}, false, "the hub has no managed cluster yet"},
		{"not accepted", objs, []string{"pending"}, true, "managed cluster pending is not accepted by the hub: run `kubectl ocm accept --clusters pending` first"},
		{"not accepted, not asked", objs, []string{"pending"}, false, ""},
		{"no namespace", objs, []string{"nonamespace"}, true, "managed cluster nonamespace has no namespace on the hub yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(tt.objs...).Build()
			if tt.wantErr == "" {
				assert.NoError(t, hub{Client: c}.checkClusters(t.Context(), tt.clusters, tt.accepted))
			} else {
				assert.ErrorContains(t, hub{Client: c}.checkClusters(t.Context(), tt.clusters, tt.accepted), tt.wantErr)
			}
		})
	}
}

func TestWarnUnsupported(t *testing.T) {
	cma := NewClusterManagementAddOn("hello", "hello-1", nil, nil)
	tests := []struct {
		name    string
		configs []addonv1alpha1.AddOnConfig
		want    string
	}{
		{"supported", []addonv1alpha1.AddOnConfig{adc("cluster1", "proxy")}, ""},
		{"core group", []addonv1alpha1.AddOnConfig{{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Resource: "addondeploymentconfigs"}, ConfigReferent: addonv1alpha1.ConfigReferent{Name: "x"}}},
			"Warning: add-on hello does not support configs of kind addondeploymentconfigs (it supports addontemplates.addon.open-cluster-management.io, addondeploymentconfigs.addon.open-cluster-management.io): its ManagedClusterAddOns will report Configured False\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			warnUnsupported(&out, cma, tt.configs)
			if out.String() != tt.want {
				t.Errorf("warning = %q, want %q", out.String(), tt.want)
			}
		})
	}
}
