package clusterprofile

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	multiclusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/multicluster/v1alpha1"
)

func TestSetStatus(t *testing.T) {
	available := func(s metav1.ConditionStatus, reason string) metav1.Condition {
		return metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable, Status: s, Reason: reason, Message: "m"}
	}
	joined := metav1.Condition{Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined", Message: "joined"}
	tests := []struct {
		name    string
		cluster clusterv1.ManagedCluster
		want    multiclusterv1alpha1.ClusterProfileStatus
	}{{
		name:    "a new cluster reports nothing",
		cluster: clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}},
		want: multiclusterv1alpha1.ClusterProfileStatus{Conditions: []metav1.Condition{
			{Type: multiclusterv1alpha1.ClusterConditionControlPlaneHealthy, Status: metav1.ConditionUnknown, Reason: ReasonNotReported, Message: "ManagedCluster c1 does not report ManagedClusterConditionAvailable"},
			{Type: ConditionJoined, Status: metav1.ConditionUnknown, Reason: ReasonNotReported, Message: "ManagedCluster c1 does not report ManagedClusterJoined"},
		}},
	}, {
		name: "a joined, available cluster with claims and a client config",
		cluster: clusterv1.ManagedCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "c1"},
			Spec: clusterv1.ManagedClusterSpec{ManagedClusterClientConfigs: []clusterv1.ClientConfig{
				{URL: ""}, {URL: "https://c1:6443", CABundle: []byte("ca")}, {URL: "https://c1-alt:6443"},
			}},
			Status: clusterv1.ManagedClusterStatus{
				Conditions:    []metav1.Condition{available(metav1.ConditionTrue, "ManagedClusterAvailable"), joined},
				Version:       clusterv1.ManagedClusterVersion{Kubernetes: "v1.31.0"},
				ClusterClaims: []clusterv1.ManagedClusterClaim{{Name: "id.k8s.io", Value: "abc"}, {Name: "empty"}, {Name: "id.k8s.io", Value: "dup"}, {Name: "region", Value: "eu"}},
			},
		},
		want: multiclusterv1alpha1.ClusterProfileStatus{
			Conditions: []metav1.Condition{
				{Type: multiclusterv1alpha1.ClusterConditionControlPlaneHealthy, Status: metav1.ConditionTrue, Reason: "ManagedClusterAvailable", Message: "m"},
				{Type: ConditionJoined, Status: metav1.ConditionTrue, Reason: "ManagedClusterJoined", Message: "joined"},
			},
			Version:    multiclusterv1alpha1.ClusterVersion{Kubernetes: "v1.31.0"},
			Properties: []multiclusterv1alpha1.Property{{Name: "id.k8s.io", Value: "abc"}, {Name: "region", Value: "eu"}},
			AccessProviders: []multiclusterv1alpha1.AccessProvider{{
				Name: AccessProviderName, Cluster: multiclusterv1alpha1.Cluster{Server: "https://c1:6443", CertificateAuthorityData: []byte("ca")},
			}},
		},
	}, {
		name: "an unknown cluster, its reason kept; an empty reason is named after the condition",
		cluster: clusterv1.ManagedCluster{
			ObjectMeta: metav1.ObjectMeta{Name: "c1"},
			Status: clusterv1.ManagedClusterStatus{Conditions: []metav1.Condition{
				available(metav1.ConditionUnknown, "ManagedClusterLeaseUpdateStopped"),
				{Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionFalse},
			}},
		},
		want: multiclusterv1alpha1.ClusterProfileStatus{Conditions: []metav1.Condition{
			{Type: multiclusterv1alpha1.ClusterConditionControlPlaneHealthy, Status: metav1.ConditionUnknown, Reason: "ManagedClusterLeaseUpdateStopped", Message: "m"},
			{Type: ConditionJoined, Status: metav1.ConditionFalse, Reason: "ManagedClusterJoinedFalse"},
		}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := multiclusterv1alpha1.ClusterProfileStatus{}
			SetStatus(&got, &tt.cluster, nil)
			for i := range got.Conditions {
				got.Conditions[i].LastTransitionTime = metav1.Time{}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("status = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestSetStatusKeepsTransitionTimeAndReplacesStaleFields(t *testing.T) {
	then := metav1.NewTime(metav1.Now().Add(-3600e9).Truncate(1e9))
	status := multiclusterv1alpha1.ClusterProfileStatus{
		Conditions:      []metav1.Condition{{Type: ConditionJoined, Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: then}},
		Properties:      []multiclusterv1alpha1.Property{{Name: "gone", Value: "x"}},
		AccessProviders: []multiclusterv1alpha1.AccessProvider{{Name: AccessProviderName}},
	}
	cluster := &clusterv1.ManagedCluster{Status: clusterv1.ManagedClusterStatus{Conditions: []metav1.Condition{
		{Type: clusterv1.ManagedClusterConditionJoined, Status: metav1.ConditionTrue, Reason: "R"},
	}}}
	SetStatus(&status, cluster, nil)
	for _, c := range status.Conditions {
		if c.Type == ConditionJoined && !c.LastTransitionTime.Equal(&then) {
			t.Errorf("Joined lastTransitionTime = %v, want %v kept", c.LastTransitionTime, then)
		}
	}
	if status.Properties != nil || status.AccessProviders != nil {
		t.Errorf("properties %v and access providers %v of a cluster reporting none are kept", status.Properties, status.AccessProviders)
	}
}

// TestTunnelAccessProvider: with the hub tunnel, every profile names the
// tunnel's endpoint of its cluster, the hub's CA and the cluster for the
// exec plugin, after the cluster's own endpoint.
func TestTunnelAccessProvider(t *testing.T) {
	cluster := &clusterv1.ManagedCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "c1"},
		Spec:       clusterv1.ManagedClusterSpec{ManagedClusterClientConfigs: []clusterv1.ClientConfig{{URL: "https://c1:6443"}}},
	}
	status := multiclusterv1alpha1.ClusterProfileStatus{}
	SetStatus(&status, cluster, &Tunnel{Server: "https://hub:6443", CAData: []byte("hub-ca")})
	if len(status.AccessProviders) != 2 || status.AccessProviders[0].Name != AccessProviderName {
		t.Fatalf("access providers = %+v, want the cluster's own, then the tunnel's", status.AccessProviders)
	}
	got := status.AccessProviders[1]
	want := multiclusterv1alpha1.AccessProvider{Name: "kubectl-ocm", Cluster: multiclusterv1alpha1.Cluster{
		Server: "https://hub:6443/apis/proxy.kubectl-ocm.io/v1alpha1/managedclusters/c1/proxy", CertificateAuthorityData: []byte("hub-ca"),
		Extensions: []multiclusterv1alpha1.NamedExtension{{Name: "client.authentication.k8s.io/exec", Extension: runtime.RawExtension{Raw: []byte(`{"clusterName":"c1"}`)}}},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tunnel access provider = %+v\nwant %+v", got, want)
	}
}

func TestIsManaged(t *testing.T) {
	tests := []struct {
		labels map[string]string
		want   bool
	}{
		{labels: Labels("s"), want: true},
		{labels: map[string]string{multiclusterv1alpha1.LabelClusterManagerKey: "other"}, want: false},
		{labels: nil, want: false},
	}
	for _, tt := range tests {
		p := &multiclusterv1alpha1.ClusterProfile{ObjectMeta: metav1.ObjectMeta{Labels: tt.labels}}
		if got := IsManaged(p); got != tt.want {
			t.Errorf("IsManaged(%v) = %v, want %v", tt.labels, got, tt.want)
		}
	}
}
