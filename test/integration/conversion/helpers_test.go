package conversion

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonconversion "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// suite is one hub with the URL its conversion webhook is reached at.
type suite struct {
	ctx     context.Context
	env     *framework.Environment
	hub     *framework.Cluster
	admin   client.Client
	bind    string
	url     string
	cli     clitest.CLI
	webhook *addonconversion.Webhook
}

// newSuite starts a hub and picks the webhook's address; nothing is
// installed yet.
func newSuite(t *testing.T) *suite {
	t.Helper()
	framework.SkipIfShort(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	env := framework.StartForTest(t, "hub")
	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	bind := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	return &suite{
		ctx: ctx, env: env, hub: env.Cluster("hub"), admin: env.Cluster("hub").Client(),
		bind: bind, url: "https://" + bind + conversion.Path,
		cli: clitest.CLI{Kubeconfig: env.Kubeconfig()},
	}
}

// install applies what `hub init --conversion-webhook-url` installs.
func (s *suite) install(t *testing.T) {
	t.Helper()
	objs, err := config.HubObjects(config.HubValues{ConversionWebhookURL: s.url})
	if err != nil {
		t.Fatal(err)
	}
	if err := apply.Apply(s.ctx, s.admin, objs, apply.Options{}); err != nil {
		t.Fatal(err)
	}
}

// startWebhook runs the webhook as the ocm-hub-controller ServiceAccount with
// opts (the suite's address) and waits until the API server converts
// through it.
func (s *suite) startWebhook(t *testing.T, opts addonconversion.Options) {
	t.Helper()
	opts.BindAddress = s.bind
	s.webhook = hubtest.StartConversionWebhook(s.ctx, t, s.controllerClient(t), s.admin, opts)
}

// controllerClient returns a client of the ocm-hub-controller ServiceAccount,
// which has the RBAC the hub ships.
func (s *suite) controllerClient(t *testing.T) client.Client {
	t.Helper()
	cfg, err := s.hub.ConfigForServiceAccount(s.ctx, config.HubNamespace, "ocm-hub-controller", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	sa, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return sa
}

// crd reads the CRD named name.
func (s *suite) crd(t *testing.T, name string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := s.admin.Get(s.ctx, client.ObjectKey{Name: name}, crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

// read reads obj's namesake at version, unstructured.
func (s *suite) read(t *testing.T, obj *unstructured.Unstructured, version string) *unstructured.Unstructured {
	t.Helper()
	out := &unstructured.Unstructured{}
	gvk := obj.GroupVersionKind()
	gvk.Version = version
	out.SetGroupVersionKind(gvk)
	if err := s.admin.Get(s.ctx, client.ObjectKeyFromObject(obj), out); err != nil {
		t.Fatalf("read %s %s at %s: %v", obj.GetKind(), client.ObjectKeyFromObject(obj), version, err)
	}
	return out
}

// createNamespaces creates the namespaces the seeds' objects live in.
func (s *suite) createNamespaces(t *testing.T, names ...string) {
	t.Helper()
	for _, ns := range names {
		if err := s.admin.Create(s.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}
