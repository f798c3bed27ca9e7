package accept

import (
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		clusters []string
		timeout  time.Duration
		wantErr  bool
	}{
		{"one cluster", []string{"cluster1"}, time.Minute, false},
		{"duplicates and blanks are dropped", []string{"c1", " c1", ""}, time.Minute, false},
		{"no cluster", nil, time.Minute, true},
		{"invalid name", []string{"Cluster_1"}, time.Minute, true},
		{"zero timeout", []string{"c1"}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
			o.Clusters, o.Timeout = tt.clusters, tt.timeout
			if err := o.Complete(nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := o.Validate(); (err != nil) != tt.wantErr {
				t.Errorf("Validate() = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}
