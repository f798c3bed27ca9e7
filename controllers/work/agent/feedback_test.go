package agent

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/stretchr/testify/assert"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// object decodes a YAML object for the tests.
func object(t testing.TB, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	data, err := yaml.YAMLToJSON([]byte(strings.TrimSpace(y)))
	if err != nil {
		t.Fatal(err)
	}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

func intValue(n int64) workv1.FieldValue { return workv1.FieldValue{Type: workv1.Integer, Integer: &n} }
func strValue(s string) workv1.FieldValue {
	return workv1.FieldValue{Type: workv1.String, String: &s}
}
func boolValue(b bool) workv1.FieldValue { return workv1.FieldValue{Type: workv1.Boolean, Boolean: &b} }
func rawValueOf(s string) workv1.FieldValue {
	return workv1.FieldValue{Type: workv1.JsonRaw, JsonRaw: &s}
}

const (
	testDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: default, labels: {app: d}}
spec: {replicas: 3}
status: {replicas: 3, readyReplicas: 2, availableReplicas: 1}
`
	testDaemonSet = `
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds, namespace: default}
status: {numberReady: 4, desiredNumberScheduled: 5, numberAvailable: 3}
`
	testJob = `
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: default}
status:
  succeeded: 1
  conditions:
  - {type: SuccessCriteriaMet, status: "True"}
  - {type: Complete, status: "True"}
`
	testPod = `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
status:
  phase: Running
  conditions:
  - {type: Initialized, status: "True"}
  - {type: Ready, status: "False"}
`
)

func TestStatusFeedback(t *testing.T) {
	wellKnown := []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}}
	paths := func(ps ...workv1.JsonPath) []workv1.FeedbackRule {
		return []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: ps}}
	}
	long := `
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: default}
data: {big: "` + strings.Repeat("x", 1100) + `", small: "y"}
`
	tests := []struct {
		name    string
		obj     string
		rules   []workv1.FeedbackRule
		want    []workv1.FeedbackValue
		wantErr string
	}{
		{name: "Deployment well-known", obj: testDeployment, rules: wellKnown, want: []workv1.FeedbackValue{
			{Name: "ReadyReplicas", Value: intValue(2)}, {Name: "Replicas", Value: intValue(3)}, {Name: "AvailableReplicas", Value: intValue(1)},
		}},
		{name: "DaemonSet well-known", obj: testDaemonSet, rules: wellKnown, want: []workv1.FeedbackValue{
			{Name: "NumberReady", Value: intValue(4)}, {Name: "DesiredNumberScheduled", Value: intValue(5)}, {Name: "NumberAvailable", Value: intValue(3)},
		}},
		{name: "Job well-known", obj: testJob, rules: wellKnown, want: []workv1.FeedbackValue{
			{Name: "JobComplete", Value: strValue("True")}, {Name: "JobSucceeded", Value: intValue(1)},
		}},
		{name: "Pod well-known", obj: testPod, rules: wellKnown, want: []workv1.FeedbackValue{
			{Name: "PodReady", Value: strValue("False")}, {Name: "PodPhase", Value: strValue("Running")},
		}},
		{name: "well-known of another kind", obj: long, rules: wellKnown, wantErr: "no well-known status for /v1, Kind=ConfigMap"},
		{name: "Deployment without status reports nothing", obj: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n", rules: wellKnown},
		{name: "JSONPaths scalars", obj: testDeployment, rules: paths(
			workv1.JsonPath{Name: "replicas", Path: ".spec.replicas"},
			workv1.JsonPath{Name: "name", Path: ".metadata.name"},
			workv1.JsonPath{Name: "ready", Path: `.status.readyReplicas`, Version: "v1"},
		), want: []workv1.FeedbackValue{
			{Name: "replicas", Value: intValue(3)}, {Name: "name", Value: strValue("d")}, {Name: "ready", Value: intValue(2)},
		}},
		{name: "JSONPaths boolean", obj: "apiVersion: v1\nkind: X\nmetadata: {name: x}\nspec: {paused: true}\n",
			rules: paths(workv1.JsonPath{Name: "paused", Path: ".spec.paused"}),
			want:  []workv1.FeedbackValue{{Name: "paused", Value: boolValue(true)}}},
		{name: "JSONPaths missing key is skipped", obj: testDeployment, rules: paths(
			workv1.JsonPath{Name: "missing", Path: ".status.nothing.here"},
			workv1.JsonPath{Name: "ready", Path: ".status.readyReplicas"},
		), want: []workv1.FeedbackValue{{Name: "ready", Value: intValue(2)}}},
		{name: "JSONPaths version mismatch", obj: testDeployment, rules: paths(
			workv1.JsonPath{Name: "ready", Path: ".status.readyReplicas", Version: "v1beta1"},
		), wantErr: "version v1beta1 does not match"},
		{name: "JSONPaths object becomes JsonRaw", obj: testDeployment, rules: paths(
			workv1.JsonPath{Name: "labels", Path: ".metadata.labels"},
		), want: []workv1.FeedbackValue{{Name: "labels", Value: rawValueOf(`{"app":"d"}`)}}},
		{name: "JSONPaths list becomes JsonRaw", obj: testPod, rules: paths(
			workv1.JsonPath{Name: "types", Path: ".status.conditions[*].type"},
		), want: []workv1.FeedbackValue{{Name: "types", Value: rawValueOf(`["Initialized","Ready"]`)}}},
		{name: "JsonRaw over the limit fails alone", obj: long, rules: paths(
			workv1.JsonPath{Name: "data", Path: ".data"},
			workv1.JsonPath{Name: "small", Path: ".data.small"},
		), want: []workv1.FeedbackValue{{Name: "small", Value: strValue("y")}}, wantErr: "more than the limit of 1024"},
		{name: "bad path", obj: testPod, rules: paths(workv1.JsonPath{Name: "bad", Path: ".status[?("}), wantErr: "bad: parse path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := statusFeedback(object(t, tt.obj), tt.rules, workv1.DefaultMaxJSONRawLength)
			if tt.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tt.wantErr)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("values = %s, want %s", toYAML(got), toYAML(tt.want))
			}
			if toYAML(got) != toYAML(tt.want) {
				t.Errorf("values = %s, want %s", toYAML(got), toYAML(tt.want))
			}
		})
	}
}

func TestSetFeedback(t *testing.T) {
	deploy := object(t, testDeployment)
	tests := []struct {
		name       string
		obj        *unstructured.Unstructured
		rules      []workv1.FeedbackRule
		wantStatus metav1.ConditionStatus
		wantReason string
		wantValues int
	}{
		{name: "no rules, no condition", obj: deploy},
		{name: "synced", obj: deploy, rules: []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
			wantStatus: metav1.ConditionTrue, wantReason: workv1.StatusFeedbackSyncedReasonSynced, wantValues: 3},
		{name: "object missing", rules: []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}},
			wantStatus: metav1.ConditionFalse, wantReason: workv1.StatusFeedbackSyncedReasonNone},
		{name: "nothing found", obj: deploy, rules: []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: []workv1.JsonPath{{Name: "x", Path: ".status.x"}}}},
			wantStatus: metav1.ConditionFalse, wantReason: workv1.StatusFeedbackSyncedReasonNone},
		{name: "failed", obj: deploy, rules: []workv1.FeedbackRule{{Type: workv1.JSONPathsType, JsonPaths: []workv1.JsonPath{{Name: "x", Path: ".status.x", Version: "v2"}}}},
			wantStatus: metav1.ConditionFalse, wantReason: workv1.StatusFeedbackSyncedReasonFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := workv1.ManifestCondition{StatusFeedbacks: workv1.StatusFeedbackResult{Values: []workv1.FeedbackValue{{Name: "old", Value: intValue(1)}}}}
			setFeedback(&mc, tt.obj, tt.rules, 7)
			c := meta.FindStatusCondition(mc.Conditions, workv1.ManifestStatusFeedbackSynced)
			switch {
			case tt.wantReason == "" && c != nil:
				t.Errorf("condition = %+v, want none", c)
			case tt.wantReason != "" && (c == nil || c.Status != tt.wantStatus || c.Reason != tt.wantReason || c.ObservedGeneration != 7):
				t.Errorf("condition = %+v, want %s %s", c, tt.wantStatus, tt.wantReason)
			}
			if len(mc.StatusFeedbacks.Values) != tt.wantValues {
				t.Errorf("values = %+v, want %d", mc.StatusFeedbacks.Values, tt.wantValues)
			}
		})
	}
}

// toYAML renders v for comparisons and messages.
func toYAML(v any) string {
	data, _ := yaml.Marshal(v)
	return string(data)
}

func TestPacer(t *testing.T) {
	p := newPacer(10, 3)
	for i := range 3 {
		if d := p.delay("w"); d != 0 {
			t.Errorf("event %d: delay %v, want none within the burst", i, d)
		}
	}
	if d := p.delay("w"); d < 50*time.Millisecond {
		t.Errorf("event beyond the burst: delay %v, want about 100ms", d)
	}
	if d := p.delay("other"); d != 0 {
		t.Errorf("another work: delay %v", d)
	}
}

func TestPollsFeedback(t *testing.T) {
	rules := []workv1.FeedbackRule{{Type: workv1.WellKnownStatusType}}
	config := func(scrape workv1.FeedbackScrapeType, rules []workv1.FeedbackRule) workv1.ManifestConfigOption {
		return workv1.ManifestConfigOption{FeedbackRules: rules, FeedbackScrapeType: scrape}
	}
	tests := []struct {
		name    string
		configs []workv1.ManifestConfigOption
		want    bool
	}{
		{name: "no configs"},
		{name: "Poll without feedback rules", configs: []workv1.ManifestConfigOption{config(workv1.FeedbackPollType, nil)}},
		{name: "Poll with feedback rules", configs: []workv1.ManifestConfigOption{config(workv1.FeedbackPollType, rules)}, want: true},
		{name: "unset means Poll", configs: []workv1.ManifestConfigOption{config("", rules)}, want: true},
		{name: "Watch only", configs: []workv1.ManifestConfigOption{config(workv1.FeedbackWatchType, rules)}},
		{name: "Watch and Poll", configs: []workv1.ManifestConfigOption{config(workv1.FeedbackWatchType, rules), config(workv1.FeedbackPollType, rules)}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &workv1.ManifestWork{}
			w.Spec.ManifestConfigs = tt.configs
			if got := pollsFeedback(w); got != tt.want {
				t.Errorf("pollsFeedback = %v, want %v", got, tt.want)
			}
		})
	}
}
