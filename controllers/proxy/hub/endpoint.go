package hub

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/servingcert"
)

// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=services,verbs=get,resourceNames=ocm-hub-controller-tunnel
// +kubebuilder:rbac:groups=discovery.k8s.io,namespace="{{ .Namespace }}",resources=endpointslices,verbs=create
// +kubebuilder:rbac:groups=discovery.k8s.io,namespace="{{ .Namespace }}",resources=endpointslices,verbs=get;update,resourceNames=ocm-hub-controller-tunnel
// +kubebuilder:rbac:groups=apiregistration.k8s.io,resources=apiservices,verbs=create
// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=secrets,verbs=get,resourceNames=ocm-hub-controller-webhook-serving-cert

// publishInterval is how often the elected replica writes its address
// again, restoring a slice someone changed.
const publishInterval = time.Minute

// EndpointPublisher makes the elected hub controller the only endpoint of
// the tunnel's Service (hubtunnel.ServiceName, which has no selector): every
// agent attaches to it and every request reaches it, so the tunnels and the
// requests meet in one process. A newly elected replica replaces the
// previous one's address; agents attach again to it with their back-off.
type EndpointPublisher struct {
	// Client writes the EndpointSlice.
	Client client.Client
	// Reader reads the Service and the EndpointSlice, uncached (the
	// manager's API reader: a cache would watch every Service of the hub).
	Reader client.Reader
	// Namespace is the hub controller's namespace.
	Namespace string
	// IP is the replica's Pod IP; empty publishes nothing (a hub controller
	// that does not run in a Pod, reached by other means).
	IP string
	// Port is the port the API is served on.
	Port int32
	// Log receives progress.
	Log logr.Logger
}

// NeedLeaderElection: only the elected replica publishes itself.
func (p *EndpointPublisher) NeedLeaderElection() bool { return true }

// Start publishes the address until ctx ends.
func (p *EndpointPublisher) Start(ctx context.Context) error {
	if ip := net.ParseIP(p.IP); ip == nil || ip.IsLoopback() {
		p.Log.Info("No Pod IP that the API server could reach: not registering the hub tunnel's API", "ip", p.IP, "service", hubtunnel.ServiceName)
		<-ctx.Done()
		return nil
	}
	for {
		if err := p.publish(ctx); err != nil {
			p.Log.Error(err, "Publishing the hub tunnel's endpoint")
		} else if err := p.register(ctx); err != nil {
			p.Log.Error(err, "Registering the hub tunnel's API")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(publishInterval):
		}
	}
}

// register applies APIService hubtunnel.APIServiceName for the Service,
// with the CA bundle of the serving certificate (which the certificate's
// keeper keeps current). The hub controller registers it, not the install,
// so that it exists only where the API server can reach the API; `hub clean`
// and the ClusterManager's deletion remove it (hubclean.ControllerObjects).
func (p *EndpointPublisher) register(ctx context.Context) error {
	secret := &corev1.Secret{}
	if err := p.Reader.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: conversion.SecretName}, secret); err != nil {
		return fmt.Errorf("read the serving certificate's Secret: %w", err)
	}
	bundle := secret.Data[servingcert.CABundleKey]
	if len(bundle) == 0 {
		return errors.New("the serving certificate's Secret has no CA bundle yet")
	}
	version, group, _ := strings.Cut(hubtunnel.APIServiceName, ".")
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": hubtunnel.APIServiceName, "labels": map[string]any{
			"app.kubernetes.io/name": "ocm-hub-controller", apply.PartOfLabelKey: apply.PartOfLabelValue,
		}},
		"spec": map[string]any{
			"group": group, "version": version, "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"service":  map[string]any{"name": hubtunnel.ServiceName, "namespace": p.Namespace, "port": int64(443)},
			"caBundle": base64.StdEncoding.EncodeToString(bundle),
		},
	}}
	if err := p.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(svc), client.FieldOwner("ocm-hub-controller-tunnel"), client.ForceOwnership); err != nil {
		return fmt.Errorf("register APIService %s: %w", hubtunnel.APIServiceName, err)
	}
	return nil
}

// publish writes the Service's EndpointSlice with this replica's address,
// owned by the Service so that it goes with it.
func (p *EndpointPublisher) publish(ctx context.Context) error {
	svc := &corev1.Service{}
	if err := p.Reader.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: hubtunnel.ServiceName}, svc); err != nil {
		return fmt.Errorf("read Service %s/%s: %w", p.Namespace, hubtunnel.ServiceName, err)
	}
	want := discoveryv1.EndpointSlice{
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{p.IP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(hubtunnel.ServicePortName), Port: ptr.To(p.Port), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	slice := &discoveryv1.EndpointSlice{}
	err := p.Reader.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: hubtunnel.ServiceName}, slice)
	exists := err == nil
	if err != nil && client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("read EndpointSlice %s/%s: %w", p.Namespace, hubtunnel.ServiceName, err)
	}
	if exists && slice.AddressType == want.AddressType && len(slice.Endpoints) == 1 && len(slice.Endpoints[0].Addresses) == 1 &&
		slice.Endpoints[0].Addresses[0] == p.IP && len(slice.Ports) == 1 && ptr.Deref(slice.Ports[0].Port, 0) == p.Port {
		return nil
	}
	slice.Namespace, slice.Name = p.Namespace, hubtunnel.ServiceName
	slice.Labels = map[string]string{
		discoveryv1.LabelServiceName: hubtunnel.ServiceName,
		discoveryv1.LabelManagedBy:   "ocm-hub-controller",
	}
	slice.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Service", Name: svc.Name, UID: svc.UID}}
	slice.AddressType, slice.Endpoints, slice.Ports = want.AddressType, want.Endpoints, want.Ports
	if exists {
		err = p.Client.Update(ctx, slice)
	} else {
		err = p.Client.Create(ctx, slice)
	}
	if err != nil {
		return fmt.Errorf("write EndpointSlice %s/%s: %w", p.Namespace, hubtunnel.ServiceName, err)
	}
	p.Log.Info("Published this replica as the hub tunnel's endpoint", "ip", p.IP, "port", p.Port)
	return nil
}
