package placementcli

import (
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"

	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// testWork delivers a work through placement apps/eu (decided: c1, c2).
func testWork(ctx context.Context, t *testing.T, k clitest.CLI, c client.Client) {
	file := filepath.Join(t.TempDir(), "app.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: default}\ndata: {k: v}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("refusals", func(t *testing.T) {
		clitest.ExpectErr(t, k.Run(ctx, "work", "create", "web", "-f", file, "--placement", "apps/eu", "--clusters", "c1"), "--clusters and --placement exclude each other")
		clitest.ExpectErr(t, k.Run(ctx, "work", "create", "web", "-f", file, "--placement", "apps/ghost"), "placement ghost not found in namespace apps", "kubectl ocm placement create ghost -n apps")
		clitest.ExpectErr(t, k.Run(ctx, "work", "create", "web", "-f", file, "--clusters", "c1", "--rollout", "Progressive"), "--rollout needs --placement")
		clitest.ExpectErr(t, k.Run(ctx, "work", "create", "web", "-f", file, "--placement", "apps/eu", "--max-concurrency", "2"), "--max-concurrency applies to --rollout Progressive only")
		if err := c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "web"}, &workv1alpha1.ManifestWorkReplicaSet{}); !apierrors.IsNotFound(err) {
			t.Errorf("a refused create wrote the ManifestWorkReplicaSet: err = %v", err)
		}
	})
	t.Run("create", func(t *testing.T) {
		r := k.Run(ctx, "work", "create", "web", "-f", file, "--placement", "apps/eu", "--replicaset",
			"--rollout", "Progressive", "--max-concurrency", "25%", "--max-failures", "1", "--min-success-time", "30s", "--progress-deadline", "10m")
		clitest.ExpectOK(t, r, "ManifestWorkReplicaSet web created in namespace apps for placement eu (rollout Progressive)")
		// No scheduler wrote the placement's status.
		if !strings.Contains(r.ErrOut, "placement eu selects no cluster yet") {
			t.Errorf("stderr lacks the warning that the placement selects nothing:\n%s", r.ErrOut)
		}
		mwrs := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "web"}, mwrs); err != nil {
			t.Fatal(err)
		}
		if n := len(mwrs.Spec.ManifestWorkTemplate.Workload.Manifests); n != 1 {
			t.Errorf("template has %d manifests, want 1", n)
		}
		if len(mwrs.Spec.PlacementRefs) != 1 {
			t.Fatalf("placementRefs = %+v, want one", mwrs.Spec.PlacementRefs)
		}
		ref := mwrs.Spec.PlacementRefs[0]
		p := ref.RolloutStrategy.Progressive
		if ref.Name != "eu" || ref.RolloutStrategy.Type != clusterv1alpha1.Progressive || p == nil ||
			p.MaxConcurrency != intstr.FromString("25%") || p.MaxFailures != intstr.FromInt32(1) ||
			p.MinSuccessTime.Seconds() != 30 || p.ProgressDeadline != "10m" {
			t.Errorf("placementRef = %+v (progressive %+v), want eu with the flags' Progressive rollout", ref, p)
		}
		clitest.ExpectErr(t, k.Run(ctx, "work", "create", "web", "-f", file, "--placement", "apps/eu"), "ManifestWorkReplicaSet web already exists in namespace apps", "--overwrite")
		clitest.ExpectOK(t, k.Run(ctx, "work", "create", "web", "-f", file, "--placement", "eu", "-n", "apps", "--overwrite"), "ManifestWorkReplicaSet web configured")
		if err := c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "web"}, mwrs); err != nil || mwrs.Spec.PlacementRefs[0].RolloutStrategy.Type != clusterv1alpha1.All {
			t.Errorf("after --overwrite: err = %v, rollout %+v, want All", err, mwrs.Spec.PlacementRefs[0].RolloutStrategy)
		}
	})
	t.Run("get", func(t *testing.T) {
		mwrs := &workv1alpha1.ManifestWorkReplicaSet{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "web"}, mwrs); err != nil {
			t.Fatal(err)
		}
		mwrs.Status.Summary = workv1alpha1.ManifestWorkReplicaSetSummary{Total: 2, Applied: 1, Available: 1}
		mwrs.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.ManifestWorkReplicaSetConditionPlacementRolledOut, Status: metav1.ConditionFalse,
			Reason: workv1alpha1.ReasonProgressing, LastTransitionTime: metav1.Now()}}
		if err := c.Status().Update(ctx, mwrs); err != nil {
			t.Fatal(err)
		}
		// The hub controller's work for c1 (namespace made by the explain
		// tests), applied and available; c2 has none yet.
		w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "web", Labels: map[string]string{
			workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey: "apps.web", workv1alpha1.ManifestWorkReplicaSetPlacementNameLabelKey: "eu"}},
			Spec: workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{
				Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"default"}}`)}}}}}}
		kit.MustCreate(ctx, t, c, w)
		for _, typ := range []string{workv1.WorkApplied, workv1.WorkAvailable} {
			w.Status.Conditions = append(w.Status.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: "R",
				ObservedGeneration: w.Generation, LastTransitionTime: metav1.Now()})
		}
		if err := c.Status().Update(ctx, w); err != nil {
			t.Fatal(err)
		}
		r := k.Run(ctx, "work", "get", "--replicaset", "-n", "apps")
		clitest.ExpectOK(t, r)
		if !clitest.HasRow(r.Out, "web", "eu(All)", "2", "1", "1", "0", "Progressing") {
			t.Errorf("table lacks web eu(All) 2 1 1 0 Progressing:\n%s", r.Out)
		}
		r = k.Run(ctx, "work", "get", "--replicaset", "-A")
		clitest.ExpectOK(t, r)
		if !clitest.HasRow(r.Out, "apps", "web") {
			t.Errorf("-A lacks the namespace column:\n%s", r.Out)
		}
		r = k.Run(ctx, "work", "get", "web", "--replicaset", "-n", "apps")
		clitest.ExpectOK(t, r)
		if !clitest.HasRow(r.Out, "c1", "eu", "True", "True", "Succeeded") || !clitest.HasRow(r.Out, "c2", "eu", "ToApply") {
			t.Errorf("per-cluster table lacks c1 Succeeded and c2 ToApply:\n%s", r.Out)
		}
		clitest.ExpectOK(t, k.Run(ctx, "work", "get", "web", "--replicaset", "-n", "apps", "-o", "yaml"), "kind: ManifestWorkReplicaSet")
	})
	t.Run("delete", func(t *testing.T) {
		clitest.ExpectErr(t, k.Run(ctx, "work", "delete", "web", "--replicaset", "-n", "apps", "--clusters", "c1"), "--clusters and --replicaset exclude each other")
		// Nothing removes the work of c1 (no hub controller): --wait names what is left.
		r := k.Run(ctx, "work", "delete", "web", "--replicaset", "-n", "apps", "--wait", "--timeout", "2s")
		clitest.ExpectErr(t, r, "waiting for ManifestWorkReplicaSet apps/web and its works to be removed", "1 work(s) left")
		if !strings.Contains(r.Out, "ManifestWorkReplicaSet web deleted in namespace apps") {
			t.Errorf("output lacks the deletion:\n%s", r.Out)
		}
		framework.Eventually(ctx, t, pollTimeout, "ManifestWorkReplicaSet apps/web to be gone", func(ctx context.Context) (bool, error) {
			err := c.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "web"}, &workv1alpha1.ManifestWorkReplicaSet{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		clitest.ExpectErr(t, k.Run(ctx, "work", "delete", "web", "--replicaset", "-n", "apps"), "ManifestWorkReplicaSet web not found in namespace apps")
	})
}
