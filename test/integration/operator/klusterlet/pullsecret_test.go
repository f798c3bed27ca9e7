package klusterlet

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// testPullSecret checks the image pull Secret of the operator's namespace:
// the operator copies it into the agent's namespace and every add-on
// namespace, the agent Deployment references it, a change of the source
// reaches every copy, and deleting it removes the copies and the
// reference; a Secret of that name carrying the copy label in a namespace
// without the add-on label is never deleted.
func (s *suite) testPullSecret(t *testing.T) {
	agentNS := s.klusterlet(t).AgentNamespace()
	app := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "addon-pull", Labels: map[string]string{addonv1alpha1.InstallNamespaceLabelKey: "true"}}}
	forgedNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "not-an-addon"}}
	forged := pullsecret.Secret(forgedNS.Name, []byte(`{"auths":{"own.example":{"auth":"b3du"}}}`))
	forged.Labels[pullsecret.CopyLabel] = operatorv1.OperatorNamespace
	for _, obj := range []*corev1.Namespace{app, forgedNS} {
		if err := s.spoke.Create(s.ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.spoke.Create(s.ctx, forged); err != nil {
		t.Fatal(err)
	}
	copies := []string{agentNS, addonv1alpha1.DefaultAddonInstallNamespace, app.Name}

	source := pullsecret.Secret(operatorv1.OperatorNamespace, []byte(`{"auths":{"registry.example:5000":{"auth":"dTpw"}}}`))
	before := s.waitAvailable(t, "the agent before the image pull Secret", agentNS)
	if err := s.spoke.Create(s.ctx, source); err != nil {
		t.Fatal(err)
	}
	s.waitPullReference(t, agentNS, true)
	for _, ns := range copies {
		s.waitPullCopy(t, ns, source.Data[corev1.DockerConfigJsonKey])
	}
	s.waitRolled(t, agentNS, before)

	source.Data[corev1.DockerConfigJsonKey] = []byte(`{"auths":{"mirror.example":{"auth":"dTpx"}}}`)
	if err := s.spoke.Update(s.ctx, source); err != nil {
		t.Fatal(err)
	}
	for _, ns := range copies {
		s.waitPullCopy(t, ns, source.Data[corev1.DockerConfigJsonKey])
	}

	if err := s.spoke.Delete(s.ctx, source); err != nil {
		t.Fatal(err)
	}
	for _, ns := range copies {
		s.waitPullCopy(t, ns, nil)
	}
	s.waitPullReference(t, agentNS, false)
	s.waitAvailable(t, "the agent without the image pull Secret", agentNS)
	s.waitPullCopy(t, forgedNS.Name, forged.Data[corev1.DockerConfigJsonKey])
}

// waitPullReference waits until the agent Deployment in namespace
// references the image pull Secret, or references none.
func (s *suite) waitPullReference(t *testing.T, namespace string, want bool) {
	t.Helper()
	framework.Eventually(s.ctx, t, wait, fmt.Sprintf("the agent Deployment referencing %s: %t", pullsecret.Name, want), func(context.Context) (bool, error) {
		refs := s.waitAvailable(t, "the agent", namespace).Spec.Template.Spec.ImagePullSecrets
		if has := slices.Contains(refs, corev1.LocalObjectReference{Name: pullsecret.Name}); has != want || (!want && len(refs) > 0) {
			return false, fmt.Errorf("imagePullSecrets %v", refs)
		}
		return true, nil
	})
}

// waitPullCopy waits until the Secret open-cluster-management-image-pull-credentials
// in namespace holds data, or, for nil data, until there is none.
func (s *suite) waitPullCopy(t *testing.T, namespace string, data []byte) {
	t.Helper()
	framework.Eventually(s.ctx, t, wait, fmt.Sprintf("Secret %s/%s holding %s", namespace, pullsecret.Name, data), func(ctx context.Context) (bool, error) {
		got := &corev1.Secret{}
		err := s.spoke.Get(ctx, types.NamespacedName{Namespace: namespace, Name: pullsecret.Name}, got)
		switch {
		case data == nil && apierrors.IsNotFound(err):
			return true, nil
		case data == nil && err == nil:
			return false, fmt.Errorf("the copy remains: %s", got.Data[corev1.DockerConfigJsonKey])
		case err != nil:
			return false, err
		case !bytes.Equal(got.Data[corev1.DockerConfigJsonKey], data) || got.Type != corev1.SecretTypeDockerConfigJson:
			return false, fmt.Errorf("%s %s", got.Type, got.Data[corev1.DockerConfigJsonKey])
		}
		return true, nil
	})
}

// hubPullCredentials is the docker config.json `hub init` writes into the
// hub's image pull Secret.
const hubPullCredentials = `{"auths":{"registry.example:5000":{"auth":"aHViOnB3"}}}`

// testHubPullSecret checks what `hub init --image-pull-credentials` wrote
// on the hub: the Secret in the operator's namespace, referenced by the
// operator's Deployment, copied by the operator into the hub namespace and
// referenced by the hub controller; then `upgrade hub
// --image-pull-credentials` rewrites it and the copy follows.
func (s *suite) testHubPullSecret(t *testing.T) {
	t.Run("hub init and upgrade hub write the image pull Secret", func(t *testing.T) {
		s.waitHubPull(t, operatorv1.OperatorNamespace, []byte(hubPullCredentials))
		s.waitHubPull(t, config.HubNamespace, []byte(hubPullCredentials))
		for _, dep := range []types.NamespacedName{
			{Namespace: operatorv1.OperatorNamespace, Name: config.HubOperatorDeployment},
			{Namespace: config.HubNamespace, Name: config.HubControllerDeployment},
		} {
			d := &appsv1.Deployment{}
			if err := s.hub.Get(s.ctx, dep, d); err != nil {
				t.Fatal(err)
			}
			if refs := d.Spec.Template.Spec.ImagePullSecrets; !slices.Contains(refs, corev1.LocalObjectReference{Name: pullsecret.Name}) {
				t.Errorf("Deployment %s imagePullSecrets %v lack %s", dep, refs, pullsecret.Name)
			}
		}
		const rotated = `{"auths":{"registry.example:5000":{"auth":"aHViOnB4"}}}`
		file := filepath.Join(t.TempDir(), "rotated.json")
		if err := os.WriteFile(file, []byte(rotated), 0o600); err != nil {
			t.Fatal(err)
		}
		r := s.onHub.Run(s.ctx, "upgrade", "hub", "--wait=false", "--image-pull-credentials", file)
		clitest.ExpectOK(t, r)
		if want := "Wrote the image pull Secret " + operatorv1.OperatorNamespace + "/" + pullsecret.Name; !strings.Contains(r.ErrOut, want) {
			t.Errorf("upgrade hub said %q, want %q", r.ErrOut, want)
		}
		s.waitHubPull(t, operatorv1.OperatorNamespace, []byte(rotated))
		s.waitHubPull(t, config.HubNamespace, []byte(rotated))
	})
}

// waitHubPull waits until the image pull Secret in namespace of the hub
// holds data.
func (s *suite) waitHubPull(t *testing.T, namespace string, data []byte) {
	t.Helper()
	framework.Eventually(s.ctx, t, wait, fmt.Sprintf("hub Secret %s/%s holding %s", namespace, pullsecret.Name, data), func(ctx context.Context) (bool, error) {
		got := &corev1.Secret{}
		if err := s.hub.Get(ctx, types.NamespacedName{Namespace: namespace, Name: pullsecret.Name}, got); err != nil {
			return false, err
		}
		if !bytes.Equal(got.Data[corev1.DockerConfigJsonKey], data) {
			return false, fmt.Errorf("it holds %s", got.Data[corev1.DockerConfigJsonKey])
		}
		return true, nil
	})
}
