package agent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	metafake "k8s.io/client-go/metadata/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

const testKey = clusterv1.ManagedNamespaceLabelKeyPrefix + "hubhash"

// object returns the metadata of an object of gvk in namespace ns, owned by owners.
func object(gvk schema.GroupVersionKind, ns, name string, owners ...metav1.OwnerReference) *metav1.PartialObjectMetadata {
	o := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: owners}}
	o.SetGroupVersionKind(gvk)
	return o
}

// namespace returns a namespace labeled testKey=value (no label when value is empty).
func namespace(name, value string, owners ...metav1.OwnerReference) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners}}
	if value != "" {
		ns.Labels = map[string]string{testKey: value}
	}
	return ns
}

// testAgent returns an agent whose managed cluster holds namespaces and the
// metadata of objects, serving configmaps, serviceaccounts, events and
// deployments.
func testAgent(t *testing.T, namespaces []*corev1.Namespace, objects ...runtime.Object) (*Agent, *kubefake.Clientset) {
	t.Helper()
	var nsObjs []runtime.Object
	reader := fake.NewClientBuilder()
	for _, ns := range namespaces {
		nsObjs = append(nsObjs, ns.DeepCopy())
		reader = reader.WithObjects(ns.DeepCopy())
	}
	kube := kubefake.NewClientset(nsObjs...)
	kube.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: []string{"list", "delete"}},
			{Name: "serviceaccounts", Namespaced: true, Kind: "ServiceAccount", Verbs: []string{"list", "delete"}},
			{Name: "events", Namespaced: true, Kind: "Event", Verbs: []string{"list", "delete"}},
			{Name: "pods/log", Namespaced: true, Kind: "Pod", Verbs: []string{"get"}},
		}},
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Namespaced: true, Kind: "Deployment", Verbs: []string{"list", "delete"}},
		}},
	}
	scheme := metafake.NewTestScheme()
	for _, gvk := range []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "ServiceAccount"}, {Version: "v1", Kind: "Event"}, {Group: "apps", Version: "v1", Kind: "Deployment"}} {
		scheme.AddKnownTypeWithName(gvk, &metav1.PartialObjectMetadata{})
		scheme.AddKnownTypeWithName(gvk.GroupVersion().WithKind(gvk.Kind+"List"), &metav1.PartialObjectMetadataList{})
	}
	return &Agent{spoke: reader.Build(), spokeKube: kube, spokeMeta: metafake.NewSimpleMetadataClient(scheme, objects...)}, kube
}

// verbs returns the namespace actions of kube as "verb name".
func verbs(kube *kubefake.Clientset) []string {
	var out []string
	for _, a := range kube.Actions() {
		if a.GetResource().Resource != "namespaces" || a.GetVerb() == "list" || a.GetVerb() == "get" {
			continue
		}
		name := ""
		switch a := a.(type) {
		case k8stesting.DeleteAction:
			name = a.GetName()
		case k8stesting.PatchAction:
			name = a.GetName() + " " + string(a.GetPatch())
		case k8stesting.CreateAction:
			name = a.GetObject().(*corev1.Namespace).Name
		}
		out = append(out, a.GetVerb()+" "+name)
	}
	return out
}

func TestReleaseNamespaces(t *testing.T) {
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	sa := schema.GroupVersionKind{Version: "v1", Kind: "ServiceAccount"}
	ev := schema.GroupVersionKind{Version: "v1", Kind: "Event"}
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	amw := metav1.OwnerReference{APIVersion: workv1.GroupVersion.String(), Kind: "AppliedManifestWork", Name: "hubhash-web", UID: "u"}
	tests := []struct {
		name         string
		namespaces   []*corev1.Namespace
		objects      []runtime.Object
		wanted       []string
		wantActions  []string
		wantRetained []string
	}{
		{
			name:        "a namespace still asked for is left alone",
			namespaces:  []*corev1.Namespace{namespace("team-a", "true")},
			wanted:      []string{"team-a"},
			wantActions: nil,
		},
		{
			name:       "an empty namespace, or holding only generated objects and those a work owns, is deleted",
			namespaces: []*corev1.Namespace{namespace("team-a", "true")},
			objects: []runtime.Object{
				object(cm, "team-a", "kube-root-ca.crt"), object(sa, "team-a", "default"), object(ev, "team-a", "x.1"),
				object(deploy, "team-a", "web", amw), object(cm, "team-a", "from-work", amw),
			},
			wantActions: []string{"delete team-a"},
		},
		{
			name:       "a namespace holding an object no work owns is kept, labeled false, noted",
			namespaces: []*corev1.Namespace{namespace("team-a", "true")},
			objects:    []runtime.Object{object(cm, "team-a", "mine"), object(deploy, "team-a", "web", amw), object(cm, "other", "elsewhere")},
			wantActions: []string{`patch team-a {"metadata":{"annotations":{"kubectl-ocm.io/retained-objects":"1 object(s) no ManifestWork owns: configmaps/mine"},"labels":{"` +
				testKey + `":"false"}}}`},
			wantRetained: []string{"team-a: 1 object(s) no ManifestWork owns: configmaps/mine"},
		},
		{
			name:         "a namespace kept before stays kept and reported",
			namespaces:   []*corev1.Namespace{namespace("team-a", "false")},
			wantRetained: []string{"team-a: "},
		},
		{
			name:        "a namespace a work owns itself loses the label",
			namespaces:  []*corev1.Namespace{namespace("team-a", "true", amw)},
			wantActions: []string{`patch team-a {"metadata":{"labels":{"` + testKey + `":null}}}`},
		},
		{
			name:       "namespaces without the label are not touched",
			namespaces: []*corev1.Namespace{namespace("kube-system", "")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, kube := testAgent(t, tt.namespaces, tt.objects...)
			wanted := map[string]error{}
			for _, n := range tt.wanted {
				wanted[n] = nil
			}
			retained, err := a.releaseNamespaces(context.Background(), testKey, wanted)
			if err != nil {
				t.Fatal(err)
			}
			if got := verbs(kube); !slices.Equal(got, tt.wantActions) {
				t.Errorf("actions = %q\nwant %q", got, tt.wantActions)
			}
			var got []string
			for _, r := range retained {
				got = append(got, r.name+": "+r.why)
			}
			if !slices.Equal(got, tt.wantRetained) {
				t.Errorf("retained = %q, want %q", got, tt.wantRetained)
			}
		})
	}
}

func TestDescribeObjects(t *testing.T) {
	got := describeObjects([]string{"g", "f", "e", "d", "c", "b", "a"})
	if want := "7 object(s) no ManifestWork owns: a, b, c, d, e and 2 more"; got != want {
		t.Errorf("describeObjects = %q, want %q", got, want)
	}
}

func TestSetRetainedCondition(t *testing.T) {
	mc := &clusterv1.ManagedCluster{}
	setRetainedCondition(mc, testKey, nil)
	if len(mc.Status.Conditions) != 0 {
		t.Fatalf("a cluster that never kept a namespace got %+v", mc.Status.Conditions)
	}
	setRetainedCondition(mc, testKey, []retainedNamespace{{name: "team-a", why: "1 object(s) no ManifestWork owns: configmaps/mine"}})
	c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionManagedNamespacesRetained)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != clusterv1.ReasonManagedNamespaceNotEmpty ||
		!strings.Contains(c.Message, "team-a (1 object(s) no ManifestWork owns: configmaps/mine)") || !strings.Contains(c.Message, testKey) {
		t.Fatalf("condition = %+v, want True naming team-a, its object and the label", c)
	}
	setRetainedCondition(mc, testKey, nil)
	c = meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionManagedNamespacesRetained)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != clusterv1.ReasonNoManagedNamespaceRetained {
		t.Fatalf("condition = %+v, want False once none is kept", c)
	}
}

// TestReleaseNamespacesUnlistable keeps a namespace whose objects of some
// kind cannot be listed, and says so.
func TestReleaseNamespacesUnlistable(t *testing.T) {
	a, kube := testAgent(t, []*corev1.Namespace{namespace("team-a", "true")})
	a.spokeMeta.(*metafake.FakeMetadataClient).PrependReactor("list", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "", errors.New("no"))
	})
	retained, err := a.releaseNamespaces(context.Background(), testKey, map[string]error{})
	if err == nil || len(retained) != 1 || !strings.Contains(retained[0].why, "could not be checked") {
		t.Fatalf("retained %+v, error %v; want team-a kept as not checked, and the error", retained, err)
	}
	if got := verbs(kube); len(got) != 0 {
		t.Errorf("actions = %q, want none", got)
	}
}
