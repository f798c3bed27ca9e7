package crds_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonconversion "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	ocmapply "github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
	"github.com/kubectl-ocm/kubectl-ocm/test/seeds"
)

const (
	// fieldOwner is the server-side apply field manager of this test.
	fieldOwner = "kubectl-ocm-crds-test"
	// establishTimeout bounds the wait for CRDs to become established and served.
	establishTimeout = 60 * time.Second
)

// clusters are the two control planes of the test.
type clusters struct {
	hub, cluster1 client.Client
}

// TestCRDs installs the CRDs on a hub and a managed cluster, then checks the
// seed examples, the schema defaults and every validation rule.
func TestCRDs(t *testing.T) {
	framework.SkipIfShort(t)
	env := framework.StartForTest(t, "hub", "cluster1")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	hubCRDs, err := config.HubCRDs()
	if err != nil {
		t.Fatalf("decode hub CRDs: %v", err)
	}
	managedCRDs, err := config.ManagedClusterCRDs()
	if err != nil {
		t.Fatalf("decode managed-cluster CRDs: %v", err)
	}
	// The add-on CRDs convert through the hub controller's webhook, run
	// in-process at a loopback URL.
	bind, url := hubtest.ConversionWebhookAddress(t)
	for _, crd := range hubCRDs {
		if conversion.IsConverted(crd.Name) {
			crd.Spec.Conversion = conversion.WebhookConversion(config.HubNamespace, url)
		}
	}
	cs := clusters{
		hub:      installCRDs(ctx, t, env.Cluster("hub"), hubCRDs),
		cluster1: installCRDs(ctx, t, env.Cluster("cluster1"), managedCRDs),
	}
	if err := cs.hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: config.HubNamespace}}); err != nil {
		t.Fatalf("create namespace %s on the hub: %v", config.HubNamespace, err)
	}
	hubtest.StartConversionWebhook(ctx, t, cs.hub, cs.hub, addonconversion.Options{BindAddress: bind})
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}}
	if err := cs.hub.Create(ctx, ns); err != nil {
		t.Fatalf("create namespace cluster1 on the hub: %v", err)
	}

	t.Run("seeds", func(t *testing.T) { testSeeds(ctx, t, cs) })
	t.Run("defaults", func(t *testing.T) { testDefaults(ctx, t, cs) })
	t.Run("validation", func(t *testing.T) { testValidation(ctx, t, cs) })
}

// installCRDs applies crds to cluster, waits until each is established and
// served, and returns a client of the cluster that knows them. The API
// server validates each CRD on apply (structural schema, defaults, and the
// compilation and estimated cost of every CEL rule), so a CRD it would reject
// on install fails here.
func installCRDs(ctx context.Context, t *testing.T, cluster *framework.Cluster, crds []*apiextensionsv1.CustomResourceDefinition) client.Client {
	t.Helper()
	c := cluster.Client()
	for _, crd := range crds {
		u, err := ocmapply.ToUnstructured(crd, apis.Scheme)
		if err != nil {
			t.Fatalf("convert CRD %s: %v", crd.Name, err)
		}
		if err := apply(ctx, c, u); err != nil {
			t.Fatalf("apply CRD %s to %s: %v", crd.Name, cluster.Name, err)
		}
	}
	for _, crd := range crds {
		framework.Eventually(ctx, t, establishTimeout, "CRD "+crd.Name+" established on "+cluster.Name, func(ctx context.Context) (bool, error) {
			got := &apiextensionsv1.CustomResourceDefinition{}
			if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, got); err != nil {
				return false, err
			}
			return apihelpers.IsCRDConditionTrue(got, apiextensionsv1.Established), nil
		})
	}
	// A fresh client discovers the new kinds; poll until each served version is served.
	c = cluster.Client()
	for _, crd := range crds {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.ListKind})
			framework.Eventually(ctx, t, establishTimeout, fmt.Sprintf("%s %s/%s served on %s", crd.Spec.Names.Kind, crd.Spec.Group, v.Name, cluster.Name), func(ctx context.Context) (bool, error) {
				return true, c.List(ctx, list)
			})
		}
	}
	return c
}

// testSeeds applies every seed example unchanged and reads each one back.
func testSeeds(ctx context.Context, t *testing.T, cs clusters) {
	files := seeds.Names("*.yaml")
	if len(files) == 0 {
		t.Fatal("no seed examples embedded in test/seeds")
	}
	for _, file := range files {
		data := seeds.Data(t, file)
		docs := splitYAML(data)
		if len(docs) == 0 {
			t.Fatalf("seed %s holds no object", file)
		}
		for i, doc := range docs {
			u, err := decode(doc)
			if err != nil {
				t.Fatalf("decode seed %s document %d: %v", filepath.Base(file), i, err)
			}
			t.Run(fmt.Sprintf("%s#%d_%s_%s", filepath.Base(file), i, u.GetKind(), u.GetName()), func(t *testing.T) {
				c, where := cs.hub, "hub"
				if u.GetKind() == "ClusterClaim" { // ClusterClaims live on managed clusters.
					c, where = cs.cluster1, "cluster1"
				}
				if err := apply(ctx, c, u.DeepCopy()); err != nil {
					t.Fatalf("%s rejected seed %s %s/%s: %v", where, u.GetKind(), u.GetNamespace(), u.GetName(), err)
				}
				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(u.GroupVersionKind())
				if err := c.Get(ctx, client.ObjectKeyFromObject(u), got); err != nil {
					t.Fatalf("read back seed %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
				}
			})
		}
	}
}

// splitYAML splits a multi-document YAML file on "---" separator lines and
// drops documents that hold only comments or blank lines.
func splitYAML(data []byte) []string {
	var docs []string
	var cur strings.Builder
	flush := func() {
		if hasContent(cur.String()) {
			docs = append(docs, cur.String())
		}
		cur.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimRight(line, " \t") == "---" {
			flush()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	flush()
	return docs
}

// hasContent reports whether a YAML document holds more than comments and blank lines.
func hasContent(doc string) bool {
	for _, line := range strings.Split(doc, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return true
		}
	}
	return false
}

// decode decodes one YAML document into an object.
func decode(doc string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		return nil, err
	}
	if u.GetKind() == "" || u.GetAPIVersion() == "" {
		return nil, fmt.Errorf("document has no apiVersion or kind")
	}
	return u, nil
}

// mustDecode decodes a YAML document written in a test, failing t on error.
func mustDecode(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u, err := decode(doc)
	if err != nil {
		t.Fatalf("decode test object: %v\n%s", err, doc)
	}
	return u
}

// apply server-side applies u with the test's field manager.
func apply(ctx context.Context, c client.Client, u *unstructured.Unstructured) error {
	return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership)
}
