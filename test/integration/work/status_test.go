package work

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// testDeployment is a Deployment manifest; the test cluster runs no
// deployment controller, so the test writes its status itself.
const testDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
`

// feedbackValue returns the value name of manifest ordinal of w, or nil.
func feedbackValue(w *workv1.ManifestWork, ordinal int, name string) *workv1.FieldValue {
	for _, m := range w.Status.ResourceStatus.Manifests {
		if int(m.ResourceMeta.Ordinal) != ordinal {
			continue
		}
		for _, v := range m.StatusFeedbacks.Values {
			if v.Name == name {
				return &v.Value
			}
		}
	}
	return nil
}

// waitFeedback waits until the integer feedback value name of manifest 0 of
// work is want. It polls the hub every few milliseconds, so that the
// latency the test prints is close to the real one.
func (s *suite) waitFeedback(ctx context.Context, t *testing.T, work, name string, want int64) *workv1.ManifestWork {
	t.Helper()
	var w *workv1.ManifestWork
	var last error
	err := wait.PollUntilContextTimeout(ctx, 2*time.Millisecond, pollTimeout, true, func(ctx context.Context) (bool, error) {
		w, last = s.getWork(ctx, work)
		if last != nil {
			return false, nil
		}
		v := feedbackValue(w, 0, name)
		return v != nil && v.Integer != nil && *v.Integer == want, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for feedback %s=%d of %s (last error: %v)", name, want, work, last)
	}
	return w
}

func (s *suite) testFeedback(ctx context.Context, t *testing.T) {
	work := newWork(t, "feedback", testDeployment)
	work.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
		ResourceIdentifier: workv1.ResourceIdentifier{Group: "apps", Resource: "deployments", Namespace: "default", Name: "web"},
		FeedbackRules: []workv1.FeedbackRule{
			{Type: workv1.WellKnownStatusType},
			{Type: workv1.JSONPathsType, JsonPaths: []workv1.JsonPath{
				{Name: "image", Path: ".spec.template.spec.containers[0].image"},
				{Name: "selector", Path: ".spec.selector"},
				{Name: "missing", Path: ".status.nothing"},
			}},
		},
	}}
	kit.MustCreate(ctx, t, s.hubC, work)
	w := s.waitWorkCondition(ctx, t, "feedback", workv1.WorkApplied, metav1.ConditionTrue)
	framework.Eventually(ctx, t, pollTimeout, "image feedback", func(ctx context.Context) (bool, error) {
		var err error
		w, err = s.getWork(ctx, "feedback")
		v := feedbackValue(w, 0, "image")
		return err == nil && v != nil && v.String != nil && *v.String == "nginx", err
	})
	if v := feedbackValue(w, 0, "selector"); v == nil || v.Type != workv1.JsonRaw || *v.JsonRaw != `{"matchLabels":{"app":"web"}}` {
		t.Errorf("selector feedback = %+v", v)
	}
	if v := feedbackValue(w, 0, "missing"); v != nil {
		t.Errorf("missing key reported: %+v", v)
	}
	if c := manifestCondition(w, 0, workv1.ManifestStatusFeedbackSynced); c == nil || c.Status != metav1.ConditionTrue || c.Reason != workv1.StatusFeedbackSyncedReasonSynced {
		t.Errorf("StatusFeedbackSynced = %+v", c)
	}

	// Status changes on the managed cluster reach the hub through the watch,
	// long before any resync.
	var latencies []time.Duration
	for ready := int32(1); ready <= 3; ready++ {
		d := &appsv1.Deployment{}
		if err := s.spokeC.Get(ctx, types.NamespacedName{Namespace: "default", Name: "web"}, d); err != nil {
			t.Fatal(err)
		}
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 3, ReadyReplicas: ready, AvailableReplicas: ready, UpdatedReplicas: 3}
		start := time.Now()
		if err := s.spokeC.Status().Update(ctx, d); err != nil {
			t.Fatal(err)
		}
		w = s.waitFeedback(ctx, t, "feedback", "ReadyReplicas", int64(ready))
		latencies = append(latencies, time.Since(start))
		if v := feedbackValue(w, 0, "AvailableReplicas"); v == nil || *v.Integer != int64(ready) {
			t.Errorf("AvailableReplicas = %+v, want %d", v, ready)
		}
		if v := feedbackValue(w, 0, "Replicas"); v == nil || *v.Integer != 3 {
			t.Errorf("Replicas = %+v, want 3", v)
		}
	}
	// For information only; the test asserts no timing.
	t.Logf("status change on cluster1 → feedback on the hub: %v (hub polled every 2ms)", latencies)
	if err := s.hubC.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	waitGone(ctx, t, s.hubC, w)
}

// testJob is a Job that the built-in job controller leaves alone
// (spec.managedBy), so that the test can write its status.
const testJob = `
apiVersion: batch/v1
kind: Job
metadata:
  name: once
  namespace: default
spec:
  managedBy: example.com/test
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: once
        image: busybox
        command: ["true"]
`

func (s *suite) testConditionRules(ctx context.Context, t *testing.T) {
	work := newWork(t, "rules", testJob)
	work.Spec.ManifestConfigs = []workv1.ManifestConfigOption{{
		ResourceIdentifier: workv1.ResourceIdentifier{Group: "batch", Resource: "jobs", Namespace: "default", Name: "once"},
		ConditionRules: []workv1.ConditionRule{
			{Condition: workv1.ManifestComplete, Type: workv1.WellKnownConditionsType},
			{Condition: workv1.ManifestProgressing, Type: workv1.CelConditionExpressionsType,
				CelExpressions: []string{"!hasConditions(object)"}, MessageExpression: "result ? 'running' : 'finished'"},
			{Condition: "Broken", Type: workv1.CelConditionExpressionsType, CelExpressions: []string{"object.status.("}},
		},
		FeedbackRules: []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
	}}
	kit.MustCreate(ctx, t, s.hubC, work)
	w := s.waitWorkCondition(ctx, t, "rules", workv1.WorkProgressing, metav1.ConditionTrue)
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkProgressing); c.Reason != workv1.WorkConditionRulesAggregatedReason {
		t.Errorf("work Progressing = %+v", c)
	}
	if c := manifestCondition(w, 0, workv1.ManifestProgressing); c == nil || c.Message != "running" || c.Reason != workv1.ConditionRuleReasonEvaluated {
		t.Errorf("manifest Progressing = %+v", c)
	}
	if c := manifestCondition(w, 0, workv1.ManifestComplete); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("manifest Complete = %+v", c)
	}
	if c := manifestCondition(w, 0, "Broken"); c == nil || c.Status != metav1.ConditionFalse || c.Reason != workv1.ConditionRuleReasonInvalid {
		t.Errorf("manifest Broken = %+v", c)
	}

	// The Job finishes on the managed cluster.
	job := &batchv1.Job{}
	if err := s.spokeC.Get(ctx, types.NamespacedName{Namespace: "default", Name: "once"}, job); err != nil {
		t.Fatal(err)
	}
	completeJob(ctx, t, s, job)
	w = s.waitWorkCondition(ctx, t, "rules", workv1.WorkComplete, metav1.ConditionTrue)
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkComplete); c.Reason != workv1.WorkConditionRulesAggregatedReason {
		t.Errorf("work Complete = %+v", c)
	}
	if c := manifestCondition(w, 0, workv1.ManifestComplete); c == nil || c.Status != metav1.ConditionTrue || c.Message != "Job completed" {
		t.Errorf("manifest Complete = %+v", c)
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkProgressing); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("work Progressing = %+v", c)
	}
	if v := feedbackValue(w, 0, "JobComplete"); v == nil || v.String == nil || *v.String != "True" {
		t.Errorf("JobComplete feedback = %+v", v)
	}
	if err := s.hubC.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	waitGone(ctx, t, s.hubC, w)
	waitGone(ctx, t, s.spokeC, job)
}

// testFrozenManifest checks that a manifest whose Complete condition is
// True is no longer applied while the rest of its work still is.
func (s *suite) testFrozenManifest(ctx context.Context, t *testing.T) {
	jobA := strings.ReplaceAll(testJob, "name: once", "name: job-a")
	jobB := strings.ReplaceAll(testJob, "name: once", "name: job-b")
	work := newWork(t, "frozen", jobA, jobB, configMap("default", "frozen-cm", "1"))
	for _, name := range []string{"job-a", "job-b"} {
		work.Spec.ManifestConfigs = append(work.Spec.ManifestConfigs, workv1.ManifestConfigOption{
			ResourceIdentifier: workv1.ResourceIdentifier{Group: "batch", Resource: "jobs", Namespace: "default", Name: name},
			ConditionRules:     []workv1.ConditionRule{{Condition: workv1.ManifestComplete, Type: workv1.WellKnownConditionsType}},
		})
	}
	kit.MustCreate(ctx, t, s.hubC, work)
	s.waitWorkCondition(ctx, t, "frozen", workv1.WorkComplete, metav1.ConditionFalse)

	job := &batchv1.Job{}
	if err := s.spokeC.Get(ctx, types.NamespacedName{Namespace: "default", Name: "job-a"}, job); err != nil {
		t.Fatal(err)
	}
	completeJob(ctx, t, s, job)
	framework.Eventually(ctx, t, pollTimeout, "job-a Complete", func(ctx context.Context) (bool, error) {
		w, err := s.getWork(ctx, "frozen")
		if err != nil {
			return false, err
		}
		c := manifestCondition(w, 0, workv1.ManifestComplete)
		return c != nil && c.Status == metav1.ConditionTrue, nil
	})
	// The completed Job goes away (as a TTL would remove it); then an
	// edit of the ConfigMap makes the agent apply the work again.
	if err := s.spokeC.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Fatal(err)
	}
	waitGone(ctx, t, s.spokeC, job)
	cm, err := s.configMap(ctx, "default", "frozen-cm")
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["a"] = "edited"
	if err := s.spokeC.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	s.waitDrift(ctx, t, "frozen", 2, workv1.DriftReasonModified, "frozen-cm", "restored")
	// That reconcile left the completed Job alone.
	if err := s.spokeC.Get(ctx, types.NamespacedName{Namespace: "default", Name: "job-a"}, &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Errorf("completed Job was applied again: %v", err)
	}
	w, err := s.getWork(ctx, "frozen")
	if err != nil {
		t.Fatal(err)
	}
	if c := manifestCondition(w, 0, workv1.ManifestComplete); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("job-a Complete = %+v", c)
	}
	if c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkComplete); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("work Complete = %+v, want False while job-b runs", c)
	}
	if err := s.hubC.Delete(ctx, w); err != nil {
		t.Fatal(err)
	}
	waitGone(ctx, t, s.hubC, w)
}

// completeJob writes a finished status to job on the managed cluster.
func completeJob(ctx context.Context, t *testing.T, s *suite, job *batchv1.Job) {
	t.Helper()
	now := metav1.Now()
	job.Status = batchv1.JobStatus{
		StartTime: &now, CompletionTime: &now, Succeeded: 1,
		Conditions: []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
		},
	}
	if err := s.spokeC.Status().Update(ctx, job); err != nil {
		t.Fatal(err)
	}
}
