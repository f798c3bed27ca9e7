package addondeploy

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// testClusterRegistries checks OCM's ManagedCluster annotation
// open-cluster-management.io/image-registries on hello: its mirrors apply
// to the agent's image, after the AddOnDeploymentConfig's, which win for
// the image both rewrite; a malformed annotation is named on the add-on
// (condition and event) and the agent is rendered without it.
func (s *suite) testClusterRegistries(t *testing.T) {
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: clusterName}}
	annotate := func(value string) {
		s.update(t, s.hubC, mc, false, func() {
			if value == "" {
				delete(mc.Annotations, clusterv1.ClusterImageRegistriesAnnotationKey)
				return
			}
			if mc.Annotations == nil {
				mc.Annotations = map[string]string{}
			}
			mc.Annotations[clusterv1.ClusterImageRegistriesAnnotationKey] = value
		})
	}
	setConfigRegistries := func(mirrors []addonv1alpha1.ImageMirror) {
		adc := &addonv1alpha1.AddOnDeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: helloConfig.namespace, Name: helloConfig.name}}
		s.update(t, s.hubC, adc, false, func() { adc.Spec.Registries = mirrors })
		s.setDesired(t, "hello", nil, helloTemplate, helloConfig)
	}
	image := func(want string) {
		t.Helper()
		s.helloDeployment(t, "the hello agent running "+want, func(d *appsv1.Deployment) bool {
			return d.Spec.Template.Spec.Containers[0].Image == want
		})
	}

	annotate(`{"registries":[{"mirror":"cluster.local/ocm","source":"quay.io/open-cluster-management"}]}`)
	s.waitCondition(t, "hello", addonv1alpha1.ManagedClusterAddOnImageRegistries, metav1.ConditionTrue, addonv1alpha1.ImageRegistriesReasonApplied)
	image("mirror.local/ocm/hello:v1") // the AddOnDeploymentConfig's mirror wins
	configMirrors := []addonv1alpha1.ImageMirror{{Source: "quay.io/open-cluster-management", Mirror: "mirror.local/ocm"}}
	setConfigRegistries(nil)
	image("cluster.local/ocm/hello:v1")

	annotate(`{"registries":[{"mirror":"cluster.local/ocm","source":"quay.io/open-cluster-management"}`)
	mca := s.waitCondition(t, "hello", addonv1alpha1.ManagedClusterAddOnImageRegistries, metav1.ConditionFalse, addonv1alpha1.ImageRegistriesReasonInvalid)
	if c := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnImageRegistries); !strings.Contains(c.Message, "ManagedCluster cluster1: annotation open-cluster-management.io/image-registries is not a JSON document") {
		t.Errorf("ImageRegistries message %q does not name the cluster and the annotation", c.Message)
	}
	s.poll(t, "an InvalidClusterImageRegistries event on hello", func(ctx context.Context) (bool, error) {
		return s.hasEvent(ctx, "hello", addonv1alpha1.ImageRegistriesReasonInvalid)
	})
	image("quay.io/open-cluster-management/hello:v1")
	s.waitCondition(t, "hello", addonv1alpha1.ManagedClusterAddOnManifestApplied, metav1.ConditionTrue, addonv1alpha1.ManifestAppliedReasonManifestsApplied)

	annotate("")
	setConfigRegistries(configMirrors)
	image("mirror.local/ocm/hello:v1")
	s.poll(t, "no ImageRegistries condition without the annotation", func(ctx context.Context) (bool, error) {
		m, err := s.mca(ctx, "hello")
		return err == nil && meta.FindStatusCondition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnImageRegistries) == nil, err
	})
}
