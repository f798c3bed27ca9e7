package deploy

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
)

// eventPodSecurity is the reason of the event that says a template add-on's
// Pods violate the Pod Security level of their namespace.
const eventPodSecurity = addonv1alpha1.PodSecurityReasonViolatesRestricted

// podSecurityFix says how to make a Pod meet restricted.
const podSecurityFix = "set on each Pod template securityContext.runAsNonRoot=true and " +
	"securityContext.seccompProfile.type=RuntimeDefault, and on each container securityContext.allowPrivilegeEscalation=false " +
	"and securityContext.capabilities.drop=[\"ALL\"], without host namespaces, host ports, hostPath volumes or privileged containers"

// setPodSecurity sets the PodSecurity condition of mca from the rendered
// agent: False (ViolatesRestricted) naming each Pod template the managed
// cluster will refuse, what it fails and the fix; True (MeetsRestricted)
// when every Pod template in a namespace that enforces restricted meets it;
// removed when no Pod template lands in such a namespace. The agent is
// deployed either way: the managed cluster's admission has the last word
// (its namespace may be labeled otherwise, or exempt), and holding the works
// would also hold the add-on's other objects and its fixes. It reports
// whether the condition turned False.
func setPodSecurity(mca *addonv1alpha1.ManagedClusterAddOn, templateName string, agent *template.Agent) bool {
	typ := addonv1alpha1.ManagedClusterAddOnPodSecurity
	if len(agent.PodSecurityChecked) == 0 {
		meta.RemoveStatusCondition(&mca.Status.Conditions, typ)
		return false
	}
	if len(agent.PodSecurityViolations) == 0 {
		setCondition(mca, typ, metav1.ConditionTrue, addonv1alpha1.PodSecurityReasonMeetsRestricted,
			fmt.Sprintf("the agent's Pod templates in namespace %s meet Pod Security level %s, which the namespace enforces",
				strings.Join(agent.PodSecurityChecked, ", "), podsecurity.Level))
		return false
	}
	was := previous(mca, typ)
	parts := make([]string, len(agent.PodSecurityViolations))
	for i, v := range agent.PodSecurityViolations {
		parts[i] = v.String()
	}
	msg := fmt.Sprintf("cluster %s refuses Pods of AddOnTemplate %s in namespaces that enforce Pod Security level %s: %s. "+
		"The manifests are deployed, but these Pods are not created. To fix: in the AddOnTemplate, %s; "+
		"or install the add-on in a namespace that does not enforce %s (an AddOnDeploymentConfig's agentInstallNamespace); "+
		"namespace %s enforces it only where the cluster's Klusterlet values set podSecurity.enforceSharedNamespaces",
		mca.Namespace, templateName, podsecurity.Level, strings.Join(parts, "; "), podSecurityFix, podsecurity.Level, addonv1alpha1.DefaultAddonInstallNamespace)
	setCondition(mca, typ, metav1.ConditionFalse, addonv1alpha1.PodSecurityReasonViolatesRestricted, msg)
	return was.Status != metav1.ConditionFalse || was.Message != msg
}

// recordPodSecurity sets the PodSecurity condition and, when it turned
// False or its message changed, records a Warning event naming the objects
// (an event's note is short; the condition has the failed checks and the
// fix).
func (r *Reconciler) recordPodSecurity(mca *addonv1alpha1.ManagedClusterAddOn, src *source, agent *template.Agent) {
	if !setPodSecurity(mca, src.template.Name, agent) {
		return
	}
	objs := make([]string, len(agent.PodSecurityViolations))
	for i, v := range agent.PodSecurityViolations {
		objs[i] = v.Kind + " " + v.Namespace + "/" + v.Name
	}
	note := fmt.Sprintf("cluster %s refuses Pods of AddOnTemplate %s that violate Pod Security level %s: %s; "+
		"the add-on's PodSecurity condition names the failed checks and the fix", mca.Namespace, src.template.Name, podsecurity.Level, strings.Join(objs, ", "))
	if len(note) > maxEventNote {
		note = note[:maxEventNote-3] + "..."
	}
	r.Recorder.Eventf(mca, src.template, corev1.EventTypeWarning, eventPodSecurity, "Deploy", "%s", note)
}

// maxEventNote is the longest note an events.k8s.io Event may carry.
const maxEventNote = 1024
