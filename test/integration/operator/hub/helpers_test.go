package hub

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/runner"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// wait bounds every wait of the suite: a rollout restarts one process.
const wait = 2 * time.Minute

// operatorLeaderElection are the ClusterManager operator's leader election
// timings in the suite, which `hub init --operator-leader-elect-*` sets.
var operatorLeaderElection = config.LeaderElection{Timings: leaderelect.Timings{LeaseDuration: 12 * time.Second, RenewDeadline: 8 * time.Second, RetryPeriod: 2 * time.Second}}

// suite is one hub with the runner and the operator's install applied.
type suite struct {
	ctx    context.Context
	hub    *framework.Cluster
	admin  client.Client
	runner *runner.Runner
}

// newSuite starts a hub and the component runner with the ocm-controller
// binary, and applies only what `hub init` writes: the operator and the
// ClusterManager.
func newSuite(t *testing.T) *suite {
	t.Helper()
	ctx, env, ocmRunner := hubtest.StartRunner(t, 15*time.Minute, framework.Options{})
	s := &suite{ctx: ctx, hub: env.Cluster("hub"), runner: ocmRunner}
	s.admin = s.hub.Client()
	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	objs, err := config.HubOperatorObjects(config.HubOperatorValues{ConversionWebhookURL: fmt.Sprintf("https://127.0.0.1:%d/convert", port),
		LeaderElection: operatorLeaderElection, HubLeaderElection: hubtest.LeaderElection})
	if err != nil {
		t.Fatal(err)
	}
	if err := apply.Apply(ctx, s.admin, objs, apply.Options{}); err != nil {
		t.Fatalf("apply the operator and the ClusterManager: %v", err)
	}
	return s
}

// clusterManager reads the ClusterManager.
func (s *suite) clusterManager(ctx context.Context) (*operatorv1.ClusterManager, error) {
	cm := &operatorv1.ClusterManager{}
	return cm, s.admin.Get(ctx, client.ObjectKey{Name: operatorv1.ClusterManagerName}, cm)
}

// edit changes the ClusterManager's spec with mutate and returns its new
// generation.
func (s *suite) edit(t *testing.T, mutate func(*operatorv1.ClusterManager)) int64 {
	t.Helper()
	var generation int64
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := s.clusterManager(s.ctx)
		if err != nil {
			return err
		}
		mutate(cm)
		if err := s.admin.Update(s.ctx, cm); err != nil {
			return err
		}
		generation = cm.Generation
		return nil
	})
	if err != nil {
		t.Fatalf("edit the ClusterManager: %v", err)
	}
	return generation
}

// waitCondition waits until the ClusterManager's condition typ has status
// at generation (0: any), and returns it.
func (s *suite) waitCondition(t *testing.T, generation int64, typ string, status metav1.ConditionStatus) metav1.Condition {
	t.Helper()
	return s.waitConditionNaming(t, generation, typ, status, "")
}

// waitConditionNaming is waitCondition that also waits for the condition's
// message to contain cause (any message when cause is empty).
func (s *suite) waitConditionNaming(t *testing.T, generation int64, typ string, status metav1.ConditionStatus, cause string) metav1.Condition {
	t.Helper()
	var got metav1.Condition
	what := fmt.Sprintf("ClusterManager condition %s=%s at generation %d", typ, status, generation)
	if cause != "" {
		what += " naming " + cause
	}
	framework.Eventually(s.ctx, t, wait, what, func(ctx context.Context) (bool, error) {
		cm, err := s.clusterManager(ctx)
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(cm.Status.Conditions, typ)
		if c == nil {
			return false, fmt.Errorf("no condition %s in %+v", typ, cm.Status.Conditions)
		}
		got = *c
		if generation != 0 && (c.ObservedGeneration != generation || cm.Status.ObservedGeneration != generation) {
			return false, fmt.Errorf("condition %s at generation %d: %s", typ, c.ObservedGeneration, c.Message)
		}
		if c.Status != status || !strings.Contains(c.Message, cause) {
			return false, fmt.Errorf("%s=%s %s: %s", typ, c.Status, c.Reason, c.Message)
		}
		return true, nil
	})
	return got
}

// waitAvailable waits until the ClusterManager is Available at generation,
// with Applied True and no degraded controller.
func (s *suite) waitAvailable(t *testing.T, generation int64) {
	t.Helper()
	s.waitCondition(t, generation, operatorv1.ConditionClusterManagerAvailable, metav1.ConditionTrue)
	s.waitCondition(t, generation, operatorv1.ConditionClusterManagerApplied, metav1.ConditionTrue)
	s.waitCondition(t, generation, operatorv1.ConditionHubRegistrationDegraded, metav1.ConditionFalse)
	s.waitCondition(t, generation, operatorv1.ConditionHubPlacementDegraded, metav1.ConditionFalse)
	s.waitCondition(t, generation, operatorv1.ConditionProgressing, metav1.ConditionFalse)
}

// controller reads the hub controller Deployment.
func (s *suite) controller(ctx context.Context) (*appsv1.Deployment, error) {
	dep := &appsv1.Deployment{}
	return dep, s.admin.Get(ctx, client.ObjectKey{Namespace: config.HubNamespace, Name: config.HubControllerDeployment}, dep)
}

// waitController waits until the hub controller Deployment satisfies ok,
// which describes what it lacks.
func (s *suite) waitController(t *testing.T, what string, ok func(*appsv1.Deployment) error) *appsv1.Deployment {
	t.Helper()
	var dep *appsv1.Deployment
	framework.Eventually(s.ctx, t, wait, "the hub controller Deployment: "+what, func(ctx context.Context) (bool, error) {
		d, err := s.controller(ctx)
		if err != nil {
			return false, err
		}
		dep = d
		err = ok(d)
		return err == nil, err
	})
	return dep
}

// process returns the runner's process of the hub controller, once it runs
// with args containing want.
func (s *suite) process(t *testing.T, want string) runner.ProcessInfo {
	t.Helper()
	var info runner.ProcessInfo
	framework.Eventually(s.ctx, t, wait, "a hub controller process with "+want, func(context.Context) (bool, error) {
		p, ok := s.runner.Process("hub", config.HubNamespace, config.HubControllerDeployment)
		info = p
		if !ok || p.Pid == 0 {
			return false, fmt.Errorf("no process")
		}
		for _, a := range p.Args {
			if a == want {
				return true, nil
			}
		}
		return false, fmt.Errorf("args %v", p.Args)
	})
	return info
}

// waitApprovedAndAccepted waits until the hub controller approved the
// request name, the certificate is issued, and cluster is accepted.
func (s *suite) waitApprovedAndAccepted(t *testing.T, name, cluster string) {
	t.Helper()
	framework.Eventually(s.ctx, t, wait, cluster+"'s first-join request approved and "+cluster+" accepted", func(ctx context.Context) (bool, error) {
		csr := &certificatesv1.CertificateSigningRequest{}
		mc := &clusterv1.ManagedCluster{}
		if err := s.admin.Get(ctx, client.ObjectKey{Name: name}, csr); err != nil {
			return false, err
		}
		if err := s.admin.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return false, err
		}
		return certs.StateOf(csr).Phase == certs.RequestIssued && mc.Spec.HubAcceptsClient, nil
	})
}
