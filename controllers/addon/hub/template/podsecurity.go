package template

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
)

// PodSecurityViolation is a Pod template of the agent, in a namespace that
// enforces Pod Security level restricted on the managed cluster, that fails
// the level: the managed cluster's API server refuses its Pods.
type PodSecurityViolation struct {
	// Kind, Namespace and Name name the object that holds the Pod template.
	Kind, Namespace, Name string
	// Failures are the checks the template fails, with the containers and
	// fields that fail each.
	Failures []podsecurity.Failure
}

// String names the object and what it fails, as the API server's message
// does: `Deployment ns/name violates PodSecurity "restricted:latest": ...`.
func (v PodSecurityViolation) String() string {
	return fmt.Sprintf("%s %s/%s %s", v.Kind, v.Namespace, v.Name, podsecurity.Describe(v.Failures))
}

// podSecurity checks the Pod templates of objs (the agent's workload and
// hook manifests, rendered) whose namespace enforces restricted as far as
// the hub can tell (enforcedNamespaces; addonNamespace is whether the
// cluster's add-on agents' namespace enforces it). It returns those
// namespaces that hold a Pod template, and the templates that fail the
// level. A template that cannot be decoded is left to the managed cluster's
// API server, which refuses it with its own message.
func podSecurity(objs []*unstructured.Unstructured, addonNamespace bool) (checked []string, violations []PodSecurityViolation) {
	enforced := enforcedNamespaces(objs, addonNamespace)
	seen := map[string]bool{}
	for _, obj := range objs {
		ns := obj.GetNamespace()
		if !enforced[ns] {
			continue
		}
		tmpl, ok, err := podsecurity.PodTemplate(obj)
		if err != nil || !ok {
			continue
		}
		if !seen[ns] {
			seen[ns] = true
			checked = append(checked, ns)
		}
		if failures := podsecurity.Check(&tmpl.ObjectMeta, &tmpl.Spec); len(failures) > 0 {
			violations = append(violations, PodSecurityViolation{Kind: obj.GetKind(), Namespace: ns, Name: obj.GetName(), Failures: failures})
		}
	}
	return checked, violations
}

// enforcedNamespaces returns the namespaces the hub knows to enforce Pod
// Security level restricted on the managed cluster: the default install
// namespace when addonNamespace says its agent reports so (the Klusterlet
// operator creates it enforcing restricted only when told to), and every
// namespace whose Namespace object among objs is labeled to enforce
// restricted. A Namespace object of the template that sets another enforce
// level speaks for its namespace. The hub cannot read the labels of other
// namespaces on the managed cluster: their Pods are left to its admission.
func enforcedNamespaces(objs []*unstructured.Unstructured, addonNamespace bool) map[string]bool {
	enforced := map[string]bool{addonv1alpha1.DefaultAddonInstallNamespace: addonNamespace}
	for _, obj := range objs {
		if obj.GetAPIVersion() != "v1" || obj.GetKind() != "Namespace" {
			continue
		}
		if level, ok := obj.GetLabels()[podsecurity.EnforceLabel]; ok {
			enforced[obj.GetName()] = level == podsecurity.Level
		}
	}
	return enforced
}
