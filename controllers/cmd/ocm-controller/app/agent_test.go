package app

import (
	"testing"

	"github.com/stretchr/testify/require"
	clientfeatures "k8s.io/client-go/features"
)

// TestWithoutWatchList checks that the agent turns client-go's watch-list
// off and leaves every other gate as it was.
func TestWithoutWatchList(t *testing.T) {
	before := clientfeatures.FeatureGates()
	t.Cleanup(func() { clientfeatures.ReplaceFeatureGates(before) })
	if !before.Enabled(clientfeatures.WatchListClient) {
		t.Fatalf("WatchListClient is off by default in this client-go: the agent's override has nothing to do")
	}
	withoutWatchList()
	after := clientfeatures.FeatureGates()
	if after.Enabled(clientfeatures.WatchListClient) {
		t.Errorf("WatchListClient is on after withoutWatchList")
	}
	for _, f := range []clientfeatures.Feature{clientfeatures.InformerResourceVersion, clientfeatures.ClientsAllowCBOR} {
		if after.Enabled(f) != before.Enabled(f) {
			t.Errorf("%s changed from %v to %v", f, before.Enabled(f), after.Enabled(f))
		}
	}
}

// TestAgentWorkerFlags checks the work agent's worker flags: defaults of
// 10, values set through the flags, and counts below 1 refused naming the
// flag.
func TestAgentWorkerFlags(t *testing.T) {
	for _, tc := range []struct {
		name             string
		args             []string
		wantWorks        int
		wantAppliedWorks int
		wantErr          string
	}{
		{name: "defaults", wantWorks: 10, wantAppliedWorks: 10},
		{name: "set", args: []string{"--manifestwork-agent-workers=3", "--appliedmanifestwork-finalize-controller-workers=5"}, wantWorks: 3, wantAppliedWorks: 5},
		{name: "no ManifestWork workers", args: []string{"--manifestwork-agent-workers=0"}, wantErr: "--manifestwork-agent-workers 0 must be at least 1"},
		{name: "negative AppliedManifestWork workers", args: []string{"--appliedmanifestwork-finalize-controller-workers=-2"}, wantErr: "--appliedmanifestwork-finalize-controller-workers -2 must be at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &agentOptions{}
			if err := newAgentCommand(o).Flags().Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := o.validateWorkers()
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("validateWorkers() = %v", err)
			}
			if o.work.Workers != tc.wantWorks || o.work.AppliedWorkWorkers != tc.wantAppliedWorks {
				t.Errorf("workers %d/%d, want %d/%d", o.work.Workers, o.work.AppliedWorkWorkers, tc.wantWorks, tc.wantAppliedWorks)
			}
		})
	}
}
