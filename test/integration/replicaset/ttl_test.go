package replicaset

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// ttlWork creates the ManifestWork name in cluster with ttl (nil: none) and
// labels, and, when complete is set, reports Complete=True as the agent
// would, with lastTransitionTime completedAt.
func (s *suite) ttlWork(t *testing.T, cluster, name string, ttl *int64, labels map[string]string, complete bool, completedAt time.Time) {
	t.Helper()
	mw := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name, Labels: labels},
		Spec: workv1.ManifestWorkSpec{
			Workload:     workv1.ManifestsTemplate{Manifests: []workv1.Manifest{configMap(name)}},
			DeleteOption: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeForeground, TTLSecondsAfterFinished: ttl},
		},
	}
	kit.Must(t, "create ManifestWork "+name, s.admin.Create(s.ctx, mw))
	if !complete {
		return
	}
	mw.Status.Conditions = []metav1.Condition{{Type: workv1.WorkComplete, Status: True, Reason: "Test",
		ObservedGeneration: mw.Generation, LastTransitionTime: metav1.NewTime(completedAt)}}
	kit.Must(t, "report "+name+" Complete", s.admin.Status().Update(s.ctx, mw))
}

// gone waits until the ManifestWork cluster/name no longer exists and
// returns when that was seen.
func (s *suite) gone(t *testing.T, cluster, name string) time.Time {
	t.Helper()
	s.poll(t, "ManifestWork "+cluster+"/"+name+" deleted", func(ctx context.Context) (bool, error) {
		err := s.admin.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, &workv1.ManifestWork{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	return time.Now()
}

// testTTL checks spec.deleteOption.ttlSecondsAfterFinished: a Complete work
// is deleted once the TTL has passed since it completed, never before; a
// work not Complete, without a TTL, or owned by a ManifestWorkReplicaSet is
// kept.
func (s *suite) testTTL(t *testing.T) {
	const cluster = "cluster8"
	long := time.Now().Add(-time.Hour)
	t.Run("kept: not Complete, no TTL, TTL not reached, managed by a replica set", func(t *testing.T) {
		s.ttlWork(t, cluster, "ttl-running", ptr.To[int64](0), nil, false, time.Time{})
		s.ttlWork(t, cluster, "ttl-none", nil, nil, true, long)
		s.ttlWork(t, cluster, "ttl-later", ptr.To[int64](7200), nil, true, long)
		s.ttlWork(t, cluster, "ttl-mwrs", ptr.To[int64](0),
			map[string]string{workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey: "default.some-set"}, true, long)
		// A work queued after the four is deleted: the controller has seen them.
		s.ttlWork(t, cluster, "ttl-sentinel", ptr.To[int64](0), nil, true, long)
		s.gone(t, cluster, "ttl-sentinel")
		for _, name := range []string{"ttl-running", "ttl-none", "ttl-later", "ttl-mwrs"} {
			if err := s.admin.Get(s.ctx, client.ObjectKey{Namespace: cluster, Name: name}, &workv1.ManifestWork{}); err != nil {
				t.Errorf("ManifestWork %s should be kept: %v", name, err)
			}
		}
	})
	t.Run("deleted when Complete for longer than the TTL", func(t *testing.T) {
		s.ttlWork(t, cluster, "ttl-past", ptr.To[int64](60), nil, true, long)
		s.gone(t, cluster, "ttl-past")
	})
	t.Run("deleted after the TTL, not before", func(t *testing.T) {
		completed := time.Now().Truncate(time.Second)
		s.ttlWork(t, cluster, "ttl-wait", ptr.To[int64](3), nil, true, completed)
		if at := s.gone(t, cluster, "ttl-wait"); at.Sub(completed) < 3*time.Second {
			t.Errorf("ManifestWork deleted %v after it completed, before its TTL of 3s", at.Sub(completed))
		}
	})
}
