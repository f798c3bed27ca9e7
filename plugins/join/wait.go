package join

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// joinState is what --wait has seen.
type joinState struct {
	// step is a short name of the current step.
	step string
	// detail explains the step: the cause and the fix when stuck.
	detail string
	// done is true once the cluster is available.
	done bool
}

// wait shows each step on stderr until the cluster has joined and is
// available, or fails naming the step it is stuck in.
func (o *Options) wait(ctx context.Context, spoke, hub client.Client) error {
	err := cli.Wait(ctx, o.ErrOut, o.Timeout, "cluster "+o.ClusterName+" to join the hub", func(ctx context.Context) (bool, string, error) {
		s, err := o.observe(ctx, spoke, hub)
		if err != nil {
			return false, "", err
		}
		return s.done, s.step + ": " + s.detail, nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "Cluster %s has joined the hub and is available.\n", o.ClusterName)
	return nil
}

// observe reads, on the cluster of --context, the Klusterlet operator's
// Deployment and the Klusterlet's conditions (the operator's and the
// agent's) and, when the token may read it, the ManagedCluster on the hub.
// A Klusterlet field the operator cannot honor ends the wait with its cause.
func (o *Options) observe(ctx context.Context, spoke, hub client.Client) (joinState, error) {
	op := &appsv1.Deployment{}
	key := types.NamespacedName{Namespace: operatorv1.OperatorNamespace, Name: config.KlusterletOperatorName}
	if err := spoke.Get(ctx, key, op); err != nil {
		return joinState{}, fmt.Errorf("read Deployment %s: %w", key, err)
	}
	if op.Status.AvailableReplicas == 0 {
		return joinState{step: "operator starting", detail: fmt.Sprintf("Deployment %s has no running Klusterlet operator yet%s; check its pod with `kubectl -n %s describe pods`",
			key, deploymentCauses(op), key.Namespace)}, nil
	}
	name := o.klusterletName()
	k := &operatorv1.Klusterlet{}
	if err := spoke.Get(ctx, types.NamespacedName{Name: name}, k); err != nil {
		return joinState{}, fmt.Errorf("read Klusterlet %s: %w", name, err)
	}
	if c := meta.FindStatusCondition(k.Status.Conditions, operatorv1.ConditionKlusterletApplied); c != nil && c.Status == metav1.ConditionFalse &&
		c.Reason != operatorv1.ReasonKlusterletApplyFailed && c.ObservedGeneration == k.Generation {
		return joinState{}, fmt.Errorf("the Klusterlet operator cannot install Klusterlet %s (%s): %s", name, c.Reason, c.Message)
	}
	state := klusterletState(k.Status.Conditions, o.ClusterName, name)
	if !state.done {
		return state, nil
	}
	// The agent says it joined; confirm on the hub when the token allows.
	mc := &clusterv1.ManagedCluster{}
	if err := hub.Get(ctx, types.NamespacedName{Name: o.ClusterName}, mc); err != nil {
		return state, nil
	}
	if !meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
		return joinState{step: "joined", detail: fmt.Sprintf("ManagedCluster %s joined; waiting for the hub to report it available", o.ClusterName)}, nil
	}
	return state, nil
}

// deploymentCauses returns the messages of dep's conditions that are not
// True, as " (reason: message)", for progress lines.
func deploymentCauses(dep *appsv1.Deployment) string {
	var out string
	for _, c := range dep.Status.Conditions {
		if c.Status != "True" && c.Message != "" {
			out += fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
		}
	}
	return out
}

// klusterletState interprets the Klusterlet's conditions: the operator's
// Applied and Available (the agent Deployment runs), then the agent's
// HubConnectionDegraded. The cluster has joined when the agent is available
// and its hub connection is functional.
func klusterletState(conds []metav1.Condition, cluster, klusterlet string) joinState {
	avail := meta.FindStatusCondition(conds, operatorv1.ConditionKlusterletAvailable)
	if avail == nil {
		return joinState{step: "installing", detail: "waiting for the Klusterlet operator to install the agent of Klusterlet " + klusterlet}
	}
	if avail.Status != metav1.ConditionTrue {
		return joinState{step: "agent starting", detail: avail.Message}
	}
	c := meta.FindStatusCondition(conds, operatorv1.ConditionHubConnectionDegraded)
	if c == nil {
		return joinState{step: "registering", detail: "waiting for the agent to report its progress on Klusterlet " + klusterlet}
	}
	switch {
	case c.Status == metav1.ConditionFalse:
		return joinState{step: "available", detail: c.Message, done: true}
	case c.Reason == operatorv1.KlusterletReasonCSRPending:
		return joinState{step: "CSR pending", detail: fmt.Sprintf("%s (on the hub: `kubectl ocm accept --clusters %s`)", c.Message, cluster)}
	case c.Reason == operatorv1.KlusterletReasonHubAcceptancePending:
		return joinState{step: "certificate issued", detail: c.Message}
	}
	return joinState{step: c.Reason, detail: c.Message}
}
