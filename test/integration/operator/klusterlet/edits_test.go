package klusterlet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// testLiveEdits edits one field of the Klusterlet per subtest and checks
// that the agent follows: its Deployment rolls and the running process has
// the new settings.
func (s *suite) testLiveEdits(t *testing.T) {
	ns := config.AgentNamespace
	flagEdits := []struct {
		name     string
		change   func(k *operatorv1.Klusterlet)
		wantArgs []string
	}{
		{name: "workConfiguration QPS, burst and statusSyncInterval", change: func(k *operatorv1.Klusterlet) {
			k.Spec.WorkConfiguration = &operatorv1.WorkAgentConfiguration{HubKubeAPIQPS: 7, HubKubeAPIBurst: 14, KubeAPIQPS: 9, KubeAPIBurst: 18,
				StatusSyncInterval: &metav1.Duration{Duration: 7 * time.Second}, AppliedManifestWorkEvictionGracePeriod: &metav1.Duration{Duration: 2 * time.Hour}}
		}, wantArgs: []string{"--hub-kube-api-qps=7", "--hub-kube-api-burst=14", "--work-kube-api-qps=9", "--work-kube-api-burst=18",
			"--status-sync-interval=7s", "--appliedmanifestwork-eviction-grace-period=2h0m0s"}},
		{name: "clientCertExpirationSeconds and clusterHealthCheckPeriod", change: func(k *operatorv1.Klusterlet) {
			k.Spec.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{ClientCertExpirationSeconds: 7200,
				ClusterHealthCheckPeriod: &metav1.Duration{Duration: 30 * time.Second}}
		}, wantArgs: []string{"--client-cert-expiration-seconds=7200", "--cluster-healthcheck-period=30s"}},
		{name: "externalServerURLs", change: func(k *operatorv1.Klusterlet) {
			k.Spec.ExternalServerURLs = []operatorv1.ServerURL{{URL: "https://cluster1.example.com:6443"}}
		}, wantArgs: []string{"--spoke-external-server-urls=https://cluster1.example.com:6443"}},
		{name: "imagePullSpec", change: func(k *operatorv1.Klusterlet) {
			k.Spec.ImagePullSpec = "registry.example.com/mirror/ocm-controller:v2"
		}},
	}
	for _, tt := range flagEdits {
		t.Run("edit "+tt.name, func(t *testing.T) {
			before := s.waitAvailable(t, "the agent before the edit", ns)
			s.edit(t, tt.change)
			dep := s.waitRolled(t, ns, before)
			args := s.processArgs(t, ns, dep)
			for _, want := range tt.wantArgs {
				if !slices.Contains(args, want) {
					t.Errorf("the agent runs with %q, which lacks %s", args, want)
				}
			}
			s.waitJoined(t, clusterName)
		})
	}

	t.Run("edit nodePlacement", func(t *testing.T) {
		before := s.waitAvailable(t, "the agent before the edit", ns)
		s.edit(t, func(k *operatorv1.Klusterlet) {
			k.Spec.NodePlacement = operatorv1.NodePlacement{NodeSelector: map[string]string{"node-role.kubernetes.io/infra": ""},
				Tolerations: []corev1.Toleration{{Key: "infra", Operator: corev1.TolerationOpExists}}}
		})
		dep := s.waitRolled(t, ns, before)
		pod := dep.Spec.Template.Spec
		if _, ok := pod.NodeSelector["node-role.kubernetes.io/infra"]; !ok || len(pod.Tolerations) != 1 {
			t.Errorf("agent pod nodeSelector %v tolerations %v, want the Klusterlet's nodePlacement", pod.NodeSelector, pod.Tolerations)
		}
	})

	t.Run("edit featureGates: ClusterClaim off reports no claims", func(t *testing.T) {
		claim := &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: "region.example.com"}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: "eu"}}
		if err := s.spoke.Create(s.ctx, claim); err != nil {
			t.Fatal(err)
		}
		s.waitClaims(t, func(claims []clusterv1.ManagedClusterClaim) bool {
			return slices.ContainsFunc(claims, func(c clusterv1.ManagedClusterClaim) bool { return c.Name == claim.Name })
		}, "claim "+claim.Name+" reported")
		before := s.waitAvailable(t, "the agent before the edit", ns)
		s.edit(t, func(k *operatorv1.Klusterlet) {
			if k.Spec.RegistrationConfiguration == nil {
				k.Spec.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{}
			}
			k.Spec.RegistrationConfiguration.FeatureGates = []operatorv1.FeatureGate{{Feature: "ClusterClaim", Mode: operatorv1.FeatureGateModeTypeDisable}}
		})
		dep := s.waitRolled(t, ns, before)
		if args := s.processArgs(t, ns, dep); !slices.Contains(args, "--feature-gates=ClusterClaim=false") {
			t.Errorf("the agent runs with %q, without ClusterClaim=false", args)
		}
		s.waitClaims(t, func(claims []clusterv1.ManagedClusterClaim) bool { return len(claims) == 0 }, "no claims reported")
	})

	t.Run("edit namespace: the agent moves and keeps its identity", func(t *testing.T) {
		const moved = "open-cluster-management-moved"
		s.edit(t, func(k *operatorv1.Klusterlet) { k.Spec.Namespace = moved })
		s.waitAvailable(t, "the agent in namespace "+moved, moved)
		framework.Eventually(s.ctx, t, wait, "the old namespace "+ns+" removed", func(ctx context.Context) (bool, error) {
			return apierrors.IsNotFound(s.spoke.Get(ctx, types.NamespacedName{Name: ns}, &corev1.Namespace{})), nil
		})
		for _, name := range []string{operatorv1.BootstrapHubKubeConfigSecret, operatorv1.HubKubeConfigSecret} {
			if err := s.spoke.Get(s.ctx, types.NamespacedName{Namespace: moved, Name: name}, &corev1.Secret{}); err != nil {
				t.Errorf("Secret %s did not move to namespace %s: %v", name, moved, err)
			}
		}
		s.waitJoined(t, clusterName)
	})

	t.Run("edit clusterName: the agent registers the new name", func(t *testing.T) {
		const renamed = "cluster1-renamed"
		before := s.waitAvailable(t, "the agent before the edit", "open-cluster-management-moved")
		s.edit(t, func(k *operatorv1.Klusterlet) { k.Spec.ClusterName = renamed })
		dep := s.waitRolled(t, "open-cluster-management-moved", before)
		if args := s.processArgs(t, "open-cluster-management-moved", dep); !slices.Contains(args, "--cluster-name="+renamed) {
			t.Errorf("the agent runs with %q, not as %s", args, renamed)
		}
		framework.Eventually(s.ctx, t, wait, "ManagedCluster "+renamed+" registered", func(ctx context.Context) (bool, error) {
			return true, s.hub.Get(ctx, types.NamespacedName{Name: renamed}, &clusterv1.ManagedCluster{})
		})
		clitest.ExpectOK(t, s.onHub.Run(s.ctx, "accept", "--clusters", renamed, "--wait", "--timeout", "2m"))
		s.waitJoined(t, renamed)
	})
}

// waitRolled waits until the agent Deployment in namespace has a newer
// generation than before and the Klusterlet reports it available.
func (s *suite) waitRolled(t *testing.T, namespace string, before *appsv1.Deployment) *appsv1.Deployment {
	t.Helper()
	dep := s.waitAvailable(t, "the edited agent", namespace)
	if dep.Generation <= before.Generation {
		framework.Eventually(s.ctx, t, wait, "the agent Deployment rolled", func(ctx context.Context) (bool, error) {
			dep = s.waitAvailable(t, "the edited agent", namespace)
			return dep.Generation > before.Generation, nil
		})
	}
	return dep
}

// processArgs returns the arguments of the process running the agent
// Deployment dep, once it runs dep's current pod template. The component
// runner rewrites bind addresses and paths inside the container's volume
// mounts to local ones; those arguments are not compared.
func (s *suite) processArgs(t *testing.T, namespace string, dep *appsv1.Deployment) []string {
	t.Helper()
	ctr := dep.Spec.Template.Spec.Containers[0]
	want := ctr.Args
	rewritten := func(arg string) bool {
		if strings.Contains(arg, "-bind-address=") {
			return true
		}
		_, value, _ := strings.Cut(arg, "=")
		for _, m := range ctr.VolumeMounts {
			if strings.HasPrefix(value, m.MountPath) {
				return true
			}
		}
		return false
	}
	var args []string
	framework.Eventually(s.ctx, t, wait, "the agent process with the Deployment's arguments", func(context.Context) (bool, error) {
		info, ok := s.runner.Process(clusterName, namespace, dep.Name)
		if !ok || info.Pid == 0 {
			return false, fmt.Errorf("no process for Deployment %s/%s", namespace, dep.Name)
		}
		args = info.Args
		for _, a := range want {
			if !rewritten(a) && !slices.Contains(info.Args, a) {
				return false, fmt.Errorf("the process runs %q, not yet %q", info.Args, want)
			}
		}
		return true, nil
	})
	return args
}

// waitClaims waits until the claims the hub holds for the cluster satisfy ok.
func (s *suite) waitClaims(t *testing.T, ok func([]clusterv1.ManagedClusterClaim) bool, what string) {
	t.Helper()
	framework.Eventually(s.ctx, t, wait, what, func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := s.hub.Get(ctx, types.NamespacedName{Name: clusterName}, mc); err != nil {
			return false, err
		}
		return ok(mc.Status.ClusterClaims), nil
	})
}
