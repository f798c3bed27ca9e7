package workcli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/workreport"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// worksOnlyUser returns a cli for user bob, who may only manage
// ManifestWorks in namespace cluster1 (no access to ManagedClusters or
// Namespaces).
func worksOnlyUser(ctx context.Context, t *testing.T, env *framework.Environment) clitest.CLI {
	t.Helper()
	return clitest.AsUser(ctx, t, env.Cluster("hub"), clitest.User{Name: "bob", Grants: []clitest.Grant{
		{Namespace: "cluster1", Rules: []rbacv1.PolicyRule{{APIGroups: []string{"work.open-cluster-management.io"}, Resources: []string{"manifestworks"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}},
	}})
}

// manifestDir writes a directory of manifests: a.yaml (ConfigMap and
// Namespace) and sub/b.yaml (Deployment).
func manifestDir(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{
		"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: app}\ndata: {k: v}\n---\n" +
			"apiVersion: v1\nkind: Namespace\nmetadata: {name: app}\n",
		"sub/b.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: app}\n" +
			"spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: nginx}]}}}\n",
		"dup.yaml.txt": "not read",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// getWork reads ManifestWork name of cluster.
func getWork(ctx context.Context, t *testing.T, c client.Client, cluster, name string) *workv1.ManifestWork {
	t.Helper()
	w := &workv1.ManifestWork{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, w); err != nil {
		t.Fatalf("get ManifestWork %s/%s: %v", cluster, name, err)
	}
	return w
}

// testCLI drives create, get, status and delete through the cobra commands.
func testCLI(ctx context.Context, t *testing.T, env *framework.Environment, c client.Client) {
	fx := &workCLIFixture{ctx: ctx, env: env, c: c, k: clitest.CLI{Kubeconfig: env.Kubeconfig()}, dir: manifestDir(t)}
	t.Run("create", fx.create)
	t.Run("create without -R reads only the top directory", fx.createTopDir)
	t.Run("an existing work needs --overwrite", fx.needsOverwrite)
	t.Run("overwrite with an update strategy", fx.overwriteStrategy)
	t.Run("overwrite takes over what an earlier release applied", fx.overwriteLegacy)
	t.Run("clusters must exist and be accepted", fx.clustersChecked)
	t.Run("every update strategy is admitted", fx.everyStrategy)
	t.Run("manifests over a work's limit go as a large payload", fx.oversize)
	t.Run("large payloads", fx.largePayloads)
	t.Run("a user who may only write works", fx.worksOnly)
	t.Run("manifests are checked before sending", fx.manifestsChecked)
	t.Run("get", fx.get)
	t.Run("status", fx.status)
	t.Run("completion", fx.completion)
	t.Run("delete --wait shows the agent's progress", fx.deleteWait)
}

// workCLIFixture is what the steps of testCLI share: the environment, the
// hub's admin client c, the CLI k as the admin, and dir, the manifests
// manifestDir wrote.
type workCLIFixture struct {
	ctx context.Context
	env *framework.Environment
	c   client.Client
	k   clitest.CLI
	dir string
}

// create checks that work create makes a work of every manifest of the
// directory tree, as its own field manager.
func (fx *workCLIFixture) create(t *testing.T) {
	ctx, c, k, dir := fx.ctx, fx.c, fx.k, fx.dir
	clitest.ExpectOK(t, k.Run(ctx, "work", "create", "web", "-f", dir, "-R", "--clusters", "cluster1"), "ManifestWork web created in cluster cluster1\n")
	w := getWork(ctx, t, c, "cluster1", "web")
	if n := len(w.Spec.Workload.Manifests); n != 3 {
		t.Errorf("work has %d manifests, want 3", n)
	}
	clitest.ExpectFieldManager(t, w, "kubectl-ocm-work-create/Apply")
}

// createTopDir checks that create without -R reads only the top directory.
func (fx *workCLIFixture) createTopDir(t *testing.T) {
	ctx, c, k, dir := fx.ctx, fx.c, fx.k, fx.dir
	clitest.ExpectOK(t, k.Run(ctx, "work", "create", "top", "-f", dir, "--clusters", "cluster1", "--dry-run=server", "-o", "json"), `"kind": "ManifestWork"`, `"name": "cm"`)
	if err := c.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: "top"}, &workv1.ManifestWork{}); !apierrors.IsNotFound(err) {
		t.Errorf("server dry run stored the work: err = %v", err)
	}
}

// needsOverwrite checks that an existing work needs --overwrite.
func (fx *workCLIFixture) needsOverwrite(t *testing.T) {
	ctx, k, dir := fx.ctx, fx.k, fx.dir
	clitest.ExpectErr(t, k.Run(ctx, "work", "create", "web", "-f", dir, "--clusters", "cluster1"), "ManifestWork web already exists in cluster cluster1", "--overwrite")
}

// overwriteStrategy checks that --overwrite with --update-strategy gives
// every manifest that strategy.
func (fx *workCLIFixture) overwriteStrategy(t *testing.T) {
	ctx, c, k, dir := fx.ctx, fx.c, fx.k, fx.dir
	clitest.ExpectOK(t, k.Run(ctx, "work", "create", "web", "-f", dir, "-R", "--clusters", "cluster1", "--overwrite", "--update-strategy", "CreateOnly"),
		"ManifestWork web configured in cluster cluster1\n")
	w := getWork(ctx, t, c, "cluster1", "web")
	if len(w.Spec.ManifestConfigs) != 3 {
		t.Fatalf("work has %d manifest configs, want 3", len(w.Spec.ManifestConfigs))
	}
	var resources []string
	for _, mc := range w.Spec.ManifestConfigs {
		resources = append(resources, mc.ResourceIdentifier.Group+"/"+mc.ResourceIdentifier.Resource)
		if mc.UpdateStrategy == nil || mc.UpdateStrategy.Type != workv1.UpdateStrategyTypeCreateOnly {
			t.Errorf("manifest config %v lacks the CreateOnly strategy", mc.ResourceIdentifier)
		}
	}
	if got := strings.Join(resources, ","); got != "/configmaps,/namespaces,apps/deployments" {
		t.Errorf("resources = %s", got)
	}
}

// overwriteLegacy checks that overwrite takes over what an earlier release
// applied.
func (fx *workCLIFixture) overwriteLegacy(t *testing.T) {
	ctx, c, k, dir := fx.ctx, fx.c, fx.k, fx.dir
	// Before each verb had its field manager, work create applied as
	// kubectl-ocm: the fields it applied, such as a label the work no
	// longer has, become the verb's and go.
	old := &workv1.ManifestWork{TypeMeta: metav1.TypeMeta{APIVersion: workv1.GroupVersion.String(), Kind: "ManifestWork"},
		ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: "cluster1", Labels: map[string]string{"example.com/old": "x"}},
		Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{
			Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"old","namespace":"app"}}`)}}}}}}
	u, err := cli.ToUnstructured(old)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("kubectl-ocm"), client.ForceOwnership); err != nil {
		t.Fatalf("apply ManifestWork legacy as kubectl-ocm: %v", err)
	}
	clitest.ExpectOK(t, k.Run(ctx, "work", "create", "legacy", "-f", dir, "-R", "--clusters", "cluster1", "--overwrite"), "ManifestWork legacy configured in cluster cluster1\n")
	w := getWork(ctx, t, c, "cluster1", "legacy")
	if _, ok := w.Labels["example.com/old"]; ok || len(w.Spec.Workload.Manifests) != 3 {
		t.Errorf("work legacy kept the label of the earlier release (%v) or has %d manifests, want 3", w.Labels, len(w.Spec.Workload.Manifests))
	}
	if managers := clitest.FieldManagers(w); !slices.Equal(managers, []string{"kubectl-ocm-work-create/Apply"}) {
		t.Errorf("managed fields of work legacy: %v, want kubectl-ocm-work-create/Apply alone", managers)
	}
}

// clustersChecked checks that clusters must exist and be accepted.
func (fx *workCLIFixture) clustersChecked(t *testing.T) {
	ctx, c, k, dir := fx.ctx, fx.c, fx.k, fx.dir
	r := k.Run(ctx, "work", "create", "other", "-f", dir, "--clusters", "cluster1,cluster2,cluster3")
	clitest.ExpectErr(t, r, "managed cluster cluster2 is not accepted", "kubectl ocm accept --clusters cluster2", "managed cluster cluster3 does not exist on the hub")
	if err := c.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: "other"}, &workv1.ManifestWork{}); !apierrors.IsNotFound(err) {
		t.Errorf("work other was written to cluster1 although the command failed: err = %v", err)
	}
}

// everyStrategy checks that every update strategy is admitted.
func (fx *workCLIFixture) everyStrategy(t *testing.T) {
	ctx, k, dir := fx.ctx, fx.k, fx.dir
	for _, strategy := range []string{"Update", "CreateOnly", "ServerSideApply", "ReadOnly"} {
		clitest.ExpectOK(t, k.Run(ctx, "work", "create", "strategy", "-f", dir, "-R", "--clusters", "cluster1", "--update-strategy", strategy, "--dry-run=server"),
			"ManifestWork strategy created in cluster cluster1 (server dry run)\n")
	}
}

// oversize checks that manifests over a ManifestWork's limit are sent as a
// large payload (pkg/payload); a payload over its own limit is refused
// before sending (plugins/work's unit tests).
func (fx *workCLIFixture) oversize(t *testing.T) {
	ctx, k, dir := fx.ctx, fx.k, fx.dir
	f := filepath.Join(t.TempDir(), "big.yaml")
	big := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: app}\ndata: {x: " + strings.Repeat("x", 510*1024) + "}\n"
	if err := os.WriteFile(f, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	// Over a ManifestWork's 500 KiB, the manifests go as a large payload:
	// chunks in the cluster's namespace, which the work lists.
	clitest.ExpectOK(t, k.Run(ctx, "work", "create", "big", "-f", f, "-f", dir, "--clusters", "cluster1"),
		"Payload of big: ", "ManifestWork big created in cluster cluster1")
	w := getWork(ctx, t, fx.c, "cluster1", "big")
	if m := w.Spec.Workload.Manifests; len(m) != 1 || !strings.Contains(string(m[0].Raw), "ManifestPayload") {
		t.Errorf("work big holds %d manifests; want one ManifestPayload", len(m))
	}
}

// worksOnly checks what a user who may only write works can do with the
// work verbs.
func (fx *workCLIFixture) worksOnly(t *testing.T) {
	ctx, env, dir := fx.ctx, fx.env, fx.dir
	bob := worksOnlyUser(ctx, t, env)
	clitest.ExpectOK(t, bob.Run(ctx, "work", "create", "bobs", "-f", dir, "-R", "--clusters", "cluster1"), "ManifestWork bobs created in cluster cluster1\n")
	clitest.ExpectOK(t, bob.Run(ctx, "work", "get", "--clusters", "cluster1", "-o", "name"), "manifestwork.work.open-cluster-management.io/bobs\n")
	clitest.ExpectOK(t, bob.Run(ctx, "work", "get", "-n", "cluster1", "-o", "name"), "manifestwork.work.open-cluster-management.io/bobs\n")
	clitest.ExpectErr(t, bob.Run(ctx, "work", "get"), "forbidden", "use --clusters NAME")
	clitest.ExpectOK(t, bob.Run(ctx, "work", "delete", "bobs", "--clusters", "cluster1", "--wait"), "ManifestWork bobs deleted in cluster cluster1\n")
	clitest.ExpectErr(t, bob.Run(ctx, "work", "create", "bobs", "-f", dir, "--clusters", "cluster2"), "cluster2", "forbidden")
}

// manifestsChecked checks that manifests are checked before sending.
func (fx *workCLIFixture) manifestsChecked(t *testing.T) {
	ctx, k := fx.ctx, fx.k
	f := filepath.Join(t.TempDir(), "dup.yaml")
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: app}\n"
	if err := os.WriteFile(f, []byte(cm+"---\n"+cm+"---\napiVersion: v1\nkind: Secret\nmetadata: {generateName: s-}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	clitest.ExpectErr(t, k.Run(ctx, "work", "create", "bad", "-f", f, "--clusters", "cluster1"),
		f+" (document 2): ConfigMap app/cm is also defined in "+f+" (document 1)", f+" (document 3): Secret (no name) has no metadata.name")
}

// get checks work get's tables, -o name and yaml, its namespaces, and
// what it says of kubectl's --cluster and of works not found.
func (fx *workCLIFixture) get(t *testing.T) {
	ctx, c, k := fx.ctx, fx.c, fx.k
	// clusteradm's --cluster NAME names a managed cluster; here it is
	// kubectl's flag: the verb says so before any request goes to the
	// kubeconfig's cluster entry of that name.
	r := k.Run(ctx, "get", "works", "--cluster", "cluster1")
	clitest.ExpectErr(t, r, "--cluster cluster1 is kubectl's flag", "cluster1 is a managed cluster of the hub", "name it with --clusters cluster1")
	if strings.Contains(r.ErrOut, "server groups") || strings.Contains(r.ErrOut, "credentials") {
		t.Errorf("get works --cluster cluster1 sent requests before saying why it stops:\n%s", r.ErrOut)
	}
	r = k.Run(ctx, "work", "get")
	// Works big and large are large payloads: a PAYLOAD column says so.
	clitest.ExpectOK(t, r, "CLUSTER    MANIFESTS   APPLIED   AVAILABLE   DRIFTED   PAYLOAD")
	if !clitest.HasRow(r.Out, "web", "cluster1", "3") {
		t.Errorf("table lacks the row of web:\n%s", r.Out)
	}
	writeStatus(ctx, t, c)
	if r = k.Run(ctx, "work", "get", "web", "--clusters", "cluster1", "-o", "wide"); !clitest.HasRow(r.Out, "web", "cluster1", "3", "True", "False", "1") {
		t.Errorf("wide table lacks web applied, not available, one manifest drifted:\n%s", r.Out)
	}
	clitest.ExpectOK(t, k.Run(ctx, "work", "get", "--clusters", "cluster1", "-o", "name"), "manifestwork.work.open-cluster-management.io/web\n")
	clitest.ExpectOK(t, k.Run(ctx, "work", "get", "-n", "cluster1", "-o", "name"), "manifestwork.work.open-cluster-management.io/web\n")
	clitest.ExpectOK(t, k.Run(ctx, "work", "get", "web", "-A", "-o", "yaml"), "kind: ManifestWork", "name: web")
	clitest.ExpectOK(t, k.Run(ctx, "work", "get", "web", "-n", "default", "--all-namespaces", "-o", "name"), "manifestwork.work.open-cluster-management.io/web\n")
	if r = k.Run(ctx, "work", "get", "-n", "cluster2"); r.Err != nil || !strings.Contains(r.ErrOut, "No works found in cluster cluster2.") {
		t.Errorf("get -n cluster2: err %v, stderr %q", r.Err, r.ErrOut)
	}
	r = k.Run(ctx, "work", "get", "nope", "--clusters", "cluster1")
	if r.Err != nil || !strings.Contains(r.ErrOut, "No work nope found in cluster cluster1.") {
		t.Errorf("get nope: err %v, stderr %q", r.Err, r.ErrOut)
	}
}

// status checks work status's table and -o json, and an unknown work.
func (fx *workCLIFixture) status(t *testing.T) {
	ctx, k := fx.ctx, fx.k
	clitest.ExpectOK(t, k.Run(ctx, "work", "status", "web", "--clusters", "cluster1"),
		"KIND              NAMESPACE/NAME   APPLIED   AVAILABLE   FEEDBACK          LAST DRIFT",
		"Deployment.apps   app/web          True      True        ReadyReplicas=1   ", " ago (ResourceModified)   Drifted: spec.replicas differs",
		"Drifted: spec.replicas differs",
		"ConfigMap         app/cm           True      False", "Available: configmaps \"cm\" not found",
		"Namespace         app              True      True")
	r := k.Run(ctx, "work", "status", "web", "-n", "cluster1", "-o", "json")
	clitest.ExpectOK(t, r)
	var report workreport.Report
	if err := json.Unmarshal([]byte(r.Out), &report); err != nil {
		t.Fatalf("decode -o json: %v\n%s", err, r.Out)
	}
	if len(report.Manifests) != 3 || report.Manifests[2].Feedback["ReadyReplicas"] != float64(1) {
		t.Errorf("report = %+v", report)
	}
	clitest.ExpectErr(t, k.Run(ctx, "work", "status", "nope", "--clusters", "cluster1"), "ManifestWork nope not found in cluster cluster1", "kubectl ocm work get --clusters cluster1")
}

// completion checks that cluster and work names complete.
func (fx *workCLIFixture) completion(t *testing.T) {
	ctx, k := fx.ctx, fx.k
	clitest.ExpectOK(t, k.Run(ctx, "__complete", "work", "status", "web", "--clusters", ""), "cluster1\ncluster2\n")
	clitest.ExpectOK(t, k.Run(ctx, "__complete", "work", "create", "x", "--clusters", "cluster1,"), "cluster1,cluster2\n")
	clitest.ExpectOK(t, k.Run(ctx, "__complete", "work", "delete", "--clusters", "cluster1", ""), "web\n")
}

// deleteWait checks that delete --wait shows the agent's progress.
func (fx *workCLIFixture) deleteWait(t *testing.T) {
	ctx, c, k := fx.ctx, fx.c, fx.k
	w := getWork(ctx, t, c, "cluster1", "web")
	w.Finalizers = []string{workv1.ManifestWorkFinalizer}
	if err := c.Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	errOut := &clitest.SyncBuffer{}
	done := make(chan clitest.Result, 1)
	go func() {
		streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: errOut}
		done <- k.RunWith(ctx, streams, "work", "delete", "web", "--clusters", "cluster1", "--wait", "--timeout", "30s")
	}()
	framework.Eventually(ctx, t, pollTimeout, "the work to be deleting", func(ctx context.Context) (bool, error) {
		w = getWork(ctx, t, c, "cluster1", "web")
		return w.DeletionTimestamp != nil, nil
	})
	meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: workv1.WorkDeleting, Status: metav1.ConditionTrue,
		Reason: workv1.WorkDeletingReason, Message: "Removing 3 applied resources"})
	if err := c.Status().Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, pollTimeout, "the progress line", func(context.Context) (bool, error) {
		return strings.Contains(errOut.String(), "cluster1: Removing 3 applied resources"), nil
	})
	w = getWork(ctx, t, c, "cluster1", "web")
	w.Finalizers = nil
	if err := c.Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		clitest.ExpectOK(t, r, "ManifestWork web deleted in cluster cluster1\n")
	case <-time.After(pollTimeout):
		t.Fatal("work delete --wait did not return once the work was gone")
	}
	clitest.ExpectErr(t, k.Run(ctx, "work", "delete", "web", "--clusters", "cluster1"), "ManifestWork web not found in cluster cluster1", "--ignore-not-found")
	clitest.ExpectOK(t, k.Run(ctx, "work", "delete", "web", "--clusters", "cluster1", "--ignore-not-found"))
}

// writeStatus writes, as the agent would, the status of work web: all
// applied, the ConfigMap not available, the Deployment drifted with feedback.
func writeStatus(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	w := getWork(ctx, t, c, "cluster1", "web")
	now := metav1.Now()
	cond := func(typ string, status metav1.ConditionStatus, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: "Test", Message: msg, LastTransitionTime: now}
	}
	manifest := func(ordinal int32, group, kind, resource, ns, name string, conds ...metav1.Condition) workv1.ManifestCondition {
		return workv1.ManifestCondition{
			ResourceMeta: workv1.ManifestResourceMeta{Ordinal: ordinal, Group: group, Version: "v1", Kind: kind, Resource: resource, Namespace: ns, Name: name},
			Conditions:   conds,
		}
	}
	deploy := manifest(2, "apps", "Deployment", "deployments", "app", "web",
		cond(workv1.ManifestApplied, metav1.ConditionTrue, ""), cond(workv1.ManifestAvailable, metav1.ConditionTrue, ""),
		metav1.Condition{Type: workv1.ManifestDrifted, Status: metav1.ConditionTrue, Reason: workv1.DriftReasonModified, Message: "spec.replicas differs", LastTransitionTime: now})
	deploy.StatusFeedbacks.Values = []workv1.FeedbackValue{{Name: "ReadyReplicas", Value: workv1.FieldValue{Type: workv1.Integer, Integer: ptr.To[int64](1)}}}
	w.Status = workv1.ManifestWorkStatus{
		Conditions: []metav1.Condition{cond(workv1.WorkApplied, metav1.ConditionTrue, ""), cond(workv1.WorkAvailable, metav1.ConditionFalse, "")},
		ResourceStatus: workv1.ManifestResourceStatus{Manifests: []workv1.ManifestCondition{
			manifest(0, "", "ConfigMap", "configmaps", "app", "cm", cond(workv1.ManifestApplied, metav1.ConditionTrue, ""),
				cond(workv1.ManifestAvailable, metav1.ConditionFalse, `configmaps "cm" not found`)),
			manifest(1, "", "Namespace", "namespaces", "", "app", cond(workv1.ManifestApplied, metav1.ConditionTrue, ""),
				cond(workv1.ManifestAvailable, metav1.ConditionTrue, "")),
			deploy,
		}},
	}
	if err := c.Status().Update(ctx, w); err != nil {
		t.Fatal(err)
	}
}
