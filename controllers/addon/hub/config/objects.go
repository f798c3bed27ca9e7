package config

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/internal/lookup"
	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
)

// object is what reading one configuration object gave.
type object struct {
	// hash is the spec hash; empty when the object could not be read.
	hash string
	// generation is the object's metadata.generation.
	generation int64
	// problem says why the object could not be read, naming the fix.
	problem string
	// unwatched reports a problem no watch reports the end of (the kind is
	// not served, or the hub controller may not read it): the object is read
	// again after a while.
	unwatched bool
}

// reader reads configuration objects: AddOnDeploymentConfigs and
// AddOnTemplates from the cache, at the versions OCM hashes them
// (addonconfig.HashedVersion), other kinds from the API server, each once
// per reconcile and unstructured, as served.
type reader struct {
	// cache reads the built-in kinds.
	cache client.Reader
	// live reads the other kinds.
	live client.Reader
	// mapper maps a configuration's group and resource to its kind.
	mapper meta.RESTMapper
	// watch starts watching the kind gvk, resource gr, when not yet watched.
	watch func(gvk schema.GroupVersionKind, gr addonv1alpha1.ConfigGroupResource)
	// read holds what was read in this reconcile.
	read map[addonconfig.Key]object
}

// get reads the configuration key. Only unexpected API errors are
// returned; a kind the hub does not serve, a missing object or one the hub
// controller may not read is a problem of the object.
func (r *reader) get(ctx context.Context, key addonconfig.Key) (object, error) {
	if o, ok := r.read[key]; ok {
		return o, nil
	}
	o, err := r.fetch(ctx, key)
	if err != nil {
		return object{}, err
	}
	if r.read == nil {
		r.read = map[addonconfig.Key]object{}
	}
	r.read[key] = o
	return o, nil
}

// fetch reads key from the cache or the API server.
func (r *reader) fetch(ctx context.Context, key addonconfig.Key) (object, error) {
	objKey := client.ObjectKey{Namespace: key.Namespace, Name: key.Name}
	if gvk, ok := addonconfig.HashedVersion(key.ConfigGroupResource); ok {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := r.cache.Get(ctx, objKey, u); err != nil {
			return problemOf(key, err)
		}
		hash, err := addonconfig.SpecHash(u)
		return object{hash: hash, generation: u.GetGeneration()}, err
	}
	gvk, err := r.mapper.KindFor(schema.GroupVersionResource{Group: key.Group, Resource: key.Resource})
	if err != nil {
		if meta.IsNoMatchError(err) {
			return object{problem: fmt.Sprintf("the hub serves no configuration kind %s: install its CustomResourceDefinition",
				lookup.KindName(key.ConfigGroupResource)), unwatched: true}, nil
		}
		return object{}, fmt.Errorf("map configuration kind %s: %w", lookup.KindName(key.ConfigGroupResource), err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err = r.live.Get(ctx, objKey, u)
	if err == nil || apierrors.IsNotFound(err) {
		r.watch(gvk, key.ConfigGroupResource)
	}
	if err != nil {
		return problemOf(key, err)
	}
	hash, err := addonconfig.SpecHash(u)
	return object{hash: hash, generation: u.GetGeneration()}, err
}

// problemOf turns the error of reading key into the problem it reports,
// or returns it when it is not one the user can fix.
func problemOf(key addonconfig.Key, err error) (object, error) {
	kind := lookup.KindName(key.ConfigGroupResource)
	switch {
	case apierrors.IsNotFound(err):
		return object{problem: fmt.Sprintf("%s %s not found", kind, referent(key.ConfigReferent))}, nil
	case apierrors.IsForbidden(err):
		return object{problem: fmt.Sprintf("the hub controller may not read %s %s: grant its ServiceAccount get, list and watch on %s",
			kind, referent(key.ConfigReferent), kind), unwatched: true}, nil
	default:
		return object{}, fmt.Errorf("read %s %s: %w", kind, referent(key.ConfigReferent), err)
	}
}

// referent spells a configuration object as namespace/name, or name.
func referent(r addonv1alpha1.ConfigReferent) string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}
