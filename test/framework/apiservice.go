package framework

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RouteAPIServiceToLoopback makes an aggregated API reach a server that a
// test runs on this machine's loopback at port, on a cluster without a node
// (where nothing routes a Service): it makes Service namespace/name an
// ExternalName Service for 127.0.0.1 and APIService apiService
// (<version>.<group>) point at it and port, creating either when missing.
// The API server's aggregator then dials 127.0.0.1:port and still verifies
// the server's certificate for the Service's DNS name, as it would through
// the Service in a cluster. The server keeps the APIService's caBundle.
func RouteAPIServiceToLoopback(ctx context.Context, admin client.Client, apiService, namespace, name string, port int) error {
	key := client.ObjectKey{Namespace: namespace, Name: name}
	svc := &corev1.Service{}
	err := admin.Get(ctx, key, svc)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("read Service %s: %w", key, err)
	}
	if err != nil || svc.Spec.Type != corev1.ServiceTypeExternalName {
		if err == nil {
			if err := admin.Delete(ctx, svc); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete Service %s: %w", key, err)
			}
		}
		external := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "127.0.0.1"},
		}
		// AlreadyExists: the deleted Service is still going.
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			err := admin.Create(ctx, external.DeepCopy())
			if apierrors.IsAlreadyExists(err) {
				return false, nil
			}
			return err == nil, err
		}); err != nil {
			return fmt.Errorf("create ExternalName Service %s: %w", key, err)
		}
	}
	version, group, ok := strings.Cut(apiService, ".")
	if !ok {
		return fmt.Errorf("APIService %q is not named <version>.<group>", apiService)
	}
	patch := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": apiService},
		"spec": map[string]any{
			"group": group, "version": version, "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"service": map[string]any{"name": name, "namespace": namespace, "port": int64(port)},
		},
	}}
	if err := admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(patch), client.FieldOwner("framework"), client.ForceOwnership); err != nil {
		return fmt.Errorf("point APIService %s at port %d: %w", apiService, port, err)
	}
	return nil
}
