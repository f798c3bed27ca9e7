package main

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
)

const (
	// sourceNamespaceLabel marks a ConfigMap on the managed cluster as a copy
	// made by the agent, and names the hub namespace (the cluster's) that
	// holds its source. The agent updates and deletes only ConfigMaps
	// carrying it.
	sourceNamespaceLabel = "helloworld.addon.kubectl-ocm.io/source-namespace"
	// fieldManager is the field manager of the agent's writes.
	fieldManager = "helloworld"
	// rootCAConfigMap is the ConfigMap kube-controller-manager publishes in
	// every namespace of every cluster, the hub's cluster namespace
	// included: it describes the hub, so it is never copied.
	rootCAConfigMap = "kube-root-ca.crt"
)

// What copier.sync did.
const (
	actionCreated   = "created"
	actionUpdated   = "updated"
	actionDeleted   = "deleted"
	actionUnchanged = "unchanged"
	// actionSkipped: a ConfigMap of the source's name exists in the install
	// namespace and is not a copy; the agent leaves it alone.
	actionSkipped = "skipped"
	// actionIgnored: the ConfigMap is one the agent never copies.
	actionIgnored = "ignored"
)

// copier copies the ConfigMaps of one hub namespace into one namespace of the
// managed cluster.
type copier struct {
	// sources lists the ConfigMaps of the cluster's namespace on the hub.
	sources corev1listers.ConfigMapNamespaceLister
	// copies lists the agent's copies in the install namespace (ConfigMaps
	// labeled sourceNamespaceLabel=hubNamespace).
	copies corev1listers.ConfigMapNamespaceLister
	// managed writes to the managed cluster.
	managed kubernetes.Interface
	// hubNamespace is the cluster's namespace on the hub.
	hubNamespace string
	// namespace is the install namespace on the managed cluster.
	namespace string
}

// sync brings the copy of ConfigMap name in line with its source: it creates
// or updates the copy while the source exists, and deletes it once the
// source is gone. It returns what it did.
func (c *copier) sync(ctx context.Context, name string) (string, error) {
	if name == rootCAConfigMap {
		return actionIgnored, nil
	}
	source, err := c.sources.Get(name)
	if apierrors.IsNotFound(err) {
		source = nil
	} else if err != nil {
		return "", fmt.Errorf("read ConfigMap %s/%s on the hub: %w", c.hubNamespace, name, err)
	}
	current, err := c.copies.Get(name)
	if apierrors.IsNotFound(err) {
		current = nil
	} else if err != nil {
		return "", fmt.Errorf("read ConfigMap %s/%s: %w", c.namespace, name, err)
	}

	configMaps := c.managed.CoreV1().ConfigMaps(c.namespace)
	switch {
	case source == nil && current == nil:
		return actionUnchanged, nil
	case source == nil:
		err := configMaps.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &current.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("delete ConfigMap %s/%s, whose source %s/%s is gone: %w", c.namespace, name, c.hubNamespace, name, err)
		}
		return actionDeleted, nil
	case current == nil:
		_, err := configMaps.Create(ctx, c.desired(source), metav1.CreateOptions{FieldManager: fieldManager})
		if !apierrors.IsAlreadyExists(err) {
			if err != nil {
				return "", fmt.Errorf("create ConfigMap %s/%s: %w", c.namespace, name, err)
			}
			return actionCreated, nil
		}
		// Not in the list of copies yet, or not a copy at all: ask the API.
		current, err = configMaps.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", fmt.Errorf("read ConfigMap %s/%s: %w", c.namespace, name, err)
		}
		if current.Labels[sourceNamespaceLabel] != c.hubNamespace {
			return actionSkipped, nil
		}
	}
	return c.update(ctx, current, source)
}

// update makes the copy current hold the data of source.
func (c *copier) update(ctx context.Context, current, source *corev1.ConfigMap) (string, error) {
	want := c.desired(source)
	if equality.Semantic.DeepEqual(current.Data, want.Data) && equality.Semantic.DeepEqual(current.BinaryData, want.BinaryData) {
		return actionUnchanged, nil
	}
	updated := current.DeepCopy()
	updated.Data, updated.BinaryData = want.Data, want.BinaryData
	if _, err := c.managed.CoreV1().ConfigMaps(c.namespace).Update(ctx, updated, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return "", fmt.Errorf("update ConfigMap %s/%s: %w", c.namespace, current.Name, err)
	}
	return actionUpdated, nil
}

// desired returns the copy of source in the install namespace: its data and
// binary data, labeled as a copy.
func (c *copier) desired(source *corev1.ConfigMap) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: source.Name, Namespace: c.namespace,
			Labels: map[string]string{sourceNamespaceLabel: c.hubNamespace},
		},
		Data:       maps.Clone(source.Data),
		BinaryData: maps.Clone(source.BinaryData),
	}
}
