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
		dryRun   string
		wait     bool
		wantErr  bool
	}{
		{"one cluster", []string{"cluster1"}, time.Minute, "none", false, false},
		{"duplicates and blanks are dropped", []string{"c1", " c1", ""}, time.Minute, "none", false, false},
		{"no cluster", nil, time.Minute, "none", false, true},
		{"invalid name", []string{"Cluster_1"}, time.Minute, "none", false, true},
		{"reserved name", []string{"managed-clusters"}, time.Minute, "none", false, true},
		{"zero timeout", []string{"c1"}, 0, "none", false, true},
		{"client dry run", []string{"c1"}, time.Minute, "client", false, false},
		{"server dry run", []string{"c1"}, time.Minute, "server", false, false},
		{"unknown dry run", []string{"c1"}, time.Minute, "yes", false, true},
		{"dry run and wait", []string{"c1"}, time.Minute, "client", true, true},
		{"wait", []string{"c1"}, time.Minute, "none", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
			o.Clusters, o.Timeout, o.DryRun, o.Wait = tt.clusters, tt.timeout, tt.dryRun, tt.wait
			if err := o.Complete(nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := o.Validate(); (err != nil) != tt.wantErr {
				t.Errorf("Validate() = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}
