package work

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/workreport"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// Executor ServiceAccount of the bad-input table: it may write ConfigMaps in
// default and nothing else.
const limitedSA = "limited"

// badInput is one row of the bad-input table: a work of three manifests,
// two good ConfigMaps around the bad manifest.
type badInput struct {
	name string
	// bad is the bad manifest (ordinal 1 of the work).
	bad string
	// mutate, when set, changes the work before it is created.
	mutate func(w *workv1.ManifestWork)
	// rejected, when set, holds what the hub's rejection of the work names;
	// nothing is stored.
	rejected []string
	// condition is the bad manifest's condition that names the cause, with
	// its reason and the parts of its message.
	condition, reason string
	parts             []string
	// applied is the work's Applied status when the cause is found.
	applied metav1.ConditionStatus
	// check, when set, checks more of the work's status.
	check func(t *testing.T, w *workv1.ManifestWork)
}

// badConfigMap is the ConfigMap manifest the rows with a bad rule configure.
var badConfigMap = configMap("default", "badinput-rules", "1")

// ruleOn sets the manifest configuration of the ConfigMap badConfigMap.
func ruleOn(set func(o *workv1.ManifestConfigOption)) func(w *workv1.ManifestWork) {
	return func(w *workv1.ManifestWork) {
		o := workv1.ManifestConfigOption{ResourceIdentifier: workv1.ResourceIdentifier{
			Resource: "configmaps", Namespace: "default", Name: "badinput-rules"}}
		set(&o)
		w.Spec.ManifestConfigs = append(w.Spec.ManifestConfigs, o)
	}
}

// badInputs are the rows: every bad manifest the agent meets fails alone
// and names its cause; what the hub can tell is bad is rejected there.
var badInputs = []badInput{{
	name:      "unknown kind",
	bad:       "apiVersion: v1\nkind: Gadget\nmetadata:\n  name: g\n  namespace: default\n",
	condition: workv1.ManifestApplied, reason: workv1.ManifestAppliedReasonFailed, applied: metav1.ConditionFalse,
	parts: []string{"no matches for kind", "Gadget"},
}, {
	name:      "unknown apiVersion",
	bad:       "apiVersion: nothing.example.com/v1\nkind: ConfigMap\nmetadata:\n  name: g\n  namespace: default\n",
	condition: workv1.ManifestApplied, reason: workv1.ManifestAppliedReasonFailed, applied: metav1.ConditionFalse,
	parts: []string{"nothing.example.com/v1"},
}, {
	name: "schema-invalid object",
	bad: "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: default\nspec:\n  replicas: three\n" +
		"  selector:\n    matchLabels: {app: d}\n  template:\n    metadata:\n      labels: {app: d}\n" +
		"    spec:\n      containers:\n      - name: c\n        image: busybox\n",
	condition: workv1.ManifestApplied, reason: workv1.ManifestAppliedReasonFailed, applied: metav1.ConditionFalse,
	parts: []string{"replicas"},
}, {
	name:      "namespace that does not exist",
	bad:       configMap("no-such-namespace", "cm", "1"),
	condition: workv1.ManifestApplied, reason: workv1.ManifestAppliedReasonFailed, applied: metav1.ConditionFalse,
	parts: []string{"no-such-namespace", "not found"},
}, {
	// As kubectl apply does, the namespace of a cluster-scoped object is
	// ignored: the object is applied and reported without it.
	name:      "cluster-scoped object with a namespace",
	bad:       "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: badinput-scoped\n  namespace: default\nrules: []\n",
	condition: workv1.ManifestApplied, reason: workv1.ManifestAppliedReasonComplete, applied: metav1.ConditionTrue,
	check: func(t *testing.T, w *workv1.ManifestWork) {
		if m := w.Status.ResourceStatus.Manifests[1].ResourceMeta; m.Resource != "clusterroles" || m.Namespace != "" {
			t.Errorf("resource meta = %+v, want clusterroles without a namespace", m)
		}
	},
}, {
	name: "object the executor may not create",
	bad:  "apiVersion: v1\nkind: Secret\nmetadata:\n  name: badinput-secret\n  namespace: default\n",
	mutate: func(w *workv1.ManifestWork) {
		w.Spec.Executor = &workv1.ManifestWorkExecutor{Subject: workv1.ManifestWorkExecutorSubject{
			Type:           workv1.ExecutorSubjectTypeServiceAccount,
			ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: "default", Name: limitedSA},
		}}
	},
	condition: workv1.ManifestApplied, reason: workv1.ManifestAppliedReasonFailed, applied: metav1.ConditionFalse,
	parts: []string{"default/" + limitedSA, "create", "secrets", `"badinput-secret"`},
}, {
	name: "oversized work",
	bad: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  namespace: default\ndata:\n  a: " +
		strings.Repeat("x", workv1.DefaultManifestsSizeLimit+1) + "\n",
	rejected: []string{"512000-byte (500 KiB) size limit", "split the manifests across several ManifestWorks"},
}, {
	// The hub's policy bounds only the data of the manifests (see
	// config/hub/35-work-admission.yaml); the CRD checks each manifest's
	// metadata as the API server would, annotations included.
	name: "oversized annotation",
	bad: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  namespace: default\n  annotations:\n    a: " +
		strings.Repeat("x", workv1.DefaultManifestsSizeLimit+1) + "\n",
	rejected: []string{"spec.workload.manifests[1].metadata.annotations: Too long"},
}, {
	name: "unknown take-over rule",
	bad:  badConfigMap,
	mutate: func(w *workv1.ManifestWork) {
		w.Annotations = map[string]string{workv1.TakeOverAnnotation: "Sometimes"}
	},
	rejected: []string{"work.kubectl-ocm.io/take-over=Sometimes", "must be Always (the default), IfNoDiff or Never"},
}, {
	name: "invalid CEL in conditionRules",
	bad:  badConfigMap,
	mutate: ruleOn(func(o *workv1.ManifestConfigOption) {
		o.ConditionRules = []workv1.ConditionRule{{Condition: "Ready", Type: workv1.CelConditionExpressionsType,
			CelExpressions: []string{"object.data.("}}}
	}),
	condition: "Ready", reason: workv1.ConditionRuleReasonInvalid, applied: metav1.ConditionTrue,
	parts: []string{"invalid expression", "object.data.("},
}, {
	name: "invalid JSONPath in feedback",
	bad:  badConfigMap,
	mutate: ruleOn(func(o *workv1.ManifestConfigOption) {
		o.FeedbackRules = []workv1.FeedbackRule{{Type: workv1.JSONPathsType,
			JsonPaths: []workv1.JsonPath{{Name: "broken", Path: ".data[?(@"}}}}
	}),
	condition: workv1.ManifestStatusFeedbackSynced, reason: workv1.StatusFeedbackSyncedReasonFailed, applied: metav1.ConditionTrue,
	parts: []string{"broken", "parse path", ".data[?(@"},
}}

// testBadInput runs the bad-input table: one bad manifest between two good
// ConfigMaps. The good ones apply, the bad one's condition names the cause
// (as `kubectl ocm work status` shows it), and a good work created
// afterwards is applied.
func (s *suite) testBadInput(ctx context.Context, t *testing.T) {
	s.limitedExecutor(ctx, t)
	for i, tc := range badInputs {
		t.Run(tc.name, func(t *testing.T) {
			name := "badinput-" + strconv.Itoa(i)
			first, last := name+"-first", name+"-last"
			work := newWork(t, name, configMap("default", first, "1"), tc.bad, configMap("default", last, "1"))
			if tc.mutate != nil {
				tc.mutate(work)
			}
			if tc.rejected != nil {
				s.expectRejected(ctx, t, work, tc.rejected)
				return
			}
			kit.MustCreate(ctx, t, s.hubC, work)
			s.waitWorkCondition(ctx, t, name, workv1.WorkApplied, tc.applied)
			c := s.waitManifestCondition(ctx, t, name, 1, tc.condition, tc.reason)
			for _, part := range tc.parts {
				if !strings.Contains(c.Message, part) {
					t.Errorf("%s message %q lacks %q", tc.condition, c.Message, part)
				}
			}
			t.Logf("%s: %s", tc.condition, c.Message)
			s.checkStatusReport(ctx, t, name, tc)
			for _, cm := range []string{first, last} {
				if _, err := s.configMap(ctx, "default", cm); err != nil {
					t.Errorf("good manifest %s: %v", cm, err)
				}
			}

			// The agent serves the next work.
			next := newWork(t, name+"-next", configMap("default", name+"-next", "1"))
			kit.MustCreate(ctx, t, s.hubC, next)
			s.waitWorkCondition(ctx, t, next.Name, workv1.WorkApplied, metav1.ConditionTrue)

			// A work with a bad manifest is deleted like any other.
			for _, w := range []*workv1.ManifestWork{work, next} {
				if err := s.hubC.Delete(ctx, w); err != nil {
					t.Fatal(err)
				}
				waitGone(ctx, t, s.hubC, w)
			}
			waitGone(ctx, t, s.spokeC, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: first}})
		})
	}
}

// expectRejected checks that the hub refuses work with a message holding
// parts, and stores nothing.
func (s *suite) expectRejected(ctx context.Context, t *testing.T, work *workv1.ManifestWork, parts []string) {
	t.Helper()
	err := s.hubC.Create(ctx, work)
	if err == nil {
		t.Fatal("the hub accepted the work")
	}
	for _, part := range parts {
		assert.ErrorContains(t, err, part)
	}
	t.Logf("rejected: %v", err)
	if _, err := s.getWork(ctx, work.Name); !apierrors.IsNotFound(err) {
		t.Errorf("read after the rejection: %v, want not found", err)
	}
}

// waitManifestCondition waits until manifest ordinal of work name has
// condition typ with reason at the work's generation.
func (s *suite) waitManifestCondition(ctx context.Context, t *testing.T, name string, ordinal int, typ, reason string) *metav1.Condition {
	t.Helper()
	var c *metav1.Condition
	framework.Eventually(ctx, t, pollTimeout, "manifest "+name+" "+typ+" "+reason, func(ctx context.Context) (bool, error) {
		w, err := s.getWork(ctx, name)
		if err != nil {
			return false, err
		}
		c = manifestCondition(w, ordinal, typ)
		return c != nil && c.Reason == reason && c.ObservedGeneration == w.Generation, nil
	})
	return c
}

// checkStatusReport checks what `kubectl ocm work status` reports of work
// name: the good manifests applied, and the bad one's cause in its message.
func (s *suite) checkStatusReport(ctx context.Context, t *testing.T, name string, tc badInput) {
	t.Helper()
	w, err := s.getWork(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	report := workreport.New(w)
	if len(report.Manifests) != 3 {
		t.Fatalf("report manifests = %+v", report.Manifests)
	}
	for _, i := range []int{0, 2} {
		if m := report.Manifests[i]; m.Applied != string(metav1.ConditionTrue) || m.Message != "" {
			t.Errorf("report of good manifest %d = %+v", i, m)
		}
	}
	bad := report.Manifests[1]
	for _, part := range tc.parts {
		if !strings.Contains(bad.Message, part) {
			t.Errorf("report message %q lacks %q", bad.Message, part)
		}
	}
	if tc.condition == workv1.ManifestApplied && bad.Applied != string(tc.applied) {
		t.Errorf("report Applied = %s, want %s", bad.Applied, tc.applied)
	}
	if tc.check != nil {
		tc.check(t, w)
	}
}

// limitedExecutor creates the executor ServiceAccount default/limited with
// the right to write and delete ConfigMaps in default.
func (s *suite) limitedExecutor(ctx context.Context, t *testing.T) {
	t.Helper()
	kit.MustCreate(ctx, t, s.spokeC, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: limitedSA}})
	meta := metav1.ObjectMeta{Namespace: "default", Name: limitedSA}
	kit.MustCreate(ctx, t, s.spokeC, &rbacv1.Role{ObjectMeta: meta, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"configmaps"},
		Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}})
	kit.MustCreate(ctx, t, s.spokeC, &rbacv1.RoleBinding{ObjectMeta: meta,
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: limitedSA},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: limitedSA}}})
	t.Cleanup(func() {
		for _, o := range []client.Object{&rbacv1.RoleBinding{ObjectMeta: meta}, &rbacv1.Role{ObjectMeta: meta}} {
			_ = s.spokeC.Delete(context.Background(), o)
		}
	})
}
