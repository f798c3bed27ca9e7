package join

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

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

// observe reads the agent Deployment, the Klusterlet conditions on the
// cluster of --context and, when the token may read it, the ManagedCluster on
// the hub.
func (o *Options) observe(ctx context.Context, spoke, hub client.Client) (joinState, error) {
	ns, name, klusterlet := o.agentNamespace(), o.agentDeployment(), o.klusterletName()
	dep := &appsv1.Deployment{}
	if err := spoke.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, dep); err != nil {
		return joinState{}, fmt.Errorf("read Deployment %s/%s: %w", ns, name, err)
	}
	if dep.Status.AvailableReplicas == 0 {
		detail := fmt.Sprintf("Deployment %s/%s has no running agent yet", ns, name)
		for _, c := range dep.Status.Conditions {
			if c.Status != "True" && c.Message != "" {
				detail += fmt.Sprintf(" (%s: %s)", c.Reason, c.Message)
			}
		}
		return joinState{step: "agent starting", detail: detail + "; check its pod with `kubectl -n " + ns + " describe pods`"}, nil
	}
	k := &operatorv1.Klusterlet{}
	if err := spoke.Get(ctx, types.NamespacedName{Name: klusterlet}, k); err != nil {
		return joinState{}, fmt.Errorf("read Klusterlet %s: %w", klusterlet, err)
	}
	state := klusterletState(k.Status.Conditions, o.ClusterName, klusterlet)
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

// klusterletState interprets the agent's conditions on the Klusterlet.
func klusterletState(conds []metav1.Condition, cluster, klusterlet string) joinState {
	if c := meta.FindStatusCondition(conds, operatorv1.ConditionKlusterletAvailable); c != nil && c.Status == metav1.ConditionTrue {
		return joinState{step: "available", detail: c.Message, done: true}
	}
	c := meta.FindStatusCondition(conds, operatorv1.ConditionHubConnectionDegraded)
	if c == nil {
		return joinState{step: "registering", detail: "waiting for the agent to report its progress on Klusterlet " + klusterlet}
	}
	switch c.Reason {
	case operatorv1.KlusterletReasonCSRPending:
		return joinState{step: "CSR pending", detail: fmt.Sprintf("%s (on the hub: `kubectl ocm accept --clusters %s`)", c.Message, cluster)}
	case operatorv1.KlusterletReasonHubAcceptancePending:
		return joinState{step: "certificate issued", detail: c.Message}
	}
	return joinState{step: c.Reason, detail: c.Message}
}
