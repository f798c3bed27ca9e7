package workcli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// manifestWork returns a ManifestWork in cluster1 with the given manifests (YAML
// flow objects, one per line).
func manifestWork(name string, manifests ...string) string {
	return "apiVersion: work.open-cluster-management.io/v1\nkind: ManifestWork\nmetadata: {name: " + name +
		", namespace: cluster1}\nspec:\n  workload:\n    manifests:\n" + indent("- "+strings.Join(manifests, "\n- "), 4)
}

// replicaSet returns a ManifestWorkReplicaSet in cluster1 with the given manifests.
func replicaSet(name string, manifests ...string) string {
	return "apiVersion: work.open-cluster-management.io/v1alpha1\nkind: ManifestWorkReplicaSet\nmetadata: {name: " + name +
		", namespace: cluster1}\nspec:\n  placementRefs: [{name: p}]\n  manifestWorkTemplate:\n    workload:\n      manifests:\n" +
		indent("- "+strings.Join(manifests, "\n- "), 6)
}

const (
	cm      = "{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: default}}"
	cmOther = "{apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: other}}"
)

// bigConfigMap returns a ConfigMap manifest whose data holds n characters.
func bigConfigMap(name string, n int) string {
	return "{apiVersion: v1, kind: ConfigMap, metadata: {name: " + name + ", namespace: default}, data: {big: " + strings.Repeat("x", n) + "}}"
}

// testAdmission creates invalid works as the hub admin and checks that each
// is rejected with an error naming the field and the rule.
func testAdmission(ctx context.Context, t *testing.T, c client.Client) {
	// The policies take effect once the API server has loaded them.
	framework.Eventually(ctx, t, pollTimeout, "the ManifestWork admission policy", func(ctx context.Context) (bool, error) {
		err := c.Create(ctx, mustDecode(t, manifestWork("probe", cm, cm)))
		if err == nil {
			_ = c.Delete(ctx, mustDecode(t, manifestWork("probe", cm)))
			return false, nil
		}
		if kit.ErrorSays(err, "same object") {
			return true, nil
		}
		return false, err
	})
	tests := []struct {
		name, obj            string
		wantField, wantError string
	}{
		{"manifest without a name", manifestWork("no-name", "{apiVersion: v1, kind: ConfigMap, metadata: {namespace: default}}"),
			"spec.workload.manifests[0]", "each manifest must set metadata.name"},
		{"manifest with generateName", manifestWork("generate-name", "{apiVersion: v1, kind: ConfigMap, metadata: {name: a, generateName: a-}}"),
			"spec.workload.manifests[0]", "must not set metadata.generateName"},
		{"duplicate manifests", manifestWork("dup", cm, cmOther, cm),
			"spec.workload.manifests", "spec.workload.manifests[0] and spec.workload.manifests[2] are the same object (ConfigMap default/cm)"},
		{"duplicates across versions of one group", manifestWork("dup-versions",
			"{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: default}}",
			"{apiVersion: apps/v1beta1, kind: Deployment, metadata: {name: web, namespace: default}}"),
			"spec.workload.manifests", "same object (Deployment.apps default/web)"},
		{"oversize data", manifestWork("oversize", bigConfigMap("a", 300*1024), bigConfigMap("b", 250*1024)),
			"spec.workload.manifests", "over the 512000-byte (500 KiB) size limit"},
		{"replica set duplicates", replicaSet("dup", cm, cm),
			"spec.manifestWorkTemplate.workload.manifests", "are the same object (ConfigMap default/cm)"},
		{"replica set oversize", replicaSet("oversize", bigConfigMap("a", 520*1024)),
			"spec.manifestWorkTemplate.workload.manifests", "500 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Create(ctx, mustDecode(t, tt.obj))
			if err == nil {
				t.Fatalf("the hub accepted the object; want it rejected naming %s", tt.wantField)
			}
			if !apierrors.IsInvalid(err) {
				t.Errorf("error is not Invalid (reason %q): %v", apierrors.ReasonForError(err), err)
			}
			for _, want := range []string{tt.wantField, tt.wantError} {
				assert.ErrorContains(t, err, want)
			}
		})
	}
	t.Run("valid works pass", func(t *testing.T) {
		for _, obj := range []string{
			manifestWork("same-name-other-namespace", cm, cmOther),
			manifestWork("large-but-under", bigConfigMap("a", 400*1024)),
			replicaSet("valid", cm, cmOther),
		} {
			if err := c.Create(ctx, mustDecode(t, obj)); err != nil {
				t.Errorf("create valid object: %v", err)
			}
		}
	})
	t.Run("thousands of small manifests stay within the CEL cost budget", func(t *testing.T) {
		var many []string
		for i := range 6000 {
			many = append(many, fmt.Sprintf("{apiVersion: v1, kind: ConfigMap, metadata: {name: cm-%d, namespace: default}}", i))
		}
		if err := c.Create(ctx, mustDecode(t, manifestWork("many", many...))); err != nil {
			t.Errorf("create a work of 6000 manifests: %v", err)
		}
		// Up to 400 manifests the message names both indexes.
		err := c.Create(ctx, mustDecode(t, manifestWork("many-dup", append(many[:399:399], many[123])...)))
		assert.ErrorContains(t, err, "spec.workload.manifests[123] and spec.workload.manifests[399] are the same object (ConfigMap default/cm-123)")
		// Beyond, the rejection names the object.
		err = c.Create(ctx, mustDecode(t, manifestWork("many-dup", append(many, many[1234])...)))
		assert.ErrorContains(t, err, "ConfigMap default/cm-1234 already exists")
	})
	t.Run("an update adding a duplicate is rejected", func(t *testing.T) {
		u := mustDecode(t, manifestWork("same-name-other-namespace", cm, cmOther, cmOther))
		cur := mustDecode(t, manifestWork("same-name-other-namespace", cm))
		if err := c.Get(ctx, client.ObjectKeyFromObject(cur), cur); err != nil {
			t.Fatal(err)
		}
		u.SetResourceVersion(cur.GetResourceVersion())
		err := c.Update(ctx, u)
		assert.ErrorContains(t, err, "spec.workload.manifests[1] and spec.workload.manifests[2]")
	})
}
