package addondeploy

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// strictManifests is the agent of the template add-on strict, in the
// default install namespace, without a securityContext.
const strictManifests = `apiVersion: apps/v1
kind: Deployment
metadata: {name: strict-agent, namespace: open-cluster-management-agent-addon}
spec:
  selector: {matchLabels: {app: strict-agent}}
  template:
    metadata: {labels: {app: strict-agent}}
    spec:
      containers: [{name: agent, image: quay.io/open-cluster-management/strict:v1}]`

// setAddonNamespaceClaim reports, as cluster1's agent would, that the
// add-on agents' namespace enforces Pod Security level (its claim
// podsecurity.AddonNamespaceClaim).
func (s *suite) setAddonNamespaceClaim(t *testing.T, level string) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: clusterName}}
	s.update(t, s.hubC, mc, true, func() {
		mc.Status.ClusterClaims = slices.DeleteFunc(mc.Status.ClusterClaims, func(c clusterv1.ManagedClusterClaim) bool {
			return c.Name == podsecurity.AddonNamespaceClaim
		})
		mc.Status.ClusterClaims = append(mc.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: podsecurity.AddonNamespaceClaim, Value: level})
	})
}

// strictSecurityContext is what strict's Pod template needs to meet
// restricted.
const strictSecurityContext = `
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers: [{name: agent, image: quay.io/open-cluster-management/strict:v1,
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}}]`

// testPodSecurity deploys a template add-on whose Pods the default install
// namespace refuses once it enforces restricted (as the Klusterlet operator
// creates it when told podSecurity.enforceSharedNamespaces), which the
// cluster's agent reports in its claim podsecurity.AddonNamespaceClaim: the
// hub says so on the add-on, naming the Deployment, the container, the
// failed checks and the fix, and still deploys it; the managed cluster's
// admission agrees. Fixed, the add-on meets restricted. hello, installed in
// a namespace the hub knows nothing of, has no PodSecurity condition. When
// the namespace only warns, as it does by default, the hub leaves strict's
// Pods to the cluster: no PodSecurity condition.
func (s *suite) testPodSecurity(t *testing.T) {
	ns := addonv1alpha1.DefaultAddonInstallNamespace
	if err := s.spokeC.Create(s.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: podsecurity.Labels()}}); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		s.update(t, s.spokeC, namespace, false, func() { namespace.Labels = podsecurity.WithLabels(namespace.Labels) })
	}
	s.setAddonNamespaceClaim(t, podsecurity.Level)
	s.create(t, s.hubC, newCMA("strict"))
	tplRef := configRef{addonv1alpha1.AddOnTemplateResource, "", "strict-template"}
	tpl := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: tplRef.name}}
	tpl.Spec.AddonName = "strict"
	tpl.Spec.AgentSpec.Workload.Manifests = manifests(t, strictManifests)
	s.create(t, s.hubC, tpl)
	s.create(t, s.hubC, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "strict"}})
	s.setDesired(t, "strict", nil, tplRef)

	mca := s.waitCondition(t, "strict", addonv1alpha1.ManagedClusterAddOnPodSecurity, metav1.ConditionFalse, addonv1alpha1.PodSecurityReasonViolatesRestricted)
	msg := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnPodSecurity).Message
	for _, want := range []string{"AddOnTemplate strict-template", "Deployment " + ns + "/strict-agent", `container "agent"`,
		"seccompProfile", "runAsNonRoot != true", "The manifests are deployed", "To fix:"} {
		if !strings.Contains(msg, want) {
			t.Errorf("PodSecurity message lacks %q: %s", want, msg)
		}
	}
	s.poll(t, "a ViolatesRestricted Event on the add-on", func(ctx context.Context) (bool, error) {
		return s.hasEvent(ctx, "strict", addonv1alpha1.PodSecurityReasonViolatesRestricted)
	})

	// Deployed all the same, and the managed cluster's admission refuses its
	// Pods for the reasons the hub gave.
	d := &appsv1.Deployment{}
	s.poll(t, "the strict agent Deployment on cluster1", func(ctx context.Context) (bool, error) {
		err := s.spokeC.Get(ctx, client.ObjectKey{Namespace: ns, Name: "strict-agent"}, d)
		return err == nil, client.IgnoreNotFound(err)
	})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "strict-agent-probe", Labels: d.Spec.Template.Labels},
		Spec: d.Spec.Template.Spec}
	err := s.spokeC.Create(s.ctx, pod, client.DryRunAll)
	assert.True(t, apierrors.IsForbidden(err), "cluster1 admitted (or refused otherwise) a Pod of the strict agent: %v", err)
	assert.ErrorContains(t, err, `violates PodSecurity "restricted:latest"`)
	assert.ErrorContains(t, err, "seccompProfile")

	s.update(t, s.hubC, tpl, false, func() {
		tpl.Spec.AgentSpec.Workload.Manifests = manifests(t, strings.Replace(strictManifests,
			"\n      containers: [{name: agent, image: quay.io/open-cluster-management/strict:v1}]", strictSecurityContext, 1))
	})
	s.setDesired(t, "strict", nil, tplRef)
	s.waitCondition(t, "strict", addonv1alpha1.ManagedClusterAddOnPodSecurity, metav1.ConditionTrue, addonv1alpha1.PodSecurityReasonMeetsRestricted)
	s.poll(t, "the fixed strict agent Deployment on cluster1", func(ctx context.Context) (bool, error) {
		err := s.spokeC.Get(ctx, client.ObjectKey{Namespace: ns, Name: "strict-agent"}, d)
		return err == nil && d.Spec.Template.Spec.SecurityContext != nil && d.Spec.Template.Spec.SecurityContext.SeccompProfile != nil, err
	})
	pod.Spec = d.Spec.Template.Spec
	kit.Must(t, "create a Pod of the fixed strict agent (dry run)", s.spokeC.Create(s.ctx, pod, client.DryRunAll))

	hello, err := s.mca(s.ctx, "hello")
	kit.Must(t, "get add-on hello", err)
	if c := meta.FindStatusCondition(hello.Status.Conditions, addonv1alpha1.ManagedClusterAddOnPodSecurity); c != nil {
		t.Errorf("add-on hello, installed in %s, has a PodSecurity condition: %+v", hello.Status.Namespace, c)
	}

	// Back to the default: the namespace only warns, the agent says so,
	// and the hub no longer checks strict's Pods.
	s.update(t, s.hubC, tpl, false, func() { tpl.Spec.AgentSpec.Workload.Manifests = manifests(t, strictManifests) })
	s.setDesired(t, "strict", nil, tplRef)
	s.waitCondition(t, "strict", addonv1alpha1.ManagedClusterAddOnPodSecurity, metav1.ConditionFalse, addonv1alpha1.PodSecurityReasonViolatesRestricted)
	s.setAddonNamespaceClaim(t, "privileged")
	s.poll(t, "strict's PodSecurity condition removed", func(ctx context.Context) (bool, error) {
		m, err := s.mca(ctx, "strict")
		return err == nil && meta.FindStatusCondition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnPodSecurity) == nil, err
	})
	mca, err = s.mca(s.ctx, "strict")
	kit.Must(t, "get add-on strict", err)

	kit.Must(t, "delete add-on strict", s.hubC.Delete(s.ctx, mca))
	s.poll(t, "strict's works and agent gone", func(ctx context.Context) (bool, error) {
		return gone(ctx,
			objectRef{s.hubC, client.ObjectKey{Namespace: clusterName, Name: "addon-strict-deploy-0"}, &workv1.ManifestWork{}},
			objectRef{s.spokeC, client.ObjectKey{Namespace: ns, Name: "strict-agent"}, &appsv1.Deployment{}},
		)
	})
}
