package agent

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	metadatafake "k8s.io/client-go/metadata/fake"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

func TestResourceWatcher(t *testing.T) {
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets := schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	meta := metadatafake.NewSimpleMetadataClient(metadatafake.NewTestScheme())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var got []string
	w := newResourceWatcher(ctx, logr.Discard(), meta, "hub", func(work string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, work)
	})
	enqueued := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(got)
		got = nil
		slices.Sort(out)
		return slices.Compact(out)
	}
	owner := func(amw string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: workv1.GroupVersion.String(), Kind: "AppliedManifestWork", Name: amw, UID: "u"}}
	}
	cm := func(name string, refs []metav1.OwnerReference) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetNamespace("default")
		u.SetName(name)
		u.SetOwnerReferences(refs)
		return u
	}
	res := func(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, st workv1.UpdateStrategyType) apply.Result {
		return apply.Result{GVR: gvr, Meta: workv1.ManifestResourceMeta{Name: obj.GetName(), Namespace: "default"}, Object: obj, Strategy: st}
	}
	ri := meta.Resource(cms).Namespace("default").(metadatafake.MetadataClient)
	// partial is obj as the API server sends it to a metadata informer.
	partial := func(obj *unstructured.Unstructured) *metav1.PartialObjectMetadata {
		p := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}}
		p.Namespace, p.Name, p.OwnerReferences, p.Labels = obj.GetNamespace(), obj.GetName(), obj.GetOwnerReferences(), obj.GetLabels()
		return p
	}

	owned := cm("owned", owner("hub-w1"))
	readOnly := cm("ro", nil)
	w.Track("w1", []apply.Result{res(cms, owned, workv1.UpdateStrategyTypeUpdate)})
	w.Track("w2", []apply.Result{res(cms, readOnly, workv1.UpdateStrategyTypeReadOnly), res(secrets, cm("s", nil), workv1.UpdateStrategyTypeReadOnly)})
	if n := w.Watching(); n != 2 {
		t.Fatalf("informers = %d, want 2", n)
	}
	// Let the informers list (nothing yet) and start watching.
	if err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return w.HasSynced(), nil
	}); err != nil {
		t.Fatal("informers did not sync")
	}

	for _, obj := range []*unstructured.Unstructured{owned, readOnly, cm("other", nil), cm("foreign", owner("otherhub-w9"))} {
		if _, err := ri.CreateFake(partial(obj), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(want []string) {
		t.Helper()
		var all []string
		err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
			all = append(all, enqueued()...)
			slices.Sort(all)
			all = slices.Compact(all)
			return slices.Equal(all, want), nil
		})
		if err != nil {
			t.Fatalf("enqueued %v, want %v", all, want)
		}
	}
	waitFor([]string{"w1", "w2"})

	// The agent's own write is not news.
	owned.SetLabels(map[string]string{"x": "y"})
	updated, err := ri.UpdateFake(partial(owned), metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned.SetResourceVersion(updated.ResourceVersion)
	r := res(cms, owned, workv1.UpdateStrategyTypeUpdate)
	r.Change = apply.ChangeUpdated
	w.Track("w1", []apply.Result{r})
	// ...but someone else's delete is.
	if err := ri.Delete(ctx, "owned", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor([]string{"w1"})

	// Informers stop with their last work.
	w.Forget("w2")
	if n := w.Watching(); n != 1 {
		t.Errorf("informers after w2 left = %d, want 1", n)
	}
	w.Track("w1", nil)
	if n := w.Watching(); n != 0 {
		t.Errorf("informers after w1 applied nothing = %d, want 0", n)
	}
}
