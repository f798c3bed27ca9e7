package apply

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// manifestOf builds a decoded manifest of kind with the given ordinal.
func manifestOf(ordinal int32, kind string) *Manifest {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind(kind)
	u.SetName("x")
	return &Manifest{Ordinal: ordinal, Object: u}
}

func TestSortManifests(t *testing.T) {
	in := []*Manifest{
		manifestOf(0, "Deployment"),
		manifestOf(1, "Widget"),
		{Ordinal: 2, Err: apierrors.NewBadRequest("bad")},
		manifestOf(3, "ConfigMap"),
		manifestOf(4, "Namespace"),
		manifestOf(5, "ValidatingWebhookConfiguration"),
		manifestOf(6, "Service"),
		manifestOf(7, "CustomResourceDefinition"),
		manifestOf(8, "ServiceAccount"),
		manifestOf(9, "Role"),
		manifestOf(10, "Secret"),
	}
	want := []int32{4, 7, 9, 8, 3, 10, 6, 0, 5, 1, 2}
	got := SortManifests(in)
	for i := range want {
		if got[i].Ordinal != want[i] {
			t.Fatalf("order = %v, want %v", ordinals(got), want)
		}
	}
	if in[0].Ordinal != 0 {
		t.Error("SortManifests reordered its input")
	}
}

func ordinals(ms []*Manifest) []int32 {
	out := make([]int32, len(ms))
	for i, m := range ms {
		out[i] = m.Ordinal
	}
	return out
}

func TestKindRank(t *testing.T) {
	tests := []struct {
		kind string
		want int
	}{
		{"PriorityClass", 0}, {"PersistentVolume", 0}, {"ClusterRoleBinding", 1}, {"LimitRange", 2},
		{"PersistentVolumeClaim", 3}, {"Service", 4}, {"CronJob", 5}, {"APIService", 6},
		{"ValidatingAdmissionPolicyBinding", 6}, {"Widget", UnknownKindRank},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			if got := KindRank(tt.kind); got != tt.want {
				t.Errorf("KindRank(%s) = %d, want %d", tt.kind, got, tt.want)
			}
		})
	}
}

func TestOwnedByTheWork(t *testing.T) {
	id := workv1.ResourceIdentifier{Resource: "configmaps", Namespace: "default", Name: "a"}
	selective := func(rules ...workv1.OrphaningRule) *workv1.DeleteOption {
		return &workv1.DeleteOption{
			PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
			SelectivelyOrphan: &workv1.SelectivelyOrphan{OrphaningRules: rules},
		}
	}
	tests := []struct {
		name string
		opt  *workv1.DeleteOption
		want bool
	}{
		{name: "no delete option", want: true},
		{name: "empty policy", opt: &workv1.DeleteOption{}, want: true},
		{name: "Foreground", opt: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeForeground}, want: true},
		{name: "Orphan", opt: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan}, want: false},
		{name: "SelectivelyOrphan listed", opt: selective(workv1.OrphaningRule(id)), want: false},
		{name: "SelectivelyOrphan other name", opt: selective(workv1.OrphaningRule{Resource: "configmaps", Namespace: "default", Name: "b"}), want: true},
		{name: "SelectivelyOrphan other group", opt: selective(workv1.OrphaningRule{Group: "x.io", Resource: "configmaps", Namespace: "default", Name: "a"}), want: true},
		{name: "SelectivelyOrphan without rules", opt: &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OwnedByTheWork(id, tt.opt); got != tt.want {
				t.Errorf("OwnedByTheWork = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWithOwner(t *testing.T) {
	ours := metav1.OwnerReference{Name: "amw", UID: "u1"}
	other := metav1.OwnerReference{Name: "other", UID: "u2"}
	tests := []struct {
		name        string
		refs        []metav1.OwnerReference
		owned       bool
		wantUIDs    []types.UID
		wantChanged bool
	}{
		{name: "add to none", owned: true, wantUIDs: []types.UID{"u1"}, wantChanged: true},
		{name: "add keeps others", refs: []metav1.OwnerReference{other}, owned: true, wantUIDs: []types.UID{"u2", "u1"}, wantChanged: true},
		{name: "already owned", refs: []metav1.OwnerReference{ours}, owned: true, wantUIDs: []types.UID{"u1"}},
		{name: "orphan removes ours only", refs: []metav1.OwnerReference{other, ours}, wantUIDs: []types.UID{"u2"}, wantChanged: true},
		{name: "orphan without ours", refs: []metav1.OwnerReference{other}, wantUIDs: []types.UID{"u2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := withOwner(tt.refs, ours, tt.owned)
			if changed != tt.wantChanged || len(got) != len(tt.wantUIDs) {
				t.Fatalf("withOwner = %v, %v; want UIDs %v, changed %v", got, changed, tt.wantUIDs, tt.wantChanged)
			}
			for i := range got {
				if got[i].UID != tt.wantUIDs[i] {
					t.Errorf("refs = %v, want UIDs %v", got, tt.wantUIDs)
				}
			}
		})
	}
}

func TestIsSubset(t *testing.T) {
	tests := []struct {
		name      string
		want, got any
		same      bool
	}{
		{name: "equal scalars", want: "a", got: "a", same: true},
		{name: "int and float", want: int64(3), got: float64(3), same: true},
		{name: "different scalars", want: "a", got: "b"},
		{name: "defaulted extra key", want: map[string]any{"a": "1"}, got: map[string]any{"a": "1", "b": "2"}, same: true},
		{name: "missing key", want: map[string]any{"a": "1"}, got: map[string]any{}},
		{name: "list same length", want: []any{map[string]any{"n": "x"}}, got: []any{map[string]any{"n": "x", "d": true}}, same: true},
		{name: "list element removed", want: []any{"a"}, got: []any{"a", "b"}},
		{name: "empty map and absent", want: map[string]any{}, got: nil, same: true},
		{name: "nil and value", want: nil, got: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isSubset(tt.want, tt.got); got != tt.same {
				t.Errorf("isSubset = %v, want %v", got, tt.same)
			}
		})
	}
}

// configMapManifest returns a ConfigMap manifest with data a=value.
func configMapManifest(value string) *Manifest {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm", "namespace": "ns", "labels": map[string]any{"hub": "yes"}},
		"data":     map[string]any{"a": value},
	}}
	return &Manifest{Object: u}
}

// fakeApplier returns an Applier over a fake dynamic client that knows
// ConfigMaps, holding objs.
func fakeApplier(objs ...runtime.Object) (*Applier, *dynamicfake.FakeDynamicClient) {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gvr: "ConfigMapList"}, objs...)
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	return &Applier{dyn: dyn, mapper: m}, dyn
}

// writes counts the create, update and patch actions of a fake client.
func writes(dyn *dynamicfake.FakeDynamicClient) int {
	n := 0
	for _, a := range dyn.Actions() {
		switch a.(type) {
		case k8stesting.CreateAction, k8stesting.UpdateAction, k8stesting.PatchAction:
			n++
		}
	}
	return n
}

func TestApplyUpdate(t *testing.T) {
	ctx := context.Background()
	owner := metav1.OwnerReference{APIVersion: "work.open-cluster-management.io/v1", Kind: "AppliedManifestWork", Name: "amw", UID: "u1"}
	a, dyn := fakeApplier()
	req := Request{Manifest: configMapManifest("1"), Owner: owner}

	res := a.Apply(ctx, req)
	if res.Err != nil || res.GVR.Resource != "configmaps" || res.Meta.Namespace != "ns" {
		t.Fatalf("create: %+v", res)
	}
	if !IsOwnedBy(res.Object.GetOwnerReferences(), "u1") || res.Object.GetAnnotations()[hashAnnotation] == "" {
		t.Errorf("created object metadata = %+v", res.Object.Object["metadata"])
	}

	// Someone on the managed cluster adds a label: kept, and nothing to write.
	live := res.Object.DeepCopy()
	live.SetLabels(map[string]string{"hub": "yes", "spoke": "keep"})
	if _, err := dyn.Resource(res.GVR).Namespace("ns").Update(ctx, live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	dyn.ClearActions()
	req.Manifest = configMapManifest("1")
	if res = a.Apply(ctx, req); res.Err != nil || writes(dyn) != 0 {
		t.Errorf("unchanged manifest: err %v, %d writes", res.Err, writes(dyn))
	}

	req.Manifest = configMapManifest("2")
	res = a.Apply(ctx, req)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	data, _, _ := unstructured.NestedString(res.Object.Object, "data", "a")
	if data != "2" || res.Object.GetLabels()["spoke"] != "keep" {
		t.Errorf("updated object = %+v", res.Object.Object)
	}
}

func TestApplyCreateOnlyAndReadOnly(t *testing.T) {
	ctx := context.Background()
	existing := configMapManifest("spoke").Object
	existing.SetLabels(nil)
	a, dyn := fakeApplier(existing)
	owner := metav1.OwnerReference{Name: "amw", UID: "u1"}

	ro := a.Apply(ctx, Request{Manifest: configMapManifest("hub"), Owner: owner, Decide: func(workv1.ManifestResourceMeta) Decision {
		return Decision{Strategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeReadOnly}, Owned: true}
	}})
	if ro.Err != nil || writes(dyn) != 0 || ro.Strategy != workv1.UpdateStrategyTypeReadOnly {
		t.Errorf("ReadOnly: err %v, %d writes", ro.Err, writes(dyn))
	}

	co := a.Apply(ctx, Request{Manifest: configMapManifest("hub"), Owner: owner, Decide: func(workv1.ManifestResourceMeta) Decision {
		return Decision{Strategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyTypeCreateOnly}, Owned: true}
	}})
	if co.Err != nil {
		t.Fatal(co.Err)
	}
	data, _, _ := unstructured.NestedString(co.Object.Object, "data", "a")
	if data != "spoke" || !IsOwnedBy(co.Object.GetOwnerReferences(), "u1") {
		t.Errorf("CreateOnly changed the object or did not own it: %+v", co.Object.Object)
	}
}

func TestApplyReportsFailures(t *testing.T) {
	ctx := context.Background()
	a, _ := fakeApplier()
	unknown := manifestOf(3, "Widget")
	res := a.Apply(ctx, Request{Manifest: unknown})
	if !res.IsNoMatch() || res.Meta.Ordinal != 3 || res.Meta.Kind != "Widget" || res.GVR.Resource != "" {
		t.Errorf("unknown kind: %+v", res)
	}
	bad := &Manifest{Ordinal: 1, Err: apierrors.NewBadRequest("decode")}
	if res := a.Apply(ctx, Request{Manifest: bad}); res.Err == nil || res.Meta.Ordinal != 1 {
		t.Errorf("undecodable manifest: %+v", res)
	}
}

func TestRemove(t *testing.T) {
	ctx := context.Background()
	owned := func(name string, uids ...types.UID) *unstructured.Unstructured {
		u := configMapManifest("1").Object
		u.SetName(name)
		u.SetUID(types.UID("uid-" + name))
		var refs []metav1.OwnerReference
		for _, uid := range uids {
			refs = append(refs, metav1.OwnerReference{Name: string(uid), UID: uid})
		}
		u.SetOwnerReferences(refs)
		return u
	}
	a, dyn := fakeApplier(owned("only", "u1"))
	a2, dyn2 := fakeApplier(owned("shared", "u1", "u2"), owned("foreign", "u2"))

	res := func(name, uid string) workv1.AppliedManifestResourceMeta {
		return workv1.AppliedManifestResourceMeta{
			ResourceIdentifier: workv1.ResourceIdentifier{Resource: "configmaps", Namespace: "ns", Name: name},
			Version:            "v1", UID: uid,
		}
	}
	tests := []struct {
		name     string
		applier  *Applier
		res      workv1.AppliedManifestResourceMeta
		wantGone bool
	}{
		{name: "only owner deletes", applier: a, res: res("only", "uid-only"), wantGone: true},
		{name: "missing object", applier: a, res: res("nothing", ""), wantGone: true},
		{name: "replaced object", applier: a2, res: res("shared", "other-uid"), wantGone: true},
		{name: "shared owner drops its reference", applier: a2, res: res("shared", "uid-shared"), wantGone: true},
		{name: "not owned is left alone", applier: a2, res: res("foreign", "uid-foreign"), wantGone: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gone, err := tt.applier.Remove(ctx, tt.res, "u1")
			if err != nil || gone != tt.wantGone {
				t.Errorf("Remove = %v, %v; want %v", gone, err, tt.wantGone)
			}
		})
	}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	if _, err := dyn.Resource(gvr).Namespace("ns").Get(ctx, "only", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("solely owned object not deleted: %v", err)
	}
	shared, err := dyn2.Resource(gvr).Namespace("ns").Get(ctx, "shared", metav1.GetOptions{})
	if err != nil || IsOwnedBy(shared.GetOwnerReferences(), "u1") || !IsOwnedBy(shared.GetOwnerReferences(), "u2") {
		t.Errorf("shared object: %v, owners %v", err, shared.GetOwnerReferences())
	}
	if _, err := dyn2.Resource(gvr).Namespace("ns").Get(ctx, "foreign", metav1.GetOptions{}); err != nil {
		t.Errorf("foreign object: %v", err)
	}
}

func TestVerbs(t *testing.T) {
	tests := []struct {
		strategy workv1.UpdateStrategyType
		exists   bool
		want     string
	}{
		{workv1.UpdateStrategyTypeUpdate, false, "get,create"},
		{workv1.UpdateStrategyTypeUpdate, true, "get,update"},
		{workv1.UpdateStrategyTypeCreateOnly, false, "get,create"},
		{workv1.UpdateStrategyTypeCreateOnly, true, "get,patch"},
		{workv1.UpdateStrategyTypeServerSideApply, false, "get,create,patch"},
		{workv1.UpdateStrategyTypeServerSideApply, true, "get,patch"},
		{workv1.UpdateStrategyTypeReadOnly, false, "get"},
		{workv1.UpdateStrategyTypeReadOnly, true, "get"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s exists=%v", tt.strategy, tt.exists), func(t *testing.T) {
			if got := strings.Join(Verbs(tt.strategy, tt.exists), ","); got != tt.want {
				t.Errorf("Verbs = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestApplyAuthorize(t *testing.T) {
	ctx := context.Background()
	denied := errors.New("denied")
	tests := []struct {
		name      string
		existing  bool
		deny      string
		wantVerbs string
		wantErr   bool
	}{
		{name: "create allowed", wantVerbs: "get,create"},
		{name: "create denied", deny: "create", wantVerbs: "get,create", wantErr: true},
		{name: "update denied", existing: true, deny: "update", wantVerbs: "get,update", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var objs []runtime.Object
			if tt.existing {
				objs = append(objs, configMapManifest("old").Object)
			}
			a, dyn := fakeApplier(objs...)
			var asked string
			res := a.Apply(ctx, Request{Manifest: configMapManifest("new"), Authorize: func(_ context.Context, acc Access) error {
				m, verbs := acc.Meta, acc.Verbs
				if acc.Required.GetName() != "cm" || (acc.Existing != nil) != tt.existing || !acc.WritesContent() {
					t.Errorf("Authorize access: required %s, existing %v", acc.Required.GetName(), acc.Existing != nil)
				}
				asked = strings.Join(verbs, ",")
				if m.Resource != "configmaps" || m.Namespace != "ns" || m.Name != "cm" {
					t.Errorf("Authorize meta = %+v", m)
				}
				if slices.Contains(verbs, tt.deny) {
					return denied
				}
				return nil
			}})
			if asked != tt.wantVerbs {
				t.Errorf("verbs = %s, want %s", asked, tt.wantVerbs)
			}
			if tt.wantErr != errors.Is(res.Err, denied) || (tt.wantErr && writes(dyn) != 0) {
				t.Errorf("err %v, %d writes", res.Err, writes(dyn))
			}
			if !tt.wantErr && (res.Err != nil || res.Object == nil) {
				t.Errorf("allowed apply: %+v", res)
			}
		})
	}
}

// A manifest the work has not applied before is created without a read; one
// whose object exists already is then read and applied as usual, and an
// Authorize request always reads first.
func TestApplyNewCreatesFirst(t *testing.T) {
	ctx := context.Background()
	owner := metav1.OwnerReference{Name: "amw", UID: "u1"}
	isNew := func(workv1.ManifestResourceMeta) Decision { return Decision{Owned: true, New: true} }
	verbs := func(dyn *dynamicfake.FakeDynamicClient) []string {
		var out []string
		for _, a := range dyn.Actions() {
			out = append(out, a.GetVerb())
		}
		return out
	}

	a, dyn := fakeApplier()
	res := a.Apply(ctx, Request{Manifest: configMapManifest("1"), Owner: owner, Decide: isNew})
	if res.Err != nil || res.Change != ChangeCreated || res.Before != nil {
		t.Fatalf("new object: %+v", res)
	}
	if got := verbs(dyn); len(got) != 1 || got[0] != "create" {
		t.Errorf("new object: requests %v, want one create", got)
	}
	if res.Object.GetAnnotations()[hashAnnotation] == "" || !IsOwnedBy(res.Object.GetOwnerReferences(), "u1") {
		t.Errorf("created object metadata = %+v", res.Object.Object["metadata"])
	}

	existing := configMapManifest("spoke").Object
	existing.SetLabels(map[string]string{"spoke": "keep"})
	a, dyn = fakeApplier(existing)
	res = a.Apply(ctx, Request{Manifest: configMapManifest("hub"), Owner: owner, Decide: isNew})
	if res.Err != nil || res.Before == nil {
		t.Fatalf("existing object: %+v", res)
	}
	data, _, _ := unstructured.NestedString(res.Object.Object, "data", "a")
	if data != "hub" || res.Object.GetLabels()["spoke"] != "keep" || res.Object.GetLabels()["hub"] != "yes" {
		t.Errorf("existing object after apply = %+v", res.Object.Object)
	}
	if got := verbs(dyn); len(got) != 3 || got[0] != "create" || got[1] != "get" || got[2] != "update" {
		t.Errorf("existing object: requests %v, want create, get, update", got)
	}

	a, dyn = fakeApplier()
	var asked []string
	res = a.Apply(ctx, Request{Manifest: configMapManifest("1"), Owner: owner, Decide: isNew,
		Authorize: func(_ context.Context, acc Access) error { asked = acc.Verbs; return nil }})
	if res.Err != nil || len(asked) != 2 || asked[1] != "create" {
		t.Fatalf("authorized new object: %+v, asked %v", res, asked)
	}
	if got := verbs(dyn); len(got) != 2 || got[0] != "get" || got[1] != "create" {
		t.Errorf("authorized new object: requests %v, want get, create", got)
	}
}
