// Package v1 contains the cluster.open-cluster-management.io/v1 API: the
// ManagedCluster kind, the hub's record of one registered Kubernetes cluster.
//
// Field names, condition types, reasons, labels, annotations and finalizers
// are wire-compatible with Open Cluster Management so that existing manifests,
// scripts and tools keep working against a kubectl-ocm hub.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.open-cluster-management.io
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every kind in this package.
	GroupVersion = schema.GroupVersion{Group: "cluster.open-cluster-management.io", Version: "v1"}

	// SchemeBuilder collects the kinds of this package for registration into a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds every kind of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
