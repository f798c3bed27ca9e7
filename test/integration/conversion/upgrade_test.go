package conversion

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonconversion "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/seeds"
)

// TestUpgradeMigratesStoredVersions installs a hub whose add-on CRDs serve
// and store v1alpha1 only, as before v1beta1, writes the seeds' add-on
// objects, applies the new hub as the ClusterManager operator does, then
// re-runs `hub init` with the hub controller's webhook running: every
// object stays, readable at both versions, and each CRD's
// status.storedVersions is [v1beta1].
func TestUpgradeMigratesStoredVersions(t *testing.T) {
	t.Parallel() // an environment of its own
	s := newSuite(t)
	written := s.installV1alpha1Hub(t)

	s.install(t)
	s.startWebhook(t, addonconversion.Options{Resync: time.Second})
	r := s.cli.Run(s.ctx, "hub", "init", "--conversion-webhook-url", s.url)
	clitest.ExpectOK(t, r, "kubectl ocm join")
	if want := "ClusterManagementAddOns from [v1alpha1 v1beta1] to v1beta1."; !strings.Contains(r.ErrOut, want) {
		t.Errorf("hub init did not report the migration (%q):\n%s", want, r.ErrOut)
	}
	s.expectMigrated(t, written)
}

// TestControllerMigratesStoredVersions upgrades the same v1alpha1 hub by
// applying the new manifests alone, as kubectl apply or a GitOps tool does,
// and leaves the migration to the hub controller's Migrator, run as the
// ocm-hub-controller ServiceAccount with the RBAC the hub ships.
func TestControllerMigratesStoredVersions(t *testing.T) {
	t.Parallel() // an environment of its own
	s := newSuite(t)
	written := s.installV1alpha1Hub(t)
	s.install(t)
	s.startWebhook(t, addonconversion.Options{Resync: time.Second})

	m := &addonconversion.Migrator{Client: s.controllerClient(t), Resync: time.Second, Log: framework.TestLogger(t, "migrator", 0)}
	ctx, cancel := context.WithCancel(s.ctx)
	done := make(chan error, 1)
	go func() { done <- m.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("migrator: %v", err)
		}
	})
	framework.Eventually(s.ctx, t, time.Minute, "the converted CRDs to store v1beta1 only", func(ctx context.Context) (bool, error) {
		pending, err := conversion.MigrationPending(ctx, s.admin)
		return !pending, err
	})
	s.expectMigrated(t, written)
}

// installV1alpha1Hub installs a hub whose add-on CRDs serve and store
// v1alpha1 only and writes the seeds' add-on objects, which it returns.
func (s *suite) installV1alpha1Hub(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	objs, err := config.HubObjects(config.HubValues{})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objs {
		if u.GetKind() == "CustomResourceDefinition" && conversion.IsConverted(u.GetName()) {
			v1alpha1Only(t, u)
		}
	}
	if err := apply.Apply(s.ctx, s.admin, objs, apply.Options{}); err != nil {
		t.Fatal(err)
	}
	s.createNamespaces(t, "cluster1", "open-cluster-management")
	var written []*unstructured.Unstructured
	for _, file := range append(seeds.Names("001-*.yaml"), seeds.Names("003-*.yaml")...) {
		for _, obj := range seeds.Read(t, file) {
			if obj.GroupVersionKind().GroupVersion() != addonv1alpha1.GroupVersion {
				continue
			}
			obj.SetName(fmt.Sprintf("%s-%d", obj.GetName(), len(written)))
			if err := s.admin.Create(s.ctx, obj.DeepCopy()); err != nil {
				t.Fatalf("create %s %s from %s: %v", obj.GetKind(), obj.GetName(), file, err)
			}
			written = append(written, obj)
		}
	}
	return written
}

// expectMigrated checks that every converted CRD stores v1beta1 only and
// that each of written is readable at both versions with its spec.
func (s *suite) expectMigrated(t *testing.T, written []*unstructured.Unstructured) {
	t.Helper()
	for _, name := range conversion.CRDNames {
		if got := s.crd(t, name).Status.StoredVersions; !slices.Equal(got, []string{"v1beta1"}) {
			t.Errorf("%s: storedVersions %v, want [v1beta1]", name, got)
		}
	}
	for _, obj := range written {
		alpha := s.read(t, obj, "v1alpha1")
		for _, d := range subset("spec", obj.Object["spec"], alpha.Object["spec"]) {
			t.Errorf("%s %s after the upgrade: %s", obj.GetKind(), obj.GetName(), d)
		}
		s.read(t, obj, "v1beta1")
	}
}

// v1alpha1Only turns the CRD u into its v1alpha1-only form: v1alpha1 served
// and stored, no other version, no conversion.
func v1alpha1Only(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	versions, _, err := unstructured.NestedSlice(u.Object, "spec", "versions")
	if err != nil {
		t.Fatal(err)
	}
	var kept []any
	for _, v := range versions {
		m := v.(map[string]any)
		if m["name"] == "v1alpha1" {
			m["storage"], m["served"] = true, true
			kept = append(kept, m)
		}
	}
	if err := unstructured.SetNestedSlice(u.Object, kept, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	unstructured.RemoveNestedField(u.Object, "spec", "conversion")
}
