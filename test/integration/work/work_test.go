package work

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// seedWork is the manifest of test/seeds/001-manifestwork-mw-01.yaml, the reference documents' first ManifestWork.
const seedPod = `
apiVersion: v1
kind: Pod
metadata:
  name: hello
  namespace: default
spec:
  containers:
    - name: hello
      image: busybox
      command: ["sh", "-c", 'echo "Hello, Kubernetes!" && sleep 3600']
  restartPolicy: OnFailure
`

// TestWorkAgent runs the work agent through its life on one hub and one
// managed cluster: waiting for its credential, applying, updating with each
// strategy, CRDs, removal, every delete option, bad manifests, restarts,
// credential rotation, namespace isolation and executors.
func TestWorkAgent(t *testing.T) {
	framework.SkipIfShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	s := setup(ctx, t)
	// The agent starts before the registration agent wrote the credential.
	s.startAgent()

	t.Run("seed work waits for the credential, then applies", func(t *testing.T) { s.testSeed(ctx, t) })
	t.Run("propagation time on the hub", func(t *testing.T) { s.testPropagation(ctx, t) })
	t.Run("update strategies", func(t *testing.T) { s.testStrategies(ctx, t) })
	t.Run("CRD and custom resource in one work", func(t *testing.T) { s.testCRD(ctx, t) })
	t.Run("removed manifest is deleted", func(t *testing.T) { s.testRemoveManifest(ctx, t) })
	t.Run("delete options", func(t *testing.T) { s.testDeleteOptions(ctx, t) })
	t.Run("bad manifests fail alone", func(t *testing.T) { s.testBadManifests(ctx, t) })
	t.Run("bad input table", func(t *testing.T) { s.testBadInput(ctx, t) })
	t.Run("restart converges", func(t *testing.T) { s.testRestart(ctx, t) })
	t.Run("credential rotation reconnects", func(t *testing.T) { s.testRotation(ctx, t) })
	t.Run("isolation from other clusters", func(t *testing.T) { s.testIsolation(ctx, t) })
	t.Run("status feedback", func(t *testing.T) { s.testFeedback(ctx, t) })
	t.Run("feedback scrape types", func(t *testing.T) { s.testFeedbackScrapeTypes(ctx, t) })
	t.Run("condition rules", func(t *testing.T) { s.testConditionRules(ctx, t) })
	t.Run("drift", func(t *testing.T) { s.testDrift(ctx, t) })
	t.Run("serverSideApply ignoreFields", func(t *testing.T) { s.testIgnoreFields(ctx, t) })
	t.Run("completed manifest is frozen", func(t *testing.T) { s.testFrozenManifest(ctx, t) })
	t.Run("take-over rules", func(t *testing.T) { s.testTakeOver(ctx, t) })
	t.Run("report-only works and kubectl ocm work diff", func(t *testing.T) { s.testReportDiff(ctx, t) })
	t.Run("executor", func(t *testing.T) { s.testExecutor(ctx, t) })
	t.Run("executor RBAC escalation", func(t *testing.T) { s.testExecutorEscalation(ctx, t) })
	t.Run("eviction of records of works gone from the hub", func(t *testing.T) { s.testEviction(ctx, t) })
}

func (s *suite) testSeed(ctx context.Context, t *testing.T) {
	work := newWork(t, "mw-01", seedPod)
	kit.MustCreate(ctx, t, s.hubC, work)
	s.writeHubSecret(ctx, t, "agent1")

	w := s.waitWorkCondition(ctx, t, "mw-01", workv1.WorkApplied, metav1.ConditionTrue)
	if c := w.Status.Conditions; !hasReason(c, workv1.WorkAppliedReasonComplete, "Apply manifest work complete") {
		t.Errorf("Applied condition = %+v", c)
	}
	w = s.waitWorkCondition(ctx, t, "mw-01", workv1.WorkAvailable, metav1.ConditionTrue)
	if !controllerutil.ContainsFinalizer(w, workv1.ManifestWorkFinalizer) {
		t.Errorf("finalizers = %v", w.Finalizers)
	}
	wantMeta := workv1.ManifestResourceMeta{Ordinal: 0, Version: "v1", Kind: "Pod", Resource: "pods", Name: "hello", Namespace: "default"}
	if len(w.Status.ResourceStatus.Manifests) != 1 || w.Status.ResourceStatus.Manifests[0].ResourceMeta != wantMeta {
		t.Fatalf("manifests = %+v, want meta %+v", w.Status.ResourceStatus.Manifests, wantMeta)
	}
	if c := manifestCondition(w, 0, workv1.ManifestApplied); c == nil || c.Reason != workv1.ManifestAppliedReasonComplete {
		t.Errorf("manifest Applied = %+v", c)
	}
	if c := manifestCondition(w, 0, workv1.ManifestAvailable); c == nil || c.Reason != workv1.ManifestAvailableReasonAvailable {
		t.Errorf("manifest Available = %+v", c)
	}

	pod := &corev1.Pod{}
	if err := s.spokeC.Get(ctx, types.NamespacedName{Namespace: "default", Name: "hello"}, pod); err != nil {
		t.Fatal(err)
	}
	amw, err := s.appliedWork(ctx, "mw-01")
	if err != nil {
		t.Fatal(err)
	}
	if amw.Spec.HubHash != s.hubHash || amw.Spec.ManifestWorkName != "mw-01" || amw.Spec.AgentID != "agent1" {
		t.Errorf("AppliedManifestWork spec = %+v", amw.Spec)
	}
	if !controllerutil.ContainsFinalizer(amw, workv1.AppliedManifestWorkFinalizer) {
		t.Errorf("AppliedManifestWork finalizers = %v", amw.Finalizers)
	}
	if !ownedBy(pod, amw.UID) {
		t.Errorf("Pod owners = %+v, want the AppliedManifestWork %s", pod.OwnerReferences, amw.UID)
	}
	framework.Eventually(ctx, t, pollTimeout, "the Pod in appliedResources", func(ctx context.Context) (bool, error) {
		amw, err := s.appliedWork(ctx, "mw-01")
		if err != nil {
			return false, err
		}
		rs := amw.Status.AppliedResources
		return len(rs) == 1 && rs[0].Resource == "pods" && rs[0].Version == "v1" && rs[0].Name == "hello" &&
			rs[0].Namespace == "default" && rs[0].UID == string(pod.UID), nil
	})
}

func (s *suite) testStrategies(ctx context.Context, t *testing.T) {
	const ns = "strategies"
	ro := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ro"}, Data: map[string]string{"a": "spoke"}}
	kit.MustCreate(ctx, t, s.spokeC, ro)
	nsManifest := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + ns + "\n"
	work := newWork(t, "strategies",
		configMap(ns, "upd", "1"), configMap(ns, "co", "1"), configMap(ns, "ssa", "1"), configMap("default", "ro", "hub"), nsManifest)
	strategy := func(ns, name string, st workv1.UpdateStrategy) workv1.ManifestConfigOption {
		return workv1.ManifestConfigOption{
			ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: ns, Name: name},
			UpdateStrategy:     &st,
		}
	}
	work.Spec.ManifestConfigs = []workv1.ManifestConfigOption{
		strategy(ns, "co", workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeCreateOnly}),
		strategy(ns, "ssa", workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeServerSideApply}),
		strategy("default", "ro", workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeReadOnly}),
	}
	kit.MustCreate(ctx, t, s.hubC, work)
	s.waitWorkCondition(ctx, t, "strategies", workv1.WorkApplied, metav1.ConditionTrue)
	amw, err := s.appliedWork(ctx, "strategies")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"upd", "co", "ssa"} {
		cm, err := s.configMap(ctx, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if cm.Data["a"] != "1" || !ownedBy(cm, amw.UID) {
			t.Errorf("ConfigMap %s: data %v owners %v", name, cm.Data, cm.OwnerReferences)
		}
	}
	ssa, _ := s.configMap(ctx, ns, "ssa")
	if !hasManager(ssa, workv1.DefaultFieldManager, metav1.ManagedFieldsOperationApply) {
		t.Errorf("ssa managed fields = %+v, want an Apply entry of %s", ssa.ManagedFields, workv1.DefaultFieldManager)
	}
	roNow, _ := s.configMap(ctx, "default", "ro")
	if roNow.Data["a"] != "spoke" || ownedBy(roNow, amw.UID) {
		t.Errorf("ReadOnly ConfigMap was written: data %v owners %v", roNow.Data, roNow.OwnerReferences)
	}

	// Someone on the managed cluster labels the Update object; then the hub
	// changes every manifest.
	upd, _ := s.configMap(ctx, ns, "upd")
	upd.Labels = map[string]string{"spoke": "keep"}
	if err := s.spokeC.Update(ctx, upd); err != nil {
		t.Fatal(err)
	}
	s.updateWork(ctx, t, "strategies", func(w *workv1.ManifestWork) {
		w.Spec.Workload.Manifests = toManifests(t,
			configMap(ns, "upd", "2"), configMap(ns, "co", "2"), configMap(ns, "ssa", "2"), configMap("default", "ro", "hub2"), nsManifest)
	})
	s.waitWorkCondition(ctx, t, "strategies", workv1.WorkApplied, metav1.ConditionTrue)
	framework.Eventually(ctx, t, pollTimeout, "the Update and ServerSideApply ConfigMaps to change", func(ctx context.Context) (bool, error) {
		upd, err := s.configMap(ctx, ns, "upd")
		if err != nil {
			return false, err
		}
		ssa, err := s.configMap(ctx, ns, "ssa")
		return upd.Data["a"] == "2" && ssa.Data["a"] == "2", err
	})
	upd, _ = s.configMap(ctx, ns, "upd")
	if upd.Labels["spoke"] != "keep" {
		t.Errorf("Update dropped a label set on the managed cluster: %v", upd.Labels)
	}
	co, _ := s.configMap(ctx, ns, "co")
	if co.Data["a"] != "1" {
		t.Errorf("CreateOnly ConfigMap was updated: %v", co.Data)
	}
	roNow, _ = s.configMap(ctx, "default", "ro")
	if roNow.Data["a"] != "spoke" {
		t.Errorf("ReadOnly ConfigMap was updated: %v", roNow.Data)
	}
	w := s.waitWorkCondition(ctx, t, "strategies", workv1.WorkAvailable, metav1.ConditionTrue)
	if len(w.Status.ResourceStatus.Manifests) != 5 {
		t.Errorf("manifests = %+v", w.Status.ResourceStatus.Manifests)
	}
}

func (s *suite) testCRD(ctx context.Context, t *testing.T) {
	// The custom resource comes first: the agent applies the CRD before it.
	widget := "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: default\nspec:\n  size: 3\n"
	crd := `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`
	kit.MustCreate(ctx, t, s.hubC, newWork(t, "crd", widget, crd))
	w := s.waitWorkCondition(ctx, t, "crd", workv1.WorkApplied, metav1.ConditionTrue)
	if c := manifestCondition(w, 0, workv1.ManifestApplied); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("custom resource Applied = %+v", c)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"})
	if err := s.spoke.Client().Get(ctx, types.NamespacedName{Namespace: "default", Name: "w1"}, u); err != nil {
		t.Fatalf("get Widget: %v", err)
	}
}

func (s *suite) testRemoveManifest(ctx context.Context, t *testing.T) {
	kit.MustCreate(ctx, t, s.hubC, newWork(t, "remove", configMap("default", "keep-a", "1"), configMap("default", "drop-b", "1")))
	s.waitWorkCondition(ctx, t, "remove", workv1.WorkApplied, metav1.ConditionTrue)
	if _, err := s.configMap(ctx, "default", "drop-b"); err != nil {
		t.Fatal(err)
	}
	s.updateWork(ctx, t, "remove", func(w *workv1.ManifestWork) { w.Spec.Workload.Manifests = w.Spec.Workload.Manifests[:1] })
	waitGone(ctx, t, s.spokeC, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "drop-b"}})
	framework.Eventually(ctx, t, pollTimeout, "appliedResources without drop-b", func(ctx context.Context) (bool, error) {
		amw, err := s.appliedWork(ctx, "remove")
		if err != nil {
			return false, err
		}
		return len(amw.Status.AppliedResources) == 1 && amw.Status.AppliedResources[0].Name == "keep-a", nil
	})
	if _, err := s.configMap(ctx, "default", "keep-a"); err != nil {
		t.Errorf("kept ConfigMap: %v", err)
	}
}

func (s *suite) testDeleteOptions(ctx context.Context, t *testing.T) {
	t.Run("Foreground waits for the objects", func(t *testing.T) {
		// The ConfigMap carries a finalizer, so its deletion waits for us.
		held := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  namespace: default\n  finalizers: [example.com/hold]\ndata:\n  a: \"1\"\n"
		kit.MustCreate(ctx, t, s.hubC, newWork(t, "foreground", held, configMap("default", "fg", "1")))
		s.waitWorkCondition(ctx, t, "foreground", workv1.WorkApplied, metav1.ConditionTrue)
		w, _ := s.getWork(ctx, "foreground")
		if err := s.hubC.Delete(ctx, w); err != nil {
			t.Fatal(err)
		}
		waitGone(ctx, t, s.spokeC, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "fg"}})
		framework.Eventually(ctx, t, pollTimeout, "Deleting=True while the held ConfigMap is terminating", func(ctx context.Context) (bool, error) {
			w, err := s.getWork(ctx, "foreground")
			if err != nil {
				return false, err
			}
			held, err := s.configMap(ctx, "default", "held")
			return hasCondition(w.Status.Conditions, workv1.WorkDeleting, metav1.ConditionTrue) && held.DeletionTimestamp != nil, err
		})
		held2, _ := s.configMap(ctx, "default", "held")
		held2.Finalizers = nil
		if err := s.spokeC.Update(ctx, held2); err != nil {
			t.Fatal(err)
		}
		waitGone(ctx, t, s.hubC, w)
		waitGone(ctx, t, s.spokeC, &workv1.AppliedManifestWork{ObjectMeta: metav1.ObjectMeta{Name: workv1.AppliedManifestWorkName(s.hubHash, "foreground")}})
	})
	t.Run("Orphan keeps everything", func(t *testing.T) {
		work := newWork(t, "orphan", configMap("default", "orph", "1"))
		work.Spec.DeleteOption = &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan}
		kit.MustCreate(ctx, t, s.hubC, work)
		s.waitWorkCondition(ctx, t, "orphan", workv1.WorkApplied, metav1.ConditionTrue)
		amw, err := s.appliedWork(ctx, "orphan")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.hubC.Delete(ctx, work); err != nil {
			t.Fatal(err)
		}
		waitGone(ctx, t, s.hubC, work)
		waitGone(ctx, t, s.spokeC, amw)
		cm, err := s.configMap(ctx, "default", "orph")
		if err != nil || cm.DeletionTimestamp != nil || ownedBy(cm, amw.UID) {
			t.Errorf("orphaned ConfigMap: %v, %+v", err, cm.ObjectMeta)
		}
	})
	t.Run("SelectivelyOrphan keeps the listed objects", func(t *testing.T) {
		work := newWork(t, "selective", configMap("default", "sel-keep", "1"), configMap("default", "sel-drop", "1"))
		work.Spec.DeleteOption = &workv1.DeleteOption{
			PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
			SelectivelyOrphan: &workv1.SelectivelyOrphan{OrphaningRules: []workv1.OrphaningRule{
				{Resource: "configmaps", Namespace: "default", Name: "sel-keep"},
			}},
		}
		kit.MustCreate(ctx, t, s.hubC, work)
		s.waitWorkCondition(ctx, t, "selective", workv1.WorkApplied, metav1.ConditionTrue)
		if err := s.hubC.Delete(ctx, work); err != nil {
			t.Fatal(err)
		}
		waitGone(ctx, t, s.hubC, work)
		waitGone(ctx, t, s.spokeC, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "sel-drop"}})
		if cm, err := s.configMap(ctx, "default", "sel-keep"); err != nil || cm.DeletionTimestamp != nil {
			t.Errorf("selectively orphaned ConfigMap: %v", err)
		}
	})
}

func (s *suite) testBadManifests(ctx context.Context, t *testing.T) {
	unknown := "apiVersion: nothing.example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n  namespace: default\n"
	invalid := configMap("default", "Not_A_Valid_Name", "1")
	kit.MustCreate(ctx, t, s.hubC, newWork(t, "bad", configMap("default", "good", "1"), unknown, invalid))
	kit.MustCreate(ctx, t, s.hubC, newWork(t, "neighbor", configMap("default", "neighbor", "1")))

	w := s.waitWorkCondition(ctx, t, "bad", workv1.WorkApplied, metav1.ConditionFalse)
	if !hasReason(w.Status.Conditions, workv1.WorkAppliedReasonFailed, "") {
		t.Errorf("work conditions = %+v", w.Status.Conditions)
	}
	framework.Eventually(ctx, t, pollTimeout, "per-manifest conditions of the bad work", func(ctx context.Context) (bool, error) {
		w, err := s.getWork(ctx, "bad")
		if err != nil {
			return false, err
		}
		good := manifestCondition(w, 0, workv1.ManifestApplied)
		unk := manifestCondition(w, 1, workv1.ManifestApplied)
		inv := manifestCondition(w, 2, workv1.ManifestApplied)
		return good != nil && good.Status == metav1.ConditionTrue &&
			unk != nil && unk.Reason == workv1.ManifestAppliedReasonFailed && strings.Contains(unk.Message, "no matches for kind") &&
			inv != nil && inv.Reason == workv1.ManifestAppliedReasonFailed && strings.Contains(inv.Message, "Invalid value"), nil
	})
	w, _ = s.getWork(ctx, "bad")
	if c := manifestCondition(w, 1, workv1.ManifestAvailable); c == nil || c.Status != metav1.ConditionUnknown {
		t.Errorf("unknown kind Available = %+v", c)
	}
	if c := manifestCondition(w, 2, workv1.ManifestAvailable); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("invalid object Available = %+v", c)
	}
	t.Logf("unknown kind: %s", manifestCondition(w, 1, workv1.ManifestApplied).Message)
	t.Logf("invalid object: %s", manifestCondition(w, 2, workv1.ManifestApplied).Message)
	if _, err := s.configMap(ctx, "default", "good"); err != nil {
		t.Errorf("good manifest of the bad work: %v", err)
	}
	s.waitWorkCondition(ctx, t, "neighbor", workv1.WorkApplied, metav1.ConditionTrue)
}

func (s *suite) testRestart(ctx context.Context, t *testing.T) {
	kit.MustCreate(ctx, t, s.hubC, newWork(t, "r-keep", configMap("default", "r-keep", "1")))
	kit.MustCreate(ctx, t, s.hubC, newWork(t, "r-del", configMap("default", "r-del", "1")))
	s.waitWorkCondition(ctx, t, "r-keep", workv1.WorkApplied, metav1.ConditionTrue)
	s.waitWorkCondition(ctx, t, "r-del", workv1.WorkApplied, metav1.ConditionTrue)

	s.stop()
	kit.MustCreate(ctx, t, s.hubC, newWork(t, "r-new", configMap("default", "r-new", "1")))
	w, _ := s.getWork(ctx, "r-keep")
	w.Spec.Workload.Manifests = toManifests(t, configMap("default", "r-keep", "2"))
	if err := s.hubC.Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	del, _ := s.getWork(ctx, "r-del")
	if err := s.hubC.Delete(ctx, del); err != nil {
		t.Fatal(err)
	}
	s.startAgent()

	s.waitWorkCondition(ctx, t, "r-new", workv1.WorkApplied, metav1.ConditionTrue)
	s.waitWorkCondition(ctx, t, "r-keep", workv1.WorkApplied, metav1.ConditionTrue)
	if cm, err := s.configMap(ctx, "default", "r-keep"); err != nil || cm.Data["a"] != "2" {
		t.Errorf("r-keep after restart: %v %v", err, cm.Data)
	}
	waitGone(ctx, t, s.hubC, del)
	waitGone(ctx, t, s.spokeC, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "r-del"}})
	// The earlier works are untouched by the restart.
	s.waitWorkCondition(ctx, t, "mw-01", workv1.WorkApplied, metav1.ConditionTrue)
}

func (s *suite) testRotation(ctx context.Context, t *testing.T) {
	// A new certificate (here also a new agent ID) replaces the Secret.
	s.writeHubSecret(ctx, t, "agent2")
	framework.Eventually(ctx, t, pollTimeout, "the AppliedManifestWork to carry the new agent ID", func(ctx context.Context) (bool, error) {
		amw, err := s.appliedWork(ctx, "mw-01")
		return err == nil && amw.Spec.AgentID == "agent2", err
	})
	kit.MustCreate(ctx, t, s.hubC, newWork(t, "after-rotation", configMap("default", "after-rotation", "1")))
	s.waitWorkCondition(ctx, t, "after-rotation", workv1.WorkApplied, metav1.ConditionTrue)
}

func (s *suite) testIsolation(ctx context.Context, t *testing.T) {
	c, err := client.New(s.agentConfig(t, clusterName, "agent1"), client.Options{Scheme: s.hubC.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, &workv1.ManifestWorkList{}, client.InNamespace(clusterName)); err != nil {
		t.Errorf("list own ManifestWorks: %v", err)
	}
	if err := c.List(ctx, &workv1.ManifestWorkList{}, client.InNamespace(otherName)); !apierrors.IsForbidden(err) {
		t.Errorf("list %s ManifestWorks as %s: err = %v, want Forbidden", otherName, clusterName, err)
	}
	other := newWork(t, "intruder", configMap("default", "x", "1"))
	other.Namespace = otherName
	if err := c.Create(ctx, other); !apierrors.IsForbidden(err) {
		t.Errorf("create in %s as %s: err = %v, want Forbidden", otherName, clusterName, err)
	}
	if err := c.Create(ctx, newWork(t, "self-made", configMap("default", "x", "1"))); !apierrors.IsForbidden(err) {
		t.Errorf("create in own namespace: err = %v, want Forbidden (agents only update works)", err)
	}
}

// hasReason reports whether some condition has reason (and message, if set).
func hasReason(conds []metav1.Condition, reason, message string) bool {
	for _, c := range conds {
		if c.Reason == reason && (message == "" || c.Message == message) {
			return true
		}
	}
	return false
}

// hasCondition reports whether condition typ has status.
func hasCondition(conds []metav1.Condition, typ string, status metav1.ConditionStatus) bool {
	for _, c := range conds {
		if c.Type == typ && c.Status == status {
			return true
		}
	}
	return false
}

// hasManager reports whether obj has a managed-fields entry of manager with op.
func hasManager(obj metav1.Object, manager string, op metav1.ManagedFieldsOperationType) bool {
	for _, f := range obj.GetManagedFields() {
		if f.Manager == manager && f.Operation == op {
			return true
		}
	}
	return false
}
