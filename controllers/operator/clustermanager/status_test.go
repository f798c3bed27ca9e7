package clustermanager

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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

// The hub tunnel's Deployment is folded into Available and Progressing,
// never into the registration and placement conditions.
func TestSetTunnelConditions(t *testing.T) {
	hub := func(st appsv1.DeploymentStatus) *appsv1.Deployment {
		return deploystatustest.Deployment(config.HubNamespace, config.HubControllerDeployment, st)
	}
	tunnel := func(st appsv1.DeploymentStatus) *appsv1.Deployment {
		return deploystatustest.Deployment(config.HubNamespace, config.HubTunnelDeployment, st)
	}
	tests := []struct {
		name                 string
		hub, tunnel          *appsv1.Deployment
		wantAvailable        metav1.ConditionStatus
		wantAvailableReason  string
		wantProgressing      metav1.ConditionStatus
		wantMessage          []string
		wantRegistrationGood bool
	}{
		{"both rolled out", hub(deploystatustest.RolledOut()), tunnel(deploystatustest.RolledOut()),
			metav1.ConditionTrue, operatorv1.ReasonHubControllerAvailable, metav1.ConditionFalse, []string{"is available"}, true},
		{"the tunnel is not available", hub(deploystatustest.RolledOut()), tunnel(deploystatustest.Unavailable("MinimumReplicasUnavailable", "no")),
			metav1.ConditionFalse, operatorv1.ReasonHubTunnelUnavailable, metav1.ConditionTrue, []string{config.HubTunnelDeployment, "0 of 1 updated replicas available"}, true},
		{"the tunnel is missing", hub(deploystatustest.RolledOut()), nil,
			metav1.ConditionFalse, operatorv1.ReasonHubTunnelUnavailable, metav1.ConditionTrue, []string{"read Deployment", config.HubTunnelDeployment, "not found"}, true},
		{"both unavailable: both causes", hub(deploystatustest.NotObserved()), tunnel(deploystatustest.PastDeadline("timed out")),
			metav1.ConditionFalse, operatorv1.ReasonHubControllerUnavailable, metav1.ConditionTrue, []string{"has not observed generation 2", "exceeded its progress deadline"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: "cluster-manager", Generation: 4}}
			setDeploymentConditions(cm, tt.hub, nil)
			setTunnelConditions(cm, tt.tunnel, errors.New("not found"))
			available := meta.FindStatusCondition(cm.Status.Conditions, operatorv1.ConditionClusterManagerAvailable)
			progressing := meta.FindStatusCondition(cm.Status.Conditions, operatorv1.ConditionProgressing)
			assert.Equal(t, tt.wantAvailable, available.Status)
			assert.Equal(t, tt.wantAvailableReason, available.Reason)
			assert.Equal(t, tt.wantProgressing, progressing.Status)
			for _, m := range tt.wantMessage {
				assert.Contains(t, available.Message, m)
			}
			degraded := meta.FindStatusCondition(cm.Status.Conditions, operatorv1.ConditionHubRegistrationDegraded)
			assert.Equal(t, tt.wantRegistrationGood, degraded.Status == metav1.ConditionFalse, "HubRegistrationDegraded follows the hub controller only")
		})
	}
}
