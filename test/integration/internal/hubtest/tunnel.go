package hubtest

import (
	"context"
	"crypto/tls"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonconversion "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/conversion"
	proxyhub "github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/hub"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// Tunnel is the hub tunnel's aggregated API served in-process.
type Tunnel struct {
	// Server is the hub controller's tunnel server.
	Server *proxyhub.Server
	// Address is where it listens, 127.0.0.1:port.
	Address string
	// Stop stops it (and is called when the test ends); it may be called
	// more than once.
	Stop func()
}

// StartTunnel runs the hub tunnel's server (the aggregated API
// proxy.kubectl-ocm.io) in-process as the shipped ocm-hub-controller
// ServiceAccount, on the conversion webhook's server and certificate as the
// hub controller does, and waits until the hub's API server serves the API
// through it. Install must have run. With bind empty it picks a free
// loopback port; a restarted tunnel passes the previous Address.
//
// The harness's one departure from a cluster: the hub has no node, so
// nothing routes the hub controller's Service. StartTunnel turns Service
// ocm-hub-controller-webhook into an ExternalName Service for 127.0.0.1 and
// points the APIService at the port, and the API server's aggregator dials
// the in-process server there, verifying its certificate for the Service's
// name as it would in a cluster.
func StartTunnel(ctx context.Context, t testing.TB, hub *framework.Cluster, bind string) *Tunnel {
	t.Helper()
	if bind == "" {
		port, err := framework.FreePort()
		if err != nil {
			t.Fatalf("find a port for the hub tunnel: %v", err)
		}
		bind = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	}
	cfg, err := hub.ConfigForServiceAccount(ctx, config.HubNamespace, "ocm-hub-controller", time.Hour)
	if err != nil {
		t.Fatalf("hub controller credentials: %v", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	log := testr.NewWithInterface(t, testr.Options{Verbosity: 1})
	w, err := addonconversion.New(c, c, addonconversion.Options{
		Namespace: config.HubNamespace, BindAddress: bind, Resync: time.Minute,
		TLSOpts: []func(*tls.Config){func(c *tls.Config) { c.ClientAuth = tls.RequestClientCert }},
	}, log.WithName("webhook"))
	if err != nil {
		t.Fatal(err)
	}
	srv := proxyhub.New(c, c, log.WithName("hub-tunnel"))
	srv.Register(w.Server)
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Start(runCtx) }()
	go func() { _ = srv.Start(runCtx) }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("hub tunnel server: %v", err)
		}
	}
	t.Cleanup(stop)
	_, portText, _ := net.SplitHostPort(bind)
	port, _ := strconv.Atoi(portText)
	routeAPIService(ctx, t, hub.Client(), port)
	framework.Eventually(ctx, t, time.Minute, "the hub's API server serving "+hubtunnel.GroupVersion+" through the in-process server", func(ctx context.Context) (bool, error) {
		_, err := hub.Clientset().Discovery().ServerResourcesForGroupVersion(hubtunnel.GroupVersion)
		return err == nil, nil
	})
	return &Tunnel{Server: srv, Address: bind, Stop: stop}
}

// routeAPIService makes the hub controller's Service an ExternalName
// Service for 127.0.0.1 and points the APIService at port.
func routeAPIService(ctx context.Context, t testing.TB, admin client.Client, port int) {
	t.Helper()
	svc := &corev1.Service{}
	key := client.ObjectKey{Namespace: config.HubNamespace, Name: conversion.ServiceName}
	if err := admin.Get(ctx, key, svc); err != nil {
		t.Fatalf("read Service %s: %v", key, err)
	}
	if svc.Spec.Type != corev1.ServiceTypeExternalName {
		if err := admin.Delete(ctx, svc); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		external := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "127.0.0.1"},
		}
		framework.Eventually(ctx, t, 30*time.Second, "Service "+key.String()+" as ExternalName", func(ctx context.Context) (bool, error) {
			// AlreadyExists: the ClusterIP Service is still going.
			err := admin.Create(ctx, external.DeepCopy())
			if apierrors.IsAlreadyExists(err) {
				return false, nil
			}
			return err == nil, err
		})
	}
	patch := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": hubtunnel.APIServiceName},
		"spec":     map[string]any{"service": map[string]any{"name": key.Name, "namespace": key.Namespace, "port": int64(port)}},
	}}
	if err := admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(patch), client.FieldOwner("hubtest"), client.ForceOwnership); err != nil {
		t.Fatalf("point APIService %s at port %d: %v", hubtunnel.APIServiceName, port, err)
	}
}
