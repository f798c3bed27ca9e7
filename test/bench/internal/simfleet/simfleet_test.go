package simfleet_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/lease"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/simfleet"
)

func TestMain(m *testing.M) { os.Exit(benchkit.Main(m, "simfleet")) }

// TestAgentsActAsTheirClusters registers two clusters through one shared
// connection on a hub installed as shipped and checks that each agent's
// requests are its own cluster's: the API server names the agent's user
// and groups, the hub's RBAC lets an agent renew its own lease, report its
// own status and acknowledge its own works, and refuses it the other
// cluster's.
func TestAgentsActAsTheirClusters(t *testing.T) {
	f := benchkit.StartFleet(t, config.HubOperatorValues{AutoApproveUsers: []string{benchkit.SimBootstrapUser}})
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	runCtx, stop := context.WithCancel(context.Background())
	fleet, err := simfleet.New(runCtx, f.Hub.RESTConfig(), simfleet.Options{BootstrapUser: benchkit.SimBootstrapUser, ServeWorks: true,
		Concurrency: 2, WorkWorkers: 2, AgentQPS: 5, AgentBurst: 10, Timeout: 2 * time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() {
		stop()
		fleet.Wait()
	})
	require.NoError(t, fleet.Register(ctx, []string{"sim-a", "sim-b"}))
	assert.EqualValues(t, 2, fleet.Counters().Registered)
	a := fleet.Client("sim-a")
	require.NotNil(t, a)
	assert.Nil(t, fleet.Client("sim-c"))

	review := &authenticationv1.SelfSubjectReview{}
	require.NoError(t, a.Create(ctx, review))
	user, groups := benchkit.SimAgentUser("sim-a")
	assert.Equal(t, user, review.Status.UserInfo.Username)
	assert.Subset(t, review.Status.UserInfo.Groups, groups)
	assert.NotContains(t, review.Status.UserInfo.Groups, "system:masters", "the harness's own groups must not leak into the agent's")

	require.NoError(t, new(lease.Renewer).Renew(ctx, a, "sim-a", time.Now()))
	assert.True(t, apierrors.IsForbidden(new(lease.Renewer).Renew(ctx, a, "sim-b", time.Now())), "sim-a renewing sim-b's lease")
	assert.True(t, apierrors.IsForbidden(benchkit.ReportAvailable(ctx, a, "sim-b")), "sim-a reporting sim-b's status")

	// A work in sim-b's namespace is acknowledged by sim-b's agent; sim-a
	// may not write its status.
	raw, err := json.Marshal(&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "hello"}})
	require.NoError(t, err)
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "sim-b", Name: "hello"},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}}}
	require.NoError(t, f.HubClient.Create(ctx, w))
	// The agent counts its write once the hub has answered it, so the
	// counter may lag the Applied condition a reader sees.
	benchkit.Poll(ctx, t, 100*time.Millisecond, time.Minute, "sim-b's work Applied and counted", func(ctx context.Context) (bool, error) {
		if err := f.HubClient.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(w.Status.Conditions, workv1.WorkApplied) && fleet.Counters().WorkWrites > 0, nil
	})
	assert.EqualValues(t, 1, fleet.Counters().WorkWrites)
	w.Status.Conditions = nil
	assert.True(t, apierrors.IsForbidden(a.Status().Update(ctx, w)), "sim-a writing the status of sim-b's work")
}
