package v1alpha1

import (
	"testing"
	"time"
)

func TestIsReservedClusterClaimName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{name: "id.k8s.io", want: true},
		{name: "kubeversion.open-cluster-management.io", want: true},
		{name: "platform.open-cluster-management.io", want: true},
		{name: "product.open-cluster-management.io", want: true},
		{name: "region.example.com"},
		{name: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsReservedClusterClaimName(tt.name); got != tt.want {
				t.Errorf("IsReservedClusterClaimName(%q) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

func TestParseProgressDeadline(t *testing.T) {
	tests := []struct {
		value       string
		want        time.Duration
		wantForever bool
		wantErr     bool
	}{
		{value: "", wantForever: true},
		{value: "None", wantForever: true},
		{value: "10m", want: 10 * time.Minute},
		{value: "90s", want: 90 * time.Second},
		{value: "2h", want: 2 * time.Hour},
		{value: "1h30m", want: 90 * time.Minute},
		{value: "10mins", wantErr: true},
		{value: "none", wantErr: true},
		{value: "-5m", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			c := &RolloutConfig{ProgressDeadline: tt.value}
			got, forever, err := c.ProgressDeadlineDuration()
			if (err != nil) != tt.wantErr {
				t.Fatalf("ProgressDeadlineDuration() error = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want || forever != tt.wantForever {
				t.Errorf("ProgressDeadlineDuration() = %v, %v; want %v, %v", got, forever, tt.want, tt.wantForever)
			}
		})
	}
}
