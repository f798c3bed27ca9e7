package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// Whether a managed namespace may be deleted depends on every object it
// holds, of any kind.
// +kubebuilder:rbac:groups="*",resources="*",verbs=list

// generatedObjects are the objects Kubernetes itself creates in every
// namespace, or derives from others, which never keep a namespace: by
// resource (group/resource, "" group for the core API), the names, or every
// object when empty.
var generatedObjects = map[schema.GroupResource][]string{
	{Resource: "configmaps"}:                                {"kube-root-ca.crt"},
	{Resource: "serviceaccounts"}:                           {"default"},
	{Resource: "events"}:                                    nil,
	{Group: "events.k8s.io", Resource: "events"}:            nil,
	{Resource: "endpoints"}:                                 nil,
	{Group: "discovery.k8s.io", Resource: "endpointslices"}: nil,
}

// unownedObjects returns the objects of namespace ns that no ManifestWork
// owns, as resource[.group]/name: those without any owner reference (an
// object with one, to an AppliedManifestWork or to anything else, goes with
// its owner), not being deleted, and not among generatedObjects. It fails
// when a kind of object cannot be listed: the namespace is then kept.
func (a *Agent) unownedObjects(ctx context.Context, ns string) ([]string, error) {
	lists, err := discovery.ServerPreferredNamespacedResources(a.spokeKube.Discovery())
	if err != nil {
		return nil, fmt.Errorf("discover the kinds of objects of namespace %s: %w", ns, err)
	}
	var out []string
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "delete") {
				continue
			}
			gr := schema.GroupResource{Group: gv.Group, Resource: r.Name}
			skip, generated := generatedObjects[gr]
			if generated && len(skip) == 0 {
				continue
			}
			items, err := a.spokeMeta.Resource(gv.WithResource(r.Name)).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return nil, fmt.Errorf("list the %s of namespace %s: %w", gr, ns, err)
			}
			for i := range items.Items {
				o := &items.Items[i]
				if o.DeletionTimestamp != nil || len(o.OwnerReferences) > 0 || slices.Contains(skip, o.Name) {
					continue
				}
				out = append(out, gr.String()+"/"+o.Name)
			}
		}
	}
	return out, nil
}

// ownedByWork reports whether an AppliedManifestWork owns obj: a
// ManifestWork manages it.
func ownedByWork(obj metav1.Object) bool {
	return slices.ContainsFunc(obj.GetOwnerReferences(), func(ref metav1.OwnerReference) bool {
		return ref.Kind == "AppliedManifestWork" && ref.APIVersion == workv1.GroupVersion.String()
	})
}
