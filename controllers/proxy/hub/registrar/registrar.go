// Package registrar is the hub controller's part of the hub tunnel: it
// keeps the tunnel's serving certificate and registers the tunnel's
// aggregated API with the hub's API server. The tunnel itself
// (controllers/proxy/hub, `ocm-controller tunnel`) runs in a Deployment of
// its own whose ServiceAccount may only read that certificate, authorize
// and proxy: the process that parses what agents send holds no right to
// write Secrets, APIServices or anything else of the hub.
package registrar

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/servingcert"
)

// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=secrets,verbs=create
// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=secrets,verbs=get;update,resourceNames=ocm-hub-tunnel-serving-cert
// +kubebuilder:rbac:groups=discovery.k8s.io,namespace="{{ .Namespace }}",resources=endpointslices,verbs=list
// +kubebuilder:rbac:groups=apiregistration.k8s.io,resources=apiservices,verbs=create
// +kubebuilder:rbac:groups=apiregistration.k8s.io,resources=apiservices,verbs=get;patch,resourceNames=v1alpha1.proxy.kubectl-ocm.io

// FieldManager writes the APIService and the Secret.
const FieldManager = "ocm-hub-controller-tunnel"

// Intervals of the registrar's checks: until the APIService is registered
// it checks often, so that a new hub serves the API seconds after the
// tunnel's Pod is ready; then once a minute, or sooner when the
// certificate is due.
const (
	waitInterval = 5 * time.Second
	resync       = time.Minute
)

// Registrar keeps Secret hubtunnel.SecretName (a CA and a serving
// certificate for the tunnel's Service) and APIService
// hubtunnel.APIServiceName, pointing at the tunnel's Service with that CA.
// It registers the APIService only once the Service has a ready endpoint:
// an APIService the hub's API server cannot reach would hold every
// namespace deletion, so a hub whose tunnel runs nowhere (a hub controller
// run outside a cluster) serves no such API. Until then it keeps only the
// caBundle of an APIService someone else registered.
type Registrar struct {
	// Client writes the Secret and the APIService.
	Client client.Client
	// Reader reads the Secret, the EndpointSlices and the APIService,
	// uncached.
	Reader client.Reader
	// Namespace is the hub's namespace: the tunnel's, its Service's and
	// the Secret's.
	Namespace string
	// CAValidity and ServingValidity are the lifetimes of new
	// certificates; 0 means servingcert's defaults.
	CAValidity, ServingValidity time.Duration
	// Log receives progress.
	Log logr.Logger
}

// NeedLeaderElection: only the elected hub controller writes.
func (r *Registrar) NeedLeaderElection() bool { return true }

// Start checks until ctx ends.
func (r *Registrar) Start(ctx context.Context) error {
	for {
		wait := waitInterval
		next, registered, err := r.Sync(ctx)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				r.Log.Error(err, "Keeping the hub tunnel's certificate and APIService")
			}
		case registered:
			wait = min(resync, max(time.Until(next), 0))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Sync brings the Secret and the APIService up to date once. It returns
// when the certificate is next due and whether the APIService names the
// tunnel's Service with its CA.
func (r *Registrar) Sync(ctx context.Context) (time.Time, bool, error) {
	bundle, next, err := r.syncSecret(ctx)
	if err != nil {
		return time.Time{}, false, err
	}
	ready, err := r.serviceReady(ctx)
	if err != nil {
		return next, false, err
	}
	if ready {
		if err := r.register(ctx, bundle); err != nil {
			return next, false, err
		}
		return next, true, nil
	}
	return next, false, r.keepCABundle(ctx, bundle)
}

// Certs are what the tunnel's certificate holds: the names of its Service.
func (r *Registrar) Certs() servingcert.Options {
	return servingcert.Options{
		CommonName: hubtunnel.ServiceName, Hosts: slices.Sorted(slices.Values(hubtunnel.ServiceHosts(r.Namespace))),
		CAValidity: r.CAValidity, ServingValidity: r.ServingValidity,
	}
}

// syncSecret writes the Secret when its certificates are missing, due or
// for other names, and returns the CA bundle and when to check again.
func (r *Registrar) syncSecret(ctx context.Context) ([]byte, time.Time, error) {
	key := client.ObjectKey{Namespace: r.Namespace, Name: hubtunnel.SecretName}
	secret := &corev1.Secret{}
	err := r.Reader.Get(ctx, key, secret)
	exists := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, time.Time{}, fmt.Errorf("read Secret %s: %w", key, err)
	}
	plan, err := servingcert.Plan(secret.Data, r.Certs(), time.Now())
	if err != nil {
		return nil, time.Time{}, err
	}
	if plan.Changed {
		if !exists {
			secret = &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: hubtunnel.SecretName, Labels: map[string]string{
					"app.kubernetes.io/name": hubtunnel.ServiceName, apply.PartOfLabelKey: apply.PartOfLabelValue,
				}},
				Type: corev1.SecretTypeTLS,
			}
		}
		secret.Data = plan.Data
		if exists {
			err = r.Client.Update(ctx, secret)
		} else {
			err = r.Client.Create(ctx, secret)
		}
		if err != nil {
			// A conflict means another replica wrote it: the next check
			// adopts its certificate.
			return nil, time.Time{}, fmt.Errorf("write Secret %s: %w", key, err)
		}
		r.Log.Info("Wrote the hub tunnel's serving certificate", "secret", key.String(), "next", plan.Next)
	}
	return plan.Data[servingcert.CABundleKey], plan.Next, nil
}

// serviceReady reports whether the tunnel's Service has a ready endpoint:
// a Pod of the tunnel that serves.
func (r *Registrar) serviceReady(ctx context.Context) (bool, error) {
	list := &discoveryv1.EndpointSliceList{}
	if err := r.Reader.List(ctx, list, client.InNamespace(r.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: hubtunnel.ServiceName}); err != nil {
		return false, fmt.Errorf("list the EndpointSlices of Service %s/%s: %w", r.Namespace, hubtunnel.ServiceName, err)
	}
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			if ptr.Deref(e.Conditions.Ready, false) {
				return true, nil
			}
		}
	}
	return false, nil
}

// register applies the APIService for the tunnel's Service with bundle.
// `hub clean` and the ClusterManager's deletion remove it
// (hubclean.ControllerObjects).
func (r *Registrar) register(ctx context.Context, bundle []byte) error {
	version, group, _ := strings.Cut(hubtunnel.APIServiceName, ".")
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": hubtunnel.APIServiceName, "labels": map[string]any{
			"app.kubernetes.io/name": hubtunnel.ServiceName, apply.PartOfLabelKey: apply.PartOfLabelValue,
		}},
		"spec": map[string]any{
			"group": group, "version": version, "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
			"service":  map[string]any{"name": hubtunnel.ServiceName, "namespace": r.Namespace, "port": int64(443)},
			"caBundle": base64.StdEncoding.EncodeToString(bundle),
		},
	}}
	current, err := r.apiService(ctx)
	if err != nil {
		return err
	}
	if current != nil && sameRegistration(current, svc) {
		return nil
	}
	if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(svc), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("register APIService %s: %w", hubtunnel.APIServiceName, err)
	}
	r.Log.Info("Registered the hub tunnel's API", "apiService", hubtunnel.APIServiceName, "service", r.Namespace+"/"+hubtunnel.ServiceName)
	return nil
}

// sameRegistration reports whether current already holds want's labels and
// spec.
func sameRegistration(current, want *unstructured.Unstructured) bool {
	for k, v := range want.GetLabels() {
		if current.GetLabels()[k] != v {
			return false
		}
	}
	spec, _, _ := unstructured.NestedMap(current.Object, "spec")
	wantSpec, _, _ := unstructured.NestedMap(want.Object, "spec")
	for k, v := range wantSpec {
		if fmt.Sprint(spec[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

// keepCABundle sets the caBundle of an APIService someone else registered
// (a test harness routing it to a tunnel outside the cluster). A missing
// APIService is left alone.
func (r *Registrar) keepCABundle(ctx context.Context, bundle []byte) error {
	current, err := r.apiService(ctx)
	if err != nil || current == nil {
		return err
	}
	encoded := base64.StdEncoding.EncodeToString(bundle)
	if got, _, _ := unstructured.NestedString(current.Object, "spec", "caBundle"); got == encoded {
		return nil
	}
	patch := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": hubtunnel.APIServiceName},
		"spec":     map[string]any{"caBundle": encoded},
	}}
	if err := r.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(patch), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("set the caBundle of APIService %s: %w", hubtunnel.APIServiceName, err)
	}
	r.Log.Info("Set the hub tunnel's CA bundle", "apiService", hubtunnel.APIServiceName)
	return nil
}

// apiService reads the APIService, nil when there is none.
func (r *Registrar) apiService(ctx context.Context) (*unstructured.Unstructured, error) {
	svc := &unstructured.Unstructured{}
	svc.SetAPIVersion("apiregistration.k8s.io/v1")
	svc.SetKind("APIService")
	if err := r.Reader.Get(ctx, client.ObjectKey{Name: hubtunnel.APIServiceName}, svc); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("read APIService %s: %w", hubtunnel.APIServiceName, err)
	}
	return svc, nil
}
