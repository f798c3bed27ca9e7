package main

import (
	"cmp"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

const (
	testHubNamespace = "cluster1"
	testNamespace    = "addon-ns"
)

// configMap builds a ConfigMap namespace/name with data and labels given as
// alternating key, value pairs.
func configMap(namespace, name string, data map[string]string, labels ...string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-" + name)}, Data: data}
	for i := 0; i+1 < len(labels); i += 2 {
		if cm.Labels == nil {
			cm.Labels = map[string]string{}
		}
		cm.Labels[labels[i]] = labels[i+1]
	}
	return cm
}

// copyOf builds a copy in the install namespace made from testHubNamespace.
func copyOf(name string, data map[string]string) *corev1.ConfigMap {
	return configMap(testNamespace, name, data, sourceNamespaceLabel, testHubNamespace)
}

// lister returns a ConfigMap lister of namespace over objs.
func lister(t *testing.T, namespace string, objs ...*corev1.ConfigMap) corev1listers.ConfigMapNamespaceLister {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		require.NoError(t, indexer.Add(o))
	}
	return corev1listers.NewConfigMapLister(indexer).ConfigMaps(namespace)
}

func TestCopierSync(t *testing.T) {
	v1 := map[string]string{"value": "helloworld"}
	v2 := map[string]string{"value": "hello again", "more": "x"}
	tests := []struct {
		name string
		// configMap is the name synced; default "helloworld".
		configMap string
		// hub holds the sources; listed the copies the informer has seen;
		// managed the ConfigMaps the managed cluster's API holds.
		hub     []*corev1.ConfigMap
		listed  []*corev1.ConfigMap
		managed []*corev1.ConfigMap
		// want is the synced ConfigMap in the install namespace afterwards,
		// nil for none.
		want       *corev1.ConfigMap
		wantAction string
	}{
		{
			name:       "a new source is copied",
			hub:        []*corev1.ConfigMap{configMap(testHubNamespace, "helloworld", v1)},
			want:       copyOf("helloworld", v1),
			wantAction: actionCreated,
		},
		{
			name:       "a changed source updates its copy",
			hub:        []*corev1.ConfigMap{configMap(testHubNamespace, "helloworld", v2)},
			listed:     []*corev1.ConfigMap{copyOf("helloworld", v1)},
			managed:    []*corev1.ConfigMap{copyOf("helloworld", v1)},
			want:       copyOf("helloworld", v2),
			wantAction: actionUpdated,
		},
		{
			name:       "a current copy is left as it is",
			hub:        []*corev1.ConfigMap{configMap(testHubNamespace, "helloworld", v1)},
			listed:     []*corev1.ConfigMap{copyOf("helloworld", v1)},
			managed:    []*corev1.ConfigMap{copyOf("helloworld", v1)},
			want:       copyOf("helloworld", v1),
			wantAction: actionUnchanged,
		},
		{
			name:       "a copy whose source is gone is deleted",
			listed:     []*corev1.ConfigMap{copyOf("helloworld", v1)},
			managed:    []*corev1.ConfigMap{copyOf("helloworld", v1)},
			wantAction: actionDeleted,
		},
		{
			name:       "a copy already deleted is fine",
			listed:     []*corev1.ConfigMap{copyOf("helloworld", v1)},
			wantAction: actionDeleted,
		},
		{
			name:       "nothing on either side",
			wantAction: actionUnchanged,
		},
		{
			name:       "a ConfigMap that is not a copy is left alone",
			hub:        []*corev1.ConfigMap{configMap(testHubNamespace, "helloworld", v2)},
			managed:    []*corev1.ConfigMap{configMap(testNamespace, "helloworld", v1)},
			want:       configMap(testNamespace, "helloworld", v1),
			wantAction: actionSkipped,
		},
		{
			name:       "a copy from another hub namespace is left alone",
			hub:        []*corev1.ConfigMap{configMap(testHubNamespace, "helloworld", v2)},
			managed:    []*corev1.ConfigMap{configMap(testNamespace, "helloworld", v1, sourceNamespaceLabel, "cluster2")},
			want:       configMap(testNamespace, "helloworld", v1, sourceNamespaceLabel, "cluster2"),
			wantAction: actionSkipped,
		},
		{
			name:       "a copy not listed yet is updated, not created twice",
			hub:        []*corev1.ConfigMap{configMap(testHubNamespace, "helloworld", v2)},
			managed:    []*corev1.ConfigMap{copyOf("helloworld", v1)},
			want:       copyOf("helloworld", v2),
			wantAction: actionUpdated,
		},
		{
			name:       "the hub's root CA ConfigMap is never copied",
			configMap:  "kube-root-ca.crt",
			hub:        []*corev1.ConfigMap{configMap(testHubNamespace, "kube-root-ca.crt", map[string]string{"ca.crt": "hub CA"})},
			wantAction: actionIgnored,
		},
		{
			name: "binary data is copied, the source's labels are not",
			hub: []*corev1.ConfigMap{func() *corev1.ConfigMap {
				cm := configMap(testHubNamespace, "helloworld", v1, "team", "a")
				cm.BinaryData = map[string][]byte{"blob": {0, 1, 2}}
				return cm
			}()},
			want: func() *corev1.ConfigMap {
				cm := copyOf("helloworld", v1)
				cm.BinaryData = map[string][]byte{"blob": {0, 1, 2}}
				return cm
			}(),
			wantAction: actionCreated,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := make([]runtime.Object, 0, len(tt.managed))
			for _, o := range tt.managed {
				objs = append(objs, o)
			}
			managed := fake.NewClientset(objs...)
			c := &copier{
				sources: lister(t, testHubNamespace, tt.hub...), copies: lister(t, testNamespace, tt.listed...),
				managed: managed, hubNamespace: testHubNamespace, namespace: testNamespace,
			}
			name := cmp.Or(tt.configMap, "helloworld")
			action, err := c.sync(context.Background(), name)
			require.NoError(t, err)
			assert.Equal(t, tt.wantAction, action)

			got, err := managed.CoreV1().ConfigMaps(testNamespace).Get(context.Background(), name, metav1.GetOptions{})
			if tt.want == nil {
				assert.True(t, apierrors.IsNotFound(err), "the copy still exists: %v", got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want.Labels, got.Labels)
			assert.Equal(t, tt.want.Data, got.Data)
			assert.Equal(t, tt.want.BinaryData, got.BinaryData)
		})
	}
}
