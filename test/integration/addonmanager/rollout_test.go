package addonmanager

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/seeds"
)

// rolloutClusters are the clusters of the progressive rollout: one per
// canary decision group, then the rest.
var rolloutClusters = []string{"west1", "east1", "rest1", "rest2", "rest3", "rest4"}

// TestProgressiveRollout rolls a configuration change out with the
// Progressive strategy of seed 001-rolloutstrategy-progressive (its soak time
// shortened): the canary decision groups first, one at a time; the rollout
// stops at a failing canary and resumes when it is mended; then the rest, a
// quarter at a time, where a cluster that goes Unknown while it holds the
// rollout is skipped instead of stalling it.
func TestProgressiveRollout(t *testing.T) {
	t.Parallel() // an environment of its own
	s := setup(t)
	for _, c := range rolloutClusters {
		labels := map[string]string{}
		if region := strings.TrimSuffix(c, "1"); region == "west" || region == "east" {
			labels["region"] = region
		}
		s.cluster(t, clusterSpec{name: c, labels: labels, claims: map[string]string{platformClaim: "aws"}})
	}
	v1 := s.deployConfig(t, "deploy-config", "v1")
	s.apply(t, groupedPlacement(), progressiveCMA(t))

	// The first install goes through the same rollout; the deploy works run it.
	s.play(t, "every cluster runs v1", nil, nil, func(ctx context.Context) error {
		if err := s.ranAll(ctx, v1, rolloutClusters...); err != nil {
			return err
		}
		return s.cmaSays(ctx, addonv1alpha1.ProgressingReasonCompleted, "selected clusters 6. configured addons 6/6 completed with no errors, 0 failed 0 timeout.")
	})

	v2 := s.deployConfig(t, "deploy-config", "v2")
	failing := map[string]bool{"west1": true}
	s.play(t, "the canary west1 fails with v2, the rollout stops", failing, nil, func(ctx context.Context) error {
		m, err := s.mca(ctx, "west1")
		if err != nil {
			return err
		}
		if err := condition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing,
			metav1.ConditionFalse, addonv1alpha1.ProgressingReasonFailed); err != nil {
			return err
		}
		return s.cmaSays(ctx, addonv1alpha1.ProgressingReasonProgressing, "The rollout stopped: too many clusters failed (west1)")
	})
	s.expectDesired(t, v1, "east1", "rest1", "rest2", "rest3", "rest4")

	// west1 mended: the rollout resumes, the east canary then the rest one at
	// a time, and waits for rest2, whose deploy work is stuck.
	stuck := map[string]bool{"rest2": true}
	s.play(t, "the rollout resumes and waits for rest2", nil, stuck, func(ctx context.Context) error {
		if err := s.ranAll(ctx, v2, "west1", "east1", "rest1"); err != nil {
			return err
		}
		return s.cmaSays(ctx, addonv1alpha1.ProgressingReasonProgressing, "Waiting for rest2 (Progressing).")
	})
	s.expectDesired(t, v1, "rest3", "rest4")

	// rest2 goes Unknown: it is skipped, and the rollout completes without it.
	s.updateCluster(t, "rest2", func(mc *clusterv1.ManagedCluster) { setAvailable(mc, metav1.ConditionUnknown) })
	s.play(t, "the rollout completes, rest2 skipped", nil, stuck, func(ctx context.Context) error {
		if err := s.ranAll(ctx, v2, "west1", "east1", "rest1", "rest3", "rest4"); err != nil {
			return err
		}
		return s.cmaSays(ctx, addonv1alpha1.ProgressingReasonCompleted,
			"configured addons 5/5 completed with no errors", "Skipped clusters (gone, not available or removing the add-on): rest2.")
	})
}

// play waits until check passes, playing the deploy controller on every
// poll: the deploy work of each rollout cluster follows its desired
// configurations and is Applied, except on failing clusters (Applied False)
// and stuck ones (left as they are).
func (s *suite) play(t *testing.T, what string, failing, stuck map[string]bool, check func(ctx context.Context) error) {
	t.Helper()
	s.poll(t, what, func(ctx context.Context) (bool, error) {
		for _, c := range rolloutClusters {
			if stuck[c] {
				continue
			}
			applied := metav1.ConditionTrue
			if failing[c] {
				applied = metav1.ConditionFalse
			}
			if err := s.deploy(ctx, c, applied); err != nil {
				return false, err
			}
		}
		return true, check(ctx)
	})
}

// ranAll returns an error unless every one of clusters completed with the
// deploy-config at hash.
func (s *suite) ranAll(ctx context.Context, hash string, clusters ...string) error {
	for _, c := range clusters {
		m, err := s.mca(ctx, c)
		if err != nil {
			return err
		}
		refs := m.Status.ConfigReferences
		if len(refs) != 1 || refs[0].DesiredConfig == nil || refs[0].DesiredConfig.SpecHash != hash ||
			refs[0].LastAppliedConfig == nil || *refs[0].LastAppliedConfig != *refs[0].DesiredConfig {
			return fmt.Errorf("%s: configReferences %+v, want deploy-config %s applied", c, refs, hash)
		}
		if err := condition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing,
			metav1.ConditionFalse, addonv1alpha1.ProgressingReasonCompleted); err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
	}
	return nil
}

// expectDesired fails t unless every one of clusters still desires the
// deploy-config at hash.
func (s *suite) expectDesired(t *testing.T, hash string, clusters ...string) {
	t.Helper()
	for _, c := range clusters {
		m, err := s.mca(s.ctx, c)
		kit.Must(t, "read the add-on of "+c, err)
		if h, err := desired(m, "addondeploymentconfigs", "deploy-config"); err != nil || h != hash {
			t.Errorf("%s desires deploy-config %q (%v), want %s: the rollout did not hold it back", c, h, err, hash)
		}
	}
}

// cmaSays returns an error unless the progression of placement-aws has
// reason and a message containing every one of parts.
func (s *suite) cmaSays(ctx context.Context, reason string, parts ...string) error {
	cma := &addonv1alpha1.ClusterManagementAddOn{}
	if err := s.admin.Get(ctx, clientKey(addon), cma); err != nil {
		return err
	}
	return progressionSays(cma, reason, parts...)
}

// progressionSays returns an error unless the progression of placement-aws
// in c has reason and a message containing every one of parts.
func progressionSays(c *addonv1alpha1.ClusterManagementAddOn, reason string, parts ...string) error {
	cond, err := progression(c, "placement-aws")
	if err != nil {
		return err
	}
	if cond.Reason != reason {
		return fmt.Errorf("progression %+v, want reason %s", cond, reason)
	}
	for _, p := range parts {
		if !strings.Contains(cond.Message, p) {
			return fmt.Errorf("progression says %q, want %q", cond.Message, p)
		}
	}
	return nil
}

// groupedPlacement is the seeds' placement-aws with the decision groups the
// progressive seed names (by region label, the rest in one group), tolerating
// unreachable clusters so that they stay decided.
func groupedPlacement() *unstructured.Unstructured {
	u := placementObject("placement-aws", "aws")
	group := func(name, region string) any {
		return map[string]any{"groupName": name, "groupClusterSelector": map[string]any{
			"labelSelector": map[string]any{"matchLabels": map[string]any{"region": region}}}}
	}
	spec := u.Object["spec"].(map[string]any)
	spec["decisionStrategy"] = map[string]any{"groupStrategy": map[string]any{
		"decisionGroups": []any{group("prod-canary-west", "west"), group("prod-canary-east", "east")},
	}}
	spec["tolerations"] = []any{map[string]any{"key": clusterv1.ManagedClusterTaintUnreachable, "operator": string(clusterv1beta1.TolerationOpExists)}}
	return u
}

// progressiveCMA is the ClusterManagementAddOn of seed
// 001-rolloutstrategy-progressive with a one-second soak time instead of five
// minutes.
func progressiveCMA(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	u := seeds.Read(t, "001-rolloutstrategy-progressive.yaml")[0]
	placements, _, err := unstructured.NestedSlice(u.Object, "spec", "installStrategy", "placements")
	kit.Must(t, "read the placements of the progressive seed", err)
	kit.Must(t, "shorten minSuccessTime", unstructured.SetNestedField(placements[0].(map[string]any), "1s", "rolloutStrategy", "progressive", "minSuccessTime"))
	kit.Must(t, "set the placements", unstructured.SetNestedSlice(u.Object, placements, "spec", "installStrategy", "placements"))
	return u
}
