// Package flowcontrol tests the API Priority and Fairness objects the hub
// installs, on a hub whose API server runs it as production ones do.
package flowcontrol

import (
	"context"
	"net/http"
	"testing"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// priorityLevelHeader names the priority level an API server running API
// Priority and Fairness put a request in.
const priorityLevelHeader = "X-Kubernetes-PF-PriorityLevel-UID"

// TestHubControllerPriorityLevels checks where the hub's API server puts the
// hub controller's requests: its leader lease in the built-in
// leader-election level, everything else in its own ocm-hub-controller
// level; and another identity's lease requests stay out of both.
func TestHubControllerPriorityLevels(t *testing.T) {
	ctx, env := hubtest.StartWith(t, 3*time.Minute, framework.Options{PriorityAndFairness: []string{"hub"}})
	hub := env.Cluster("hub")
	admin := hub.Client()

	uid := func(name string) string {
		pl := &flowcontrolv1.PriorityLevelConfiguration{}
		if err := admin.Get(ctx, client.ObjectKey{Name: name}, pl); err != nil {
			t.Fatalf("PriorityLevelConfiguration %s: %v", name, err)
		}
		return string(pl.UID)
	}
	leaderElection, own := uid("leader-election"), uid("ocm-hub-controller")

	controller, err := hub.ConfigForServiceAccount(ctx, config.HubNamespace, config.HubControllerDeployment, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	other, err := hub.ConfigForServiceAccount(ctx, "default", "default", 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	lease := "/apis/coordination.k8s.io/v1/namespaces/" + config.HubNamespace + "/leases/ocm-hub-controller.open-cluster-management.io"
	for _, tc := range []struct {
		what, path string
		cfg        *rest.Config
		want       string
	}{
		{what: "the hub controller's leader lease", path: lease, cfg: controller, want: leaderElection},
		{what: "the hub controller's list of ManagedClusters", path: "/apis/cluster.open-cluster-management.io/v1/managedclusters", cfg: controller, want: own},
		{what: "another service account's read of that lease", path: lease, cfg: other},
	} {
		// The API server's configuration controller picks the new objects
		// up within seconds.
		var got string
		framework.Eventually(ctx, t, time.Minute, tc.what+" classified", func(ctx context.Context) (bool, error) {
			got = priorityLevelOf(ctx, t, tc.cfg, tc.path)
			if tc.want != "" {
				return got == tc.want, nil
			}
			return got != "" && got != leaderElection && got != own, nil
		})
	}
}

// priorityLevelOf returns the UID of the priority level of a GET of path as
// cfg's user; any answer (a 404, a 403) carries it.
func priorityLevelOf(ctx context.Context, t *testing.T, cfg *rest.Config, path string) string {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.Header.Get(priorityLevelHeader)
}
