package app

import (
	"testing"

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
