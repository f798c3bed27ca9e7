// Package klusterlet tests the Klusterlet operator on real API servers: a
// managed cluster gets only what a GitOps repository holds (the operator,
// the bootstrap Secret and the Klusterlet), the operator installs the agent,
// the cluster joins, the namespaces on both sides enforce Pod Security level
// restricted and admit the product's Pods, and each edit of the Klusterlet
// applies live.
package klusterlet

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	hubcli "github.com/kubectl-ocm/kubectl-ocm/plugins/hub"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/runner"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

const (
	clusterName = "cluster1"
	// image maps to the ocm-controller binary in the component runner.
	image = "example.com/ocm-controller:v1"
	// wait bounds each wait of the test.
	wait = 2 * time.Minute
)

// suite is the environment the subtests share.
type suite struct {
	ctx        context.Context
	hub, spoke client.Client
	onHub      clitest.CLI
	runner     *runner.Runner
}

// TestKlusterletOperator installs a hub with `hub init`, applies on cluster1
// only the Klusterlet operator, the bootstrap Secret and the Klusterlet, and
// checks that the agent runs and the cluster joins after accept; then each
// edit of the Klusterlet in its own subtest, an agent that stops, and the
// deletion, which unjoins.
func TestKlusterletOperator(t *testing.T) {
	ctx, env, ocmRunner := hubtest.StartRunner(t, 15*time.Minute, framework.Options{Clusters: []string{clusterName}})
	hub, spoke := env.Cluster("hub"), env.Cluster(clusterName)
	s := &suite{ctx: ctx, hub: hub.Client(), spoke: spoke.Client(), onHub: clitest.CLI{Kubeconfig: env.Kubeconfig()}, runner: ocmRunner}
	// hub init with the image pull Secret: the operator and the hub
	// controller reference it, and --wait shows it blocks nothing.
	pullCredentials := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(pullCredentials, []byte(hubPullCredentials), 0o600); err != nil {
		t.Fatal(err)
	}
	clitest.ExpectOK(t, s.onHub.Run(ctx, "hub", "init", "--wait", "--timeout", "2m", "--image-pull-credentials", pullCredentials))
	s.testHubPullSecret(t)
	r := s.onHub.Run(ctx, "hub", "token", "-o", "json")
	clitest.ExpectOK(t, r)
	var join hubcli.JoinInfo
	if err := json.Unmarshal([]byte(r.Out), &join); err != nil {
		t.Fatalf("hub token -o json: %v\n%s", err, r.Out)
	}
	bootstrap, err := kubeconfig.ForToken(hub.Server(), hub.CAData(), join.HubToken)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("the operator installs the agent and the cluster joins", func(t *testing.T) {
		objs, _, err := config.KlusterletInstallObjects(config.KlusterletOperatorValues{Image: image},
			config.AgentValues{ClusterName: clusterName, Image: image, BootstrapKubeconfig: bootstrap}, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := apply.Apply(ctx, s.spoke, objs, apply.Options{FieldManager: "gitops"}); err != nil {
			t.Fatal(err)
		}
		s.waitAvailable(t, "the agent installed from the Klusterlet", config.AgentNamespace)
		clitest.ExpectOK(t, s.onHub.Run(ctx, "accept", "--clusters", clusterName, "--wait", "--timeout", "2m"))
		s.waitJoined(t, clusterName)
		k := s.klusterlet(t)
		for _, typ := range []string{operatorv1.ConditionKlusterletApplied, operatorv1.ConditionReadyToApply} {
			if !meta.IsStatusConditionTrue(k.Status.Conditions, typ) {
				t.Errorf("Klusterlet condition %s is not True: %+v", typ, k.Status.Conditions)
			}
		}
		for _, typ := range []string{operatorv1.ConditionRegistrationDesiredDegraded, operatorv1.ConditionWorkDesiredDegraded} {
			if !meta.IsStatusConditionFalse(k.Status.Conditions, typ) {
				t.Errorf("Klusterlet condition %s is not False: %+v", typ, k.Status.Conditions)
			}
		}
		if len(k.Status.RelatedResources) == 0 || len(k.Status.Generations) != 1 {
			t.Errorf("Klusterlet relatedResources %d, generations %+v; want the rendered objects and the agent Deployment", len(k.Status.RelatedResources), k.Status.Generations)
		}
	})

	t.Run("the product's namespaces enforce restricted and admit its Pods, the shared ones warn", func(t *testing.T) {
		checked := kit.ExpectSharedNamespace(ctx, t, s.hub, config.OperatorNamespace)
		checked = append(checked, kit.ExpectRestrictedPods(ctx, t, s.hub, config.HubNamespace, identity.AgentTokenNamespace, clusterName)...)
		checked = append(checked, kit.ExpectRestrictedPods(ctx, t, s.spoke, operatorv1.OperatorNamespace, config.AgentNamespace)...)
		checked = append(checked, kit.ExpectSharedNamespace(ctx, t, s.spoke, addonv1alpha1.DefaultAddonInstallNamespace)...)
		want := []string{
			config.OperatorNamespace + "/" + config.HubOperatorDeployment, config.HubNamespace + "/" + config.HubControllerDeployment,
			config.HubNamespace + "/" + config.HubTunnelDeployment, operatorv1.OperatorNamespace + "/klusterlet", config.AgentNamespace + "/" + config.AgentDeployment,
		}
		if !slices.Equal(checked, want) {
			t.Errorf("checked the Pods of Deployments %v, want those of %v", checked, want)
		}
	})

	s.testLiveEdits(t)
	s.testTuning(t)
	s.testTLSProfile(t)
	s.testPullSecret(t)
	s.testNetworkPolicies(t, hub.Server())

	t.Run("an agent that stops turns Available False with the cause, then back", func(t *testing.T) {
		s.edit(t, func(k *operatorv1.Klusterlet) { k.Spec.ImagePullSpec = "example.com/not-mapped:v1" })
		framework.Eventually(ctx, t, wait, "Klusterlet Available False with the Deployment's cause", func(ctx context.Context) (bool, error) {
			k := s.klusterlet(t)
			c := meta.FindStatusCondition(k.Status.Conditions, operatorv1.ConditionKlusterletAvailable)
			return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, runner.ReasonImageNotMapped), nil
		})
		k := s.klusterlet(t)
		if !meta.IsStatusConditionTrue(k.Status.Conditions, operatorv1.ConditionWorkDesiredDegraded) {
			t.Errorf("WorkDesiredDegraded is not True while the agent does not run: %+v", k.Status.Conditions)
		}
		s.edit(t, func(k *operatorv1.Klusterlet) { k.Spec.ImagePullSpec = image })
		s.waitAvailable(t, "the agent back on its image", k.AgentNamespace())
	})

	t.Run("deleting the Klusterlet unjoins and removes the agent", func(t *testing.T) {
		k := s.klusterlet(t)
		ns := k.AgentNamespace()
		if err := s.spoke.Delete(ctx, k); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(ctx, t, wait, "Klusterlet and agent namespace gone", func(ctx context.Context) (bool, error) {
			errK := s.spoke.Get(ctx, types.NamespacedName{Name: operatorv1.KlusterletName}, &operatorv1.Klusterlet{})
			errNS := s.spoke.Get(ctx, types.NamespacedName{Name: ns}, &corev1.Namespace{})
			return apierrors.IsNotFound(errK) && apierrors.IsNotFound(errNS), nil
		})
		for _, name := range []string{"open-cluster-management:klusterlet-agent:registration", "open-cluster-management:klusterlet-agent:work-apply"} {
			if err := s.spoke.Get(ctx, types.NamespacedName{Name: name}, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"}}); !apierrors.IsNotFound(err) {
				t.Errorf("ClusterRole %s remains after the Klusterlet's deletion (err %v)", name, err)
			}
		}
	})
}

// klusterlet reads the Klusterlet.
func (s *suite) klusterlet(t *testing.T) *operatorv1.Klusterlet {
	t.Helper()
	k := &operatorv1.Klusterlet{}
	if err := s.spoke.Get(s.ctx, types.NamespacedName{Name: operatorv1.KlusterletName}, k); err != nil {
		t.Fatal(err)
	}
	return k
}

// edit changes the Klusterlet's spec as a user would.
func (s *suite) edit(t *testing.T, change func(*operatorv1.Klusterlet)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		k := &operatorv1.Klusterlet{}
		if err := s.spoke.Get(s.ctx, types.NamespacedName{Name: operatorv1.KlusterletName}, k); err != nil {
			return err
		}
		change(k)
		return s.spoke.Update(s.ctx, k)
	})
	if err != nil {
		t.Fatalf("edit the Klusterlet: %v", err)
	}
}

// waitAvailable waits until the operator has observed the Klusterlet's
// generation and reports Available at the agent Deployment's current
// generation in namespace, and returns that Deployment.
func (s *suite) waitAvailable(t *testing.T, what, namespace string) *appsv1.Deployment {
	t.Helper()
	dep := &appsv1.Deployment{}
	framework.Eventually(s.ctx, t, wait, what+": Klusterlet Available", func(ctx context.Context) (bool, error) {
		k := s.klusterlet(t)
		if err := s.spoke.Get(ctx, types.NamespacedName{Namespace: namespace, Name: config.AgentDeployment}, dep); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(k.Status.Conditions, operatorv1.ConditionKlusterletAvailable)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != k.Generation || k.Status.ObservedGeneration != k.Generation {
			return false, fmt.Errorf("Klusterlet generation %d, conditions %+v", k.Generation, k.Status.Conditions)
		}
		if len(k.Status.Generations) != 1 || k.Status.Generations[0].LastGeneration != dep.Generation || k.Status.Generations[0].Namespace != namespace {
			return false, fmt.Errorf("Klusterlet generations %+v, Deployment %s/%s at %d", k.Status.Generations, namespace, dep.Name, dep.Generation)
		}
		return true, nil
	})
	return dep
}

// waitJoined waits until the agent reports a functional hub connection and
// the hub reports cluster available.
func (s *suite) waitJoined(t *testing.T, cluster string) {
	t.Helper()
	framework.Eventually(s.ctx, t, wait, "cluster "+cluster+" joined and available", func(ctx context.Context) (bool, error) {
		k := s.klusterlet(t)
		mc := &clusterv1.ManagedCluster{}
		if err := s.hub.Get(ctx, types.NamespacedName{Name: cluster}, mc); err != nil {
			return false, err
		}
		return meta.IsStatusConditionFalse(k.Status.Conditions, operatorv1.ConditionHubConnectionDegraded) &&
			meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
	})
}
