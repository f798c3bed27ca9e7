package written

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func cm(name, rv string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: rv}}
}

// view is a cache's view: by name, the cached objects.
type view map[string]*corev1.ConfigMap

// overlay runs Overlay of group g on v and returns what it set.
func overlay(w *Writes[*corev1.ConfigMap], g string, v view) map[string]string {
	set := map[string]string{}
	w.Overlay(g, func(key types.NamespacedName) *corev1.ConfigMap { return v[key.Name] },
		func(key types.NamespacedName, obj *corev1.ConfigMap) { set[key.Name] = obj.ResourceVersion })
	return set
}

func TestWrites(t *testing.T) {
	now := time.Unix(1000, 0)
	w := &Writes[*corev1.ConfigMap]{Now: func() time.Time { return now }}

	w.Record("g", "", cm("created", "5"))
	w.Record("g", "3", cm("updated", "6"))
	w.Record("other", "", cm("elsewhere", "7"))
	assert.Equal(t, 3, w.Len())

	// The cache shows neither write: both stand in; the other group is not
	// touched.
	assert.Equal(t, map[string]string{"created": "5", "updated": "6"}, overlay(w, "g", view{"updated": cm("updated", "3")}))
	assert.Equal(t, 3, w.Len(), "writes the cache does not show are kept")

	// A create the cache shows, and an update it moved past (another
	// writer's version after the controller's): the cache is right.
	assert.Empty(t, overlay(w, "g", view{"created": cm("created", "5"), "updated": cm("updated", "9")}))
	assert.Equal(t, 1, w.Len(), "writes the cache shows are forgotten")

	// An update whose object the cache no longer has (deleted): forgotten.
	w.Record("g", "3", cm("updated", "6"))
	assert.Empty(t, overlay(w, "g", view{}))

	// A create the cache never shows (deleted behind the controller's
	// back) stands in for TTL, then is forgotten.
	w.Record("g", "", cm("created", "5"))
	now = now.Add(DefaultTTL - time.Second)
	assert.Equal(t, map[string]string{"created": "5"}, overlay(w, "g", view{}))
	now = now.Add(time.Second)
	assert.Empty(t, overlay(w, "g", view{}))

	// A create over a cached object of the same name (the cache shows an
	// older object, being deleted): the cache is right.
	w.Record("g", "", cm("created", "5"))
	assert.Empty(t, overlay(w, "g", view{"created": cm("created", "2")}))

	// A chain: a create, then its status, then an update. The last
	// object stands in while the cache shows nothing, the created version
	// or the status's; a version the chain did not write ends it.
	before := w.Len()
	w.Record("g", "", cm("chain", "10"))
	w.Record("g", "10", cm("chain", "11"))
	w.Record("g", "11", cm("chain", "12"))
	assert.Equal(t, before+1, w.Len(), "one write per key")
	for _, cached := range []view{{}, {"chain": cm("chain", "10")}, {"chain": cm("chain", "11")}} {
		assert.Equal(t, map[string]string{"chain": "12"}, overlay(w, "g", cached))
	}
	assert.Empty(t, overlay(w, "g", view{"chain": cm("chain", "12")}), "the chain's last version")
	w.Record("g", "", cm("chain", "10"))
	w.Record("g", "10", cm("chain", "11"))
	assert.Empty(t, overlay(w, "g", view{"chain": cm("chain", "13")}), "another writer's version")
	// A write that changed nothing (the version kept) adds nothing.
	w.Record("g", "", cm("chain", "30"))
	w.Record("g", "30", cm("chain", "30"))
	assert.Equal(t, map[string]string{"chain": "30"}, overlay(w, "g", view{}))
	assert.Empty(t, overlay(w, "g", view{"chain": cm("chain", "30")}))
	w.Record("g", "31", cm("chain", "31"))
	assert.Equal(t, before, w.Len(), "a write that changed nothing is not remembered")
	// A write over a version the last write did not make starts a chain
	// of its own.
	w.Record("g", "", cm("chain", "20"))
	w.Record("g", "25", cm("chain", "26"))
	assert.Empty(t, overlay(w, "g", view{"chain": cm("chain", "20")}))

	// Forget and ForgetGroup.
	w.Record("g", "", cm("a", "1"))
	w.Forget("g", types.NamespacedName{Namespace: "ns", Name: "a"})
	assert.Empty(t, overlay(w, "g", view{}))
	w.ForgetGroup("other")
	assert.Zero(t, w.Len())
}
