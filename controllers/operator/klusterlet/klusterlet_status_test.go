package klusterlet

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus/deploystatustest"
)

// The ClusterManager operator's test of setDeploymentConditions has the
// same cases: both operators judge their Deployments alike.
func TestSetDeploymentStatus(t *testing.T) {
	dep := func(st appsv1.DeploymentStatus) *appsv1.Deployment {
		return deploystatustest.Deployment(config.AgentNamespace, config.AgentDeployment, st)
	}
	tests := []struct {
		name            string
		dep             *appsv1.Deployment
		wantAvailable   metav1.ConditionStatus
		wantProgressing metav1.ConditionStatus
		wantReason      string
		wantMessage     string
	}{
		{"rolled out", dep(deploystatustest.RolledOut()),
			metav1.ConditionTrue, metav1.ConditionFalse, operatorv1.ReasonKlusterletUpToDate, "is available"},
		{"the new generation is not observed yet", dep(deploystatustest.NotObserved()),
			metav1.ConditionFalse, metav1.ConditionTrue, operatorv1.ReasonKlusterletDeploymentRolling, "has not observed generation 2"},
		{"an old replica remains", dep(deploystatustest.OldReplicaPending()),
			metav1.ConditionFalse, metav1.ConditionTrue, operatorv1.ReasonKlusterletDeploymentRolling, "1 old replicas pending termination"},
		{"not available, with the Deployment's cause", dep(deploystatustest.Unavailable("MinimumReplicasUnavailable", "no")),
			metav1.ConditionFalse, metav1.ConditionTrue, operatorv1.ReasonKlusterletDeploymentRolling, "0 of 1 updated replicas available (MinimumReplicasUnavailable: no)"},
		{"past its progress deadline", dep(deploystatustest.PastDeadline("timed out")),
			metav1.ConditionFalse, metav1.ConditionFalse, deploystatus.ReasonProgressDeadlineExceeded, "exceeded its progress deadline"},
		{"missing", nil, metav1.ConditionFalse, metav1.ConditionTrue, operatorv1.ReasonKlusterletDeploymentRolling, "does not exist yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(apis.Scheme)
			if tt.dep != nil {
				b = b.WithObjects(tt.dep)
			}
			r := &Reconciler{Client: b.Build()}
			k := &operatorv1.Klusterlet{ObjectMeta: metav1.ObjectMeta{Name: "klusterlet", Generation: 4}}
			if err := r.setDeploymentStatus(t.Context(), k, config.AgentNamespace, config.AgentDeployment); err != nil {
				t.Fatal(err)
			}
			available := meta.FindStatusCondition(k.Status.Conditions, operatorv1.ConditionKlusterletAvailable)
			progressing := meta.FindStatusCondition(k.Status.Conditions, operatorv1.ConditionProgressing)
			if available.Status != tt.wantAvailable || progressing.Status != tt.wantProgressing || progressing.Reason != tt.wantReason {
				t.Errorf("Available=%s, Progressing=%s (%s); want %s, %s (%s)", available.Status, progressing.Status, progressing.Reason,
					tt.wantAvailable, tt.wantProgressing, tt.wantReason)
			}
			if !strings.Contains(available.Message, tt.wantMessage) {
				t.Errorf("Available message %q lacks %q", available.Message, tt.wantMessage)
			}
			degraded := meta.FindStatusCondition(k.Status.Conditions, operatorv1.ConditionWorkDesiredDegraded)
			if (degraded.Status == metav1.ConditionTrue) != (tt.wantAvailable == metav1.ConditionFalse) {
				t.Errorf("WorkDesiredDegraded=%s with Available=%s", degraded.Status, available.Status)
			}
		})
	}
}
