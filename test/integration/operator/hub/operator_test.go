package hub

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	csrpolicy "github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/runner"
)

// TestClusterManagerOperator installs a hub by applying only the operator
// and the ClusterManager, edits the ClusterManager live, one field per
// subtest, stops the hub controller, and deletes the ClusterManager.
func TestClusterManagerOperator(t *testing.T) {
	s := newSuite(t)
	s.waitAvailable(t, 1)
	cm, err := s.clusterManager(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var generations []string
	for _, g := range cm.Status.Generations {
		generations = append(generations, g.Name)
	}
	if len(cm.Status.RelatedResources) < 10 || !slices.Equal(generations, []string{config.HubControllerDeployment, config.HubTunnelDeployment}) {
		t.Errorf("relatedResources %d, generations %+v: want every rendered object and the hub controller's and the hub tunnel's Deployments", len(cm.Status.RelatedResources), cm.Status.Generations)
	}
	if !slices.Contains(cm.Finalizers, operatorv1.CleanupFinalizer) {
		t.Errorf("finalizers %v lack %s", cm.Finalizers, operatorv1.CleanupFinalizer)
	}
	image := cm.Spec.RegistrationImagePullSpec

	t.Run("an earlier release's cluster-bound bootstrap identities are removed", func(t *testing.T) { testEarlierClusterBootstrap(t, s) })
	t.Run("featureGates", func(t *testing.T) { testFeatureGates(t, s) })
	t.Run("autoApproveUsers", func(t *testing.T) { testAutoApproveUsers(t, s) })
	t.Run("nodePlacement", func(t *testing.T) { testNodePlacement(t, s) })
	t.Run("resourceRequirement", func(t *testing.T) { testResourceRequirement(t, s) })
	t.Run("image", func(t *testing.T) { testImage(t, s, image) })
	t.Run("registrationDrivers awsirsa is rejected", func(t *testing.T) { testAwsIrsaRejected(t, s) })
	t.Run("serverConfiguration and importerConfiguration are rejected", func(t *testing.T) { testUnsupportedServers(t, s) })
	t.Run("networkPolicyConfiguration", func(t *testing.T) { testNetworkPolicies(t, s) })
	t.Run("leaderElection", func(t *testing.T) { testLeaderElection(t, s) })
	t.Run("tlsProfile and ConfigMap ocm-tls-profile", func(t *testing.T) { testTLSProfile(t, s) })
	t.Run("image pull Secret", func(t *testing.T) { testPullSecret(t, s) })
	t.Run("a stopped hub controller turns the conditions false", func(t *testing.T) { testStoppedController(t, s, image) })
	t.Run("deletion", func(t *testing.T) { testDeletion(t, s) })
}

// testEarlierClusterBootstrap: an earlier release bound the bootstrap role
// to each cluster-bound bootstrap ServiceAccount, in the operator's
// namespace, with a ClusterRoleBinding of its own; this one binds it once
// to the group of identity.ClusterBootstrapNamespace. When the operator
// applies the hub it deletes the earlier release's bindings and
// ServiceAccounts (both labeled as the cluster-bootstrap component), and
// nothing of that name it did not label, nor this release's ServiceAccounts.
func testEarlierClusterBootstrap(t *testing.T, s *suite) {
	ctx := s.ctx
	labels := map[string]string{apply.PartOfLabelKey: apply.PartOfLabelValue, apply.ComponentLabelKey: apply.ClusterBootstrapComponent, clusterv1.ClusterNameLabelKey: "old"}
	oldSA := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: identity.BootstrapNamespace, Name: identity.ClusterBootstrapServiceAccount("old"), Labels: labels}}
	oldBinding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management:bootstrap:old", Labels: labels},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "open-cluster-management:bootstrap"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: identity.BootstrapNamespace, Name: oldSA.Name}}}
	// Someone else's binding of that form, and this release's identity.
	foreign := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management:bootstrap:foreign"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "open-cluster-management:bootstrap"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: identity.BootstrapNamespace, Name: identity.ClusterBootstrapServiceAccount("foreign")}}}
	current := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: identity.ClusterBootstrapNamespace, Name: identity.ClusterBootstrapServiceAccount("new"), Labels: labels}}
	for _, obj := range []client.Object{oldSA, oldBinding, foreign, current} {
		if err := s.admin.Create(ctx, obj); err != nil {
			t.Fatalf("create %T %s: %v", obj, obj.GetName(), err)
		}
	}
	t.Cleanup(func() {
		for _, obj := range []client.Object{foreign, current} {
			_ = s.admin.Delete(context.WithoutCancel(ctx), obj)
		}
	})
	gen := s.edit(t, func(cm *operatorv1.ClusterManager) {
		cm.Spec.PlacementConfiguration = &operatorv1.PlacementConfiguration{FeatureGates: []operatorv1.FeatureGate{
			{Feature: "SIGPlacementDecision", Mode: operatorv1.FeatureGateModeTypeEnable}}}
	})
	s.waitCondition(t, gen, operatorv1.ConditionClusterManagerApplied, metav1.ConditionTrue)
	for _, obj := range []client.Object{oldSA, oldBinding} {
		if err := s.admin.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
			t.Errorf("the earlier release's %T %s is still there (err %v)", obj, client.ObjectKeyFromObject(obj), err)
		}
	}
	for _, obj := range []client.Object{foreign, current} {
		if err := s.admin.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Errorf("%T %s, which the operator did not make in an earlier release: %v", obj, client.ObjectKeyFromObject(obj), err)
		}
	}
	gen = s.edit(t, func(cm *operatorv1.ClusterManager) { cm.Spec.PlacementConfiguration = nil })
	s.waitAvailable(t, gen)
}

// testFeatureGates sets the feature gates of the three hub components and
// checks that the hub controller runs with them and that an unknown one is
// named; then removes them.
func testFeatureGates(t *testing.T, s *suite) {
	gen := s.edit(t, func(cm *operatorv1.ClusterManager) {
		cm.Spec.WorkConfiguration.FeatureGates = []operatorv1.FeatureGate{{Feature: "ManifestWorkReplicaSet", Mode: operatorv1.FeatureGateModeTypeDisable}}
		cm.Spec.RegistrationConfiguration = &operatorv1.RegistrationHubConfiguration{FeatureGates: []operatorv1.FeatureGate{
			{Feature: "ClusterProfile", Mode: operatorv1.FeatureGateModeTypeDisable}, {Feature: "NoSuchFeature", Mode: operatorv1.FeatureGateModeTypeEnable}}}
		cm.Spec.PlacementConfiguration = &operatorv1.PlacementConfiguration{FeatureGates: []operatorv1.FeatureGate{
			{Feature: "SIGPlacementDecision", Mode: operatorv1.FeatureGateModeTypeEnable}}}
	})
	s.waitAvailable(t, gen)
	s.process(t, "--feature-gates=ClusterProfile=false,ManifestWorkReplicaSet=false,SIGPlacementDecision=true")
	applied := s.waitCondition(t, gen, operatorv1.ConditionClusterManagerApplied, metav1.ConditionTrue)
	if !strings.Contains(applied.Message, "NoSuchFeature") {
		t.Errorf("Applied message %q does not name the unknown feature gate", applied.Message)
	}
	gen = s.edit(t, func(cm *operatorv1.ClusterManager) {
		cm.Spec.WorkConfiguration.FeatureGates, cm.Spec.RegistrationConfiguration, cm.Spec.PlacementConfiguration = nil, nil, nil
	})
	s.waitAvailable(t, gen)
	s.waitController(t, "no --feature-gates", func(dep *appsv1.Deployment) error {
		if args := dep.Spec.Template.Spec.Containers[0].Args; slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--feature-gates") }) {
			return fmt.Errorf("args %v", args)
		}
		return nil
	})
}

// testAutoApproveUsers checks that the hub controller approves and accepts
// the first joins of the users of autoApproveUsers, of the csr driver's
// autoApprovedIdentities, and none with ManagedClusterAutoApproval off.
func testAutoApproveUsers(t *testing.T, s *suite) {
	bootCfg, err := s.hub.ConfigForServiceAccount(s.ctx, identity.BootstrapNamespace, identity.BootstrapServiceAccount, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	boot, err := client.New(bootCfg, client.Options{Scheme: s.admin.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	// register files cluster's first-join request as the bootstrap
	// identity and returns the request's name.
	register := func(t *testing.T, cluster string) string {
		if err := boot.Create(s.ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}}); err != nil {
			t.Fatalf("register %s as the bootstrap identity: %v", cluster, err)
		}
		return fileAgentCSR(s.ctx, t, boot, cluster)
	}
	s.edit(t, func(cm *operatorv1.ClusterManager) {
		cm.Spec.RegistrationConfiguration = &operatorv1.RegistrationHubConfiguration{AutoApproveUsers: []string{identity.BootstrapUser}}
	})
	s.waitApprovedAndAccepted(t, register(t, "c1"), "c1")

	t.Run("the csr registration driver's autoApprovedIdentities", func(t *testing.T) {
		s.edit(t, func(cm *operatorv1.ClusterManager) {
			cm.Spec.RegistrationConfiguration = &operatorv1.RegistrationHubConfiguration{RegistrationDrivers: []operatorv1.RegistrationDriverHub{{
				AuthType: operatorv1.CSRAuthType, CSR: &operatorv1.CSRConfig{AutoApprovedIdentities: []string{identity.BootstrapUser}}}}}
		})
		s.waitApprovedAndAccepted(t, register(t, "c2"), "c2")
	})

	t.Run("ManagedClusterAutoApproval off", func(t *testing.T) {
		gen := s.edit(t, func(cm *operatorv1.ClusterManager) {
			cm.Spec.RegistrationConfiguration = &operatorv1.RegistrationHubConfiguration{AutoApproveUsers: []string{identity.BootstrapUser},
				FeatureGates: []operatorv1.FeatureGate{{Feature: "ManagedClusterAutoApproval", Mode: operatorv1.FeatureGateModeTypeDisable}}}
		})
		s.waitAvailable(t, gen)
		off := s.process(t, "--feature-gates=ManagedClusterAutoApproval=false")
		name := register(t, "c3")
		// A hub controller that approved would do so within a second;
		// this one leaves the request pending.
		framework.Consistently(s.ctx, t, 5*time.Second, "c3's first-join request pending with ManagedClusterAutoApproval off", func(ctx context.Context) (bool, error) {
			csr := &certificatesv1.CertificateSigningRequest{}
			if err := s.admin.Get(ctx, client.ObjectKey{Name: name}, csr); err != nil {
				return false, err
			}
			return certs.StateOf(csr).Phase == certs.RequestPending, nil
		})
		// Turned back on, the same request is approved.
		s.waitAvailable(t, s.edit(t, func(cm *operatorv1.ClusterManager) {
			cm.Spec.RegistrationConfiguration = &operatorv1.RegistrationHubConfiguration{AutoApproveUsers: []string{identity.BootstrapUser}}
		}))
		framework.Eventually(s.ctx, t, wait, "a new hub controller process", func(context.Context) (bool, error) {
			p, ok := s.runner.Process("hub", config.HubNamespace, config.HubControllerDeployment)
			return ok && p.Pid != 0 && p.Pid != off.Pid, nil
		})
		s.waitApprovedAndAccepted(t, name, "c3")
	})
}

// testNodePlacement checks that the hub controller's Pods take the
// ClusterManager's nodePlacement.
func testNodePlacement(t *testing.T, s *suite) {
	placement := operatorv1.NodePlacement{
		NodeSelector: map[string]string{"node-role.kubernetes.io/control-plane": ""},
		Tolerations:  []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
	}
	gen := s.edit(t, func(cm *operatorv1.ClusterManager) { cm.Spec.NodePlacement = placement })
	s.waitController(t, "the node selector and tolerations", func(dep *appsv1.Deployment) error {
		pod := dep.Spec.Template.Spec
		if !reflect.DeepEqual(pod.NodeSelector, placement.NodeSelector) || !reflect.DeepEqual(pod.Tolerations, placement.Tolerations) {
			return fmt.Errorf("nodeSelector %v, tolerations %v", pod.NodeSelector, pod.Tolerations)
		}
		return nil
	})
	s.waitAvailable(t, gen)
	s.waitAvailable(t, s.edit(t, func(cm *operatorv1.ClusterManager) { cm.Spec.NodePlacement = operatorv1.NodePlacement{} }))
}

// testResourceRequirement checks that the hub controller's container takes
// the ClusterManager's resourceRequirement.
func testResourceRequirement(t *testing.T, s *suite) {
	want := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}
	gen := s.edit(t, func(cm *operatorv1.ClusterManager) {
		cm.Spec.ResourceRequirement = &operatorv1.ResourceRequirement{Type: operatorv1.ResourceQosClassResourceRequirement, ResourceRequirements: &want}
	})
	s.waitController(t, "the resources", func(dep *appsv1.Deployment) error {
		if got := dep.Spec.Template.Spec.Containers[0].Resources; !reflect.DeepEqual(got.Requests, want.Requests) || got.Limits != nil {
			return fmt.Errorf("resources %v", got)
		}
		return nil
	})
	s.waitAvailable(t, gen)
	s.waitAvailable(t, s.edit(t, func(cm *operatorv1.ClusterManager) { cm.Spec.ResourceRequirement = nil }))
}

// testImage checks that a new image restarts the hub controller with it;
// image is the one to go back to.
func testImage(t *testing.T, s *suite, image string) {
	before := s.process(t, "--leader-elect=true")
	mirror := "registry.example.com/mirror/ocm-controller:v9.9.9"
	gen := s.edit(t, func(cm *operatorv1.ClusterManager) { setImages(cm, mirror) })
	s.waitController(t, "image "+mirror, func(dep *appsv1.Deployment) error {
		if got := dep.Spec.Template.Spec.Containers[0].Image; got != mirror {
			return fmt.Errorf("image %s", got)
		}
		return nil
	})
	s.waitAvailable(t, gen)
	if after := s.process(t, "--leader-elect=true"); after.Pid == before.Pid {
		t.Errorf("the hub controller process %d was not restarted with the new image", after.Pid)
	}
	s.waitAvailable(t, s.edit(t, func(cm *operatorv1.ClusterManager) { setImages(cm, image) }))
}

// testAwsIrsaRejected checks that registrationDrivers awsirsa is rejected.
func testAwsIrsaRejected(t *testing.T, s *suite) {
	dep, err := s.controller(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	gen := s.edit(t, func(cm *operatorv1.ClusterManager) {
		cm.Spec.RegistrationConfiguration = &operatorv1.RegistrationHubConfiguration{RegistrationDrivers: []operatorv1.RegistrationDriverHub{{AuthType: operatorv1.AwsIrsaAuthType}}}
	})
	applied := s.waitCondition(t, gen, operatorv1.ConditionClusterManagerApplied, metav1.ConditionFalse)
	if applied.Reason != config.ReasonRegistrationDriverUnsupported || !strings.Contains(applied.Message, "awsirsa") {
		t.Errorf("Applied = %s: %s, want reason %s naming awsirsa", applied.Reason, applied.Message, config.ReasonRegistrationDriverUnsupported)
	}
	s.waitCondition(t, gen, operatorv1.ConditionClusterManagerAvailable, metav1.ConditionTrue)
	if now, err := s.controller(s.ctx); err != nil || now.Generation != dep.Generation {
		t.Errorf("the hub controller Deployment changed: generation %d, was %d (%v)", now.Generation, dep.Generation, err)
	}
	s.waitAvailable(t, s.edit(t, func(cm *operatorv1.ClusterManager) { cm.Spec.RegistrationConfiguration = nil }))
}

// testStoppedController checks that a stopped hub controller turns the
// conditions false.
func testStoppedController(t *testing.T, s *suite, image string) {
	gen := s.edit(t, func(cm *operatorv1.ClusterManager) { setImages(cm, "registry.example.com/mirror/no-such-binary:v1") })
	// The conditions first say the rollout started; then the cause
	// the Deployment reports once its Pod cannot run.
	s.waitConditionNaming(t, gen, operatorv1.ConditionClusterManagerAvailable, metav1.ConditionFalse, runner.ReasonImageNotMapped)
	s.waitConditionNaming(t, gen, operatorv1.ConditionHubRegistrationDegraded, metav1.ConditionTrue, runner.ReasonImageNotMapped)
	s.waitAvailable(t, s.edit(t, func(cm *operatorv1.ClusterManager) { setImages(cm, image) }))
}

// testDeletion deletes the ClusterManager while cluster c1 is registered:
// refused, then forced; the hub goes, the operator's own install stays.
func testDeletion(t *testing.T, s *suite) {
	cm, err := s.clusterManager(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.admin.Delete(s.ctx, cm); err != nil {
		t.Fatal(err)
	}
	refused := s.waitCondition(t, 0, operatorv1.ConditionClusterManagerApplied, metav1.ConditionFalse)
	if refused.Reason != operatorv1.ReasonManagedClustersExist || !strings.Contains(refused.Message, "c1") {
		t.Errorf("Applied = %s: %s, want %s naming c1", refused.Reason, refused.Message, operatorv1.ReasonManagedClustersExist)
	}
	if _, err := s.controller(s.ctx); err != nil {
		t.Errorf("the hub controller Deployment while refusing: %v", err)
	}
	s.edit(t, func(cm *operatorv1.ClusterManager) {
		metav1.SetMetaDataAnnotation(&cm.ObjectMeta, operatorv1.ForceCleanAnnotation, "true")
	})
	framework.Eventually(s.ctx, t, wait, "the ClusterManager removed", func(ctx context.Context) (bool, error) {
		_, err := s.clusterManager(ctx)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	gone := map[string]client.Object{
		"ManagedCluster c1":                &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}},
		"the hub controller Deployment":    &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: config.HubNamespace, Name: config.HubControllerDeployment}},
		"the ManagedCluster CRD":           &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "managedclusters.cluster.open-cluster-management.io"}},
		"the hub controller's ClusterRole": &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management:hub-controller"}},
	}
	for what, obj := range gone {
		err := s.admin.Get(s.ctx, client.ObjectKeyFromObject(obj), obj)
		if !apierrors.IsNotFound(err) && !errors.Is(err, context.Canceled) {
			t.Errorf("%s after the ClusterManager was removed: %v, want NotFound", what, err)
		}
	}
	for _, obj := range []client.Object{
		&apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: config.ClusterManagersCRDName}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: config.OperatorNamespace, Name: config.HubOperatorDeployment}},
	} {
		if err := s.admin.Get(s.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Errorf("the operator's own install: %v", err)
		}
	}
}

// setImages sets the ClusterManager's four image pull specs to image.
func setImages(cm *operatorv1.ClusterManager, image string) {
	cm.Spec.RegistrationImagePullSpec, cm.Spec.WorkImagePullSpec = image, image
	cm.Spec.PlacementImagePullSpec, cm.Spec.AddOnManagerImagePullSpec = image, image
}

// fileAgentCSR files, as c's user, the first-join certificate request of
// cluster's agent, as the agent does, and returns its name.
func fileAgentCSR(ctx context.Context, t *testing.T, c client.Client, cluster string) string {
	t.Helper()
	p, err := certs.NewPendingRequest()
	if err != nil {
		t.Fatal(err)
	}
	template := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: cluster + "-", Labels: map[string]string{clusterv1.ClusterNameLabelKey: cluster}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     csrpolicy.AgentUsages(),
		},
	}
	if _, _, err := certs.Request(ctx, c, p, certs.AgentSubject(cluster, "agent1"), template); err != nil {
		t.Fatal(err)
	}
	return p.CSRName
}
