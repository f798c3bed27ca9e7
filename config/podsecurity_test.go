package config

import (
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
)

// renderedSets are every set of objects the plugin and the operators
// render from the manifests here, with values that fill every optional
// part of the Pod templates.
func renderedSets(t *testing.T) map[string][]*unstructured.Unstructured {
	t.Helper()
	sched := Scheduling{
		NodeSelector: map[string]string{"node-role.kubernetes.io/infra": ""},
		Tolerations:  []corev1.Toleration{{Key: "infra", Operator: corev1.TolerationOpExists}},
	}
	agent := AgentValues{
		ClusterName: "cluster1", HubAPIServer: "https://hub.example.com:6443", BootstrapKubeconfig: []byte("kubeconfig"),
		ManagedKubeconfig: []byte("managed"), PriorityClassName: "system-cluster-critical",
		HostAliases: []corev1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"hub.example.com"}}}, Scheduling: sched,
	}
	singleton := agent
	singleton.Mode = string(operatorv1.InstallModeSingleton)
	sets := map[string]func() ([]*unstructured.Unstructured, error){
		"hub-operator": func() ([]*unstructured.Unstructured, error) { return HubOperatorObjects(HubOperatorValues{}) },
		"hub-operator enforcing in shared namespaces": func() ([]*unstructured.Unstructured, error) {
			return HubOperatorObjects(HubOperatorValues{EnforceSharedPodSecurity: true})
		},
		"hub": func() ([]*unstructured.Unstructured, error) {
			return HubObjects(HubValues{Scheduling: sched, NetworkPolicy: &operatorv1.NetworkPolicyConfiguration{}})
		},
		"hub with a conversion webhook URL": func() ([]*unstructured.Unstructured, error) {
			return HubObjects(HubValues{ConversionWebhookURL: "https://127.0.0.1:9443/convert"})
		},
		"klusterlet-operator": func() ([]*unstructured.Unstructured, error) {
			return KlusterletOperatorObjects(KlusterletOperatorValues{OperatorPod: OperatorPod{Scheduling: sched}})
		},
		"agent":           func() ([]*unstructured.Unstructured, error) { return AgentObjects(agent) },
		"agent singleton": func() ([]*unstructured.Unstructured, error) { return AgentObjects(singleton) },
		"agent hosted": func() ([]*unstructured.Unstructured, error) {
			hosting, _, err := HostedAgentObjects(agent)
			return hosting, err
		},
		"cluster-bootstrap": func() ([]*unstructured.Unstructured, error) { return ClusterBootstrapObjects("cluster1") },
	}
	out := map[string][]*unstructured.Unstructured{}
	for name, render := range sets {
		objs, err := render()
		if err != nil {
			t.Fatalf("render %s: %v", name, err)
		}
		out[name] = objs
	}
	return out
}

// TestNamespacesEnforceRestricted checks the Pod Security labels of every
// namespace the manifests create: those of podsecurity.Labels on the
// product's own namespaces; those of podsecurity.SharedLabels on
// open-cluster-management of the hub, which OCM's add-on managers share,
// enforcing only when the values say so. Each namespace names which part of
// the product set its labels, and every Pod template is in one of the
// namespaces of its set.
func TestNamespacesEnforceRestricted(t *testing.T) {
	hubShared := map[string]map[string]string{
		"hub-operator":                      podsecurity.SharedLabels(false),
		"hub":                               podsecurity.SharedLabels(false),
		"hub with a conversion webhook URL": podsecurity.SharedLabels(false),
		"hub-operator enforcing in shared namespaces": podsecurity.SharedLabels(true),
	}
	setBy := map[bool]string{true: podsecurity.SetByHub, false: podsecurity.SetByKlusterlet}
	for name, objs := range renderedSets(t) {
		t.Run(name, func(t *testing.T) {
			namespaces := map[string]bool{}
			onHub := strings.HasPrefix(name, "hub")
			for _, o := range objs {
				if o.GetKind() != "Namespace" {
					continue
				}
				namespaces[o.GetName()] = true
				want := podsecurity.Labels()
				if shared, ok := hubShared[name]; ok && o.GetName() == OperatorNamespace {
					want = shared
				}
				got := podsecurity.LabelsOf(o.GetLabels())
				if !maps.Equal(got, want) {
					t.Errorf("Namespace %s has Pod Security labels %v, want %v", o.GetName(), got, want)
				}
				if by := o.GetAnnotations()[podsecurity.SetByAnnotation]; by != setBy[onHub] {
					t.Errorf("Namespace %s has annotation %s=%q, want %q", o.GetName(), podsecurity.SetByAnnotation, by, setBy[onHub])
				}
			}
			for _, o := range objs {
				if _, ok, _ := podsecurity.PodTemplate(o); ok && !namespaces[o.GetNamespace()] {
					t.Errorf("%s %s/%s runs Pods in a namespace this set does not create", o.GetKind(), o.GetNamespace(), o.GetName())
				}
			}
		})
	}
}

// TestPodTemplatesMeetRestricted runs every Pod template the manifests
// render through the API server's Pod Security policy at level restricted,
// latest version: a template that a namespace enforcing it would refuse
// fails here.
func TestPodTemplatesMeetRestricted(t *testing.T) {
	pods := 0
	for name, objs := range renderedSets(t) {
		for _, o := range objs {
			tmpl, ok, err := podsecurity.PodTemplate(o)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if !ok {
				continue
			}
			pods++
			if failures := podsecurity.Check(&tmpl.ObjectMeta, &tmpl.Spec); len(failures) > 0 {
				t.Errorf("%s: %s %s/%s %s", name, o.GetKind(), o.GetNamespace(), o.GetName(), podsecurity.Describe(failures))
			}
		}
	}
	// The hub controller, its operator, the Klusterlet operator and the
	// agent in each mode.
	if pods < 7 {
		t.Errorf("checked %d Pod templates, want at least 7: the test no longer sees the Deployments", pods)
	}
}
