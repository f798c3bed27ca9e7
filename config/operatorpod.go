package config

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
)

// OperatorPod overrides the Pod of an operator's Deployment (the
// ClusterManager operator, the Klusterlet operator), as the Helm charts'
// values imagePullSecrets and operator.* do. Empty fields render the
// manifest's own defaults. The Pod must still meet the restricted Pod
// Security standard: HubOperatorObjects and KlusterletOperatorObjects refuse
// values that break it (CheckRestricted).
type OperatorPod struct {
	// Scheduling is the Pod's nodeSelector and tolerations and the
	// container's resources (replacing the manifest's when set).
	Scheduling
	// Affinity is the Pod's spec.affinity.
	Affinity *corev1.Affinity
	// PriorityClassName is the Pod's spec.priorityClassName.
	PriorityClassName string
	// ImagePullSecrets name Secrets in the operator's namespace that the
	// Pod's spec.imagePullSecrets lists.
	ImagePullSecrets []string
	// PodSecurityContext, when set, replaces the Pod's securityContext.
	PodSecurityContext *corev1.PodSecurityContext
	// SecurityContext, when set, replaces the operator container's
	// securityContext.
	SecurityContext *corev1.SecurityContext
	// ExtraVolumes are added to the Pod's volumes, and ExtraVolumeMounts to
	// the operator container's volumeMounts.
	ExtraVolumes      []corev1.Volume
	ExtraVolumeMounts []corev1.VolumeMount
}

// CheckRestricted returns an error naming each Pod template of objs that
// the restricted Pod Security standard refuses (podsecurity.Check), and
// what in the operator Pod's values to change.
func CheckRestricted(objs []*unstructured.Unstructured) error {
	var bad []string
	for _, obj := range objs {
		tmpl, ok, err := podsecurity.PodTemplate(obj)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if failures := podsecurity.Check(&tmpl.ObjectMeta, &tmpl.Spec); len(failures) > 0 {
			bad = append(bad, fmt.Sprintf("%s %s/%s %s", obj.GetKind(), obj.GetNamespace(), obj.GetName(), podsecurity.Describe(failures)))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("%s; the operator's namespace enforces restricted Pod Security, so keep podSecurityContext (runAsNonRoot: true, seccompProfile RuntimeDefault), "+
		"securityContext (allowPrivilegeEscalation: false, capabilities.drop [ALL]) and extraVolumes (configMap, secret, emptyDir, projected, downwardAPI, csi, ephemeral, persistentVolumeClaim) within it",
		strings.Join(bad, "; "))
}
