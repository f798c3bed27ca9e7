package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
)

// TestOperatorPod checks that the overrides of an operator's Pod reach the
// Deployment of each operator, and that overrides breaking restricted Pod
// Security are refused with the check they fail.
func TestOperatorPod(t *testing.T) {
	render := map[string]func(OperatorPod) ([]*unstructured.Unstructured, error){
		"hub": func(p OperatorPod) ([]*unstructured.Unstructured, error) {
			return HubOperatorObjects(HubOperatorValues{OperatorPod: p})
		},
		"klusterlet": func(p OperatorPod) ([]*unstructured.Unstructured, error) {
			return KlusterletOperatorObjects(KlusterletOperatorValues{OperatorPod: p})
		},
	}
	pod := OperatorPod{
		ImagePullSecrets:   []string{"pull"},
		PriorityClassName:  "high",
		PodSecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		ExtraVolumes:       []corev1.Volume{{Name: "ca", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "ca"}}}},
		ExtraVolumeMounts:  []corev1.VolumeMount{{Name: "ca", MountPath: "/ca"}},
	}
	for name, r := range render {
		t.Run(name, func(t *testing.T) {
			objs, err := r(pod)
			if err != nil {
				t.Fatal(err)
			}
			var tmpl *corev1.PodTemplateSpec
			for _, o := range objs {
				if p, ok, _ := podsecurity.PodTemplate(o); ok {
					tmpl = p
				}
			}
			if tmpl == nil {
				t.Fatal("no operator Deployment")
			}
			spec := tmpl.Spec
			if len(spec.ImagePullSecrets) != 2 || spec.ImagePullSecrets[0].Name != pullsecret.Name || spec.ImagePullSecrets[1].Name != "pull" || spec.PriorityClassName != "high" ||
				*spec.SecurityContext.RunAsUser != 1000 || len(spec.Volumes) != 1 || len(spec.Containers[0].VolumeMounts) != 1 {
				t.Errorf("the operator's Pod lacks the overrides: %+v", spec)
			}
			// The container keeps its own securityContext.
			if sc := spec.Containers[0].SecurityContext; sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				t.Errorf("container securityContext %+v, want the manifest's", sc)
			}
			bad := pod
			bad.SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
			_, err = r(bad)
			assert.ErrorContains(t, err, "privileged", "a privileged operator container")
		})
	}
}
