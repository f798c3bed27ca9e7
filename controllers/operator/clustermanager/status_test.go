package clustermanager

import (
	"errors"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus/deploystatustest"
)

// The Klusterlet operator's test of setDeploymentStatus has the same cases:
// both operators judge their Deployments alike.
func TestSetDeploymentConditions(t *testing.T) {
	dep := func(st appsv1.DeploymentStatus) *appsv1.Deployment {
		return deploystatustest.Deployment(config.HubNamespace, config.HubControllerDeployment, st)
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
			metav1.ConditionTrue, metav1.ConditionFalse, operatorv1.ReasonClusterManagerUpToDate, "is available"},
		{"the new generation is not observed yet", dep(deploystatustest.NotObserved()),
			metav1.ConditionFalse, metav1.ConditionTrue, operatorv1.ReasonClusterManagerDeploymentRolling, "has not observed generation 2"},
		{"an old replica remains", dep(deploystatustest.OldReplicaPending()),
			metav1.ConditionFalse, metav1.ConditionTrue, operatorv1.ReasonClusterManagerDeploymentRolling, "1 old replicas pending termination"},
		{"not available, with the Deployment's cause", dep(deploystatustest.Unavailable("MinimumReplicasUnavailable", "no")),
			metav1.ConditionFalse, metav1.ConditionTrue, operatorv1.ReasonClusterManagerDeploymentRolling, "0 of 1 updated replicas available (MinimumReplicasUnavailable: no)"},
		{"past its progress deadline", dep(deploystatustest.PastDeadline("timed out")),
			metav1.ConditionFalse, metav1.ConditionFalse, deploystatus.ReasonProgressDeadlineExceeded, "exceeded its progress deadline"},
		{"missing", nil, metav1.ConditionFalse, metav1.ConditionTrue, operatorv1.ReasonClusterManagerDeploymentRolling, "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: "cluster-manager", Generation: 4}}
			setDeploymentConditions(cm, tt.dep, errors.New("not found"))
			available := meta.FindStatusCondition(cm.Status.Conditions, operatorv1.ConditionClusterManagerAvailable)
			progressing := meta.FindStatusCondition(cm.Status.Conditions, operatorv1.ConditionProgressing)
			if available.Status != tt.wantAvailable || progressing.Status != tt.wantProgressing || progressing.Reason != tt.wantReason {
				t.Errorf("Available=%s, Progressing=%s (%s); want %s, %s (%s)", available.Status, progressing.Status, progressing.Reason,
					tt.wantAvailable, tt.wantProgressing, tt.wantReason)
			}
			if !strings.Contains(available.Message, tt.wantMessage) {
				t.Errorf("Available message %q lacks %q", available.Message, tt.wantMessage)
			}
			degraded := meta.FindStatusCondition(cm.Status.Conditions, operatorv1.ConditionHubRegistrationDegraded)
			if (degraded.Status == metav1.ConditionTrue) != (tt.wantAvailable == metav1.ConditionFalse) {
				t.Errorf("HubRegistrationDegraded=%s with Available=%s", degraded.Status, available.Status)
			}
		})
	}
}
