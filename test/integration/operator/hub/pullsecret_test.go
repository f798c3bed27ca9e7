package hub

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testPullSecret checks the image pull Secret: the operator copies the
// Secret of its namespace into the hub namespace and the hub controller's
// pod template references it; a change of the source reaches the copy, and
// deleting it removes the copy and the reference.
func testPullSecret(t *testing.T, s *suite) {
	source := pullsecret.Secret(config.OperatorNamespace, []byte(`{"auths":{"registry.example:5000":{"auth":"dTpw"}}}`))
	if err := s.admin.Create(s.ctx, source); err != nil {
		t.Fatal(err)
	}
	s.waitPullSecret(t, source.Data[corev1.DockerConfigJsonKey])

	source.Data[corev1.DockerConfigJsonKey] = []byte(`{"auths":{"mirror.example":{"auth":"dTpx"}}}`)
	if err := s.admin.Update(s.ctx, source); err != nil {
		t.Fatal(err)
	}
	s.waitPullSecret(t, source.Data[corev1.DockerConfigJsonKey])

	if err := s.admin.Delete(s.ctx, source); err != nil {
		t.Fatal(err)
	}
	s.waitPullSecret(t, nil)
}

// waitPullSecret waits until the hub namespace holds a copy of the image
// pull Secret with data (nil: no copy) and the hub controller Deployment
// references it (nil: it references none).
func (s *suite) waitPullSecret(t *testing.T, data []byte) {
	t.Helper()
	s.waitController(t, fmt.Sprintf("image pull Secret %q", data), func(dep *appsv1.Deployment) error {
		refs := dep.Spec.Template.Spec.ImagePullSecrets
		if want := data != nil; want != slices.Contains(refs, corev1.LocalObjectReference{Name: pullsecret.Name}) || (!want && len(refs) > 0) {
			return fmt.Errorf("imagePullSecrets %v, want %s: %t", refs, pullsecret.Name, want)
		}
		return nil
	})
	framework.Eventually(s.ctx, t, wait, "the copy of the image pull Secret in the hub namespace", func(ctx context.Context) (bool, error) {
		err := copyHolds(ctx, s.admin, data)
		return err == nil, err
	})
}

// copyHolds checks the copy of the image pull Secret in the hub namespace:
// it holds data, or there is none for nil.
func copyHolds(ctx context.Context, c client.Client, data []byte) error {
	copied := &corev1.Secret{}
	err := c.Get(ctx, client.ObjectKey{Namespace: config.HubNamespace, Name: pullsecret.Name}, copied)
	switch {
	case data == nil && apierrors.IsNotFound(err):
		return nil
	case data == nil:
		return fmt.Errorf("the copy exists (%v)", err)
	case err != nil:
		return err
	case !bytes.Equal(copied.Data[corev1.DockerConfigJsonKey], data) || copied.Type != corev1.SecretTypeDockerConfigJson:
		return fmt.Errorf("the copy holds %s %s", copied.Type, copied.Data[corev1.DockerConfigJsonKey])
	case copied.Labels[pullsecret.CopyLabel] != config.OperatorNamespace:
		return fmt.Errorf("the copy's labels %v lack %s", copied.Labels, pullsecret.CopyLabel)
	}
	return nil
}
