package csr

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

func TestAcceptedBefore(t *testing.T) {
	cluster := func(accepts bool, annotations ...string) *clusterv1.ManagedCluster {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1", Annotations: map[string]string{}}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: accepts}}
		for i := 0; i+1 < len(annotations); i += 2 {
			mc.Annotations[annotations[i]] = annotations[i+1]
		}
		return mc
	}
	on, forKey := clusterv1.AutomaticallyAcceptedOnAnnotationKey, clusterv1.AutomaticallyAcceptedForAnnotationKey
	tests := []struct {
		name string
		mc   *clusterv1.ManagedCluster
		want bool
	}{
		{"never accepted", cluster(false), false},
		{"accepted by an administrator", cluster(true), true},
		{"accepted automatically for this request (a retry)", cluster(true, on, "2026-11-26T12:00:00Z", forKey, "csr-1"), false},
		{"accepted automatically for another request", cluster(true, on, "2026-11-26T12:00:00Z", forKey, "csr-0"), true},
		{"accepted automatically by an older hub that named no request", cluster(true, on, "2026-11-26T12:00:00Z"), true},
		{"accepted automatically once, denied since", cluster(false, on, "2026-11-26T11:00:00Z", forKey, "csr-0"), true},
		{"accepted for this request, denied since", cluster(false, on, "2026-11-26T11:00:00Z", forKey, "csr-1"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := acceptedBefore(tt.mc, "csr-1"); got != tt.want {
				t.Errorf("acceptedBefore = %v, want %v", got, tt.want)
			}
		})
	}
}
