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
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
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
	// registered is true once the hub has the cluster's registration:
	// the agent's certificate request, or the cluster accepted already.
	registered bool
}

// wait shows each step on stderr until the hub has the cluster's
// registration (--wait, as clusteradm's) or until the cluster has joined and
// is available (--wait-accepted), or fails naming the step it is stuck in
// and the last Pod-level cause seen of the Klusterlet operator or the
// agent.
func (o *Options) wait(ctx context.Context, spoke, hub client.Client, in *deploystatus.Inspector) error {
	what := "the hub to have the registration of cluster " + o.ClusterName
	if o.WaitAccepted {
		what = "cluster " + o.ClusterName + " to join the hub"
	}
	var last joinState
	err := cli.Wait(ctx, o.ErrOut, o.Timeout, what, func(ctx context.Context) (bool, string, error) {
		s, err := o.observe(ctx, spoke, hub, in)
		if err != nil {
			return false, "", err
		}
		last = s
		return s.done || (s.registered && !o.WaitAccepted), s.step + ": " + s.detail, nil
	})
	if err != nil {
		return in.Explain(err)
	}
	if !last.done {
		fmt.Fprintf(o.Out, "The hub has the registration of cluster %s; accept it on the hub as shown above (`--wait-accepted` waits until it is accepted).\n", o.ClusterName)
		return nil
	}
	fmt.Fprintf(o.Out, "Cluster %s has joined the hub and is available.\n", o.ClusterName)
	return nil
}

// observe reads, on the cluster of --context, the Klusterlet operator's
// Deployment, the Klusterlet's conditions (the operator's and the agent's)
// and, when the token may read it, the ManagedCluster on the hub. While the
// operator's or the agent's Deployment is not ready, in names its Pod-level
// cause. A Klusterlet field the operator cannot honor ends the wait with its
// cause.
func (o *Options) observe(ctx context.Context, spoke, hub client.Client, in *deploystatus.Inspector) (joinState, error) {
	key := types.NamespacedName{Namespace: operatorv1.OperatorNamespace, Name: config.KlusterletOperatorName}
	op, err := in.Read(ctx, key)
	if err != nil {
		return joinState{}, err
	}
	if op == nil {
		return joinState{}, fmt.Errorf("read Deployment %s: not found", key)
	}
	if !op.Done {
		return operatorState(*op), nil
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
		state.detail = cli.DescribeNotReady(ctx, in, state.detail, agentDeployments(k)...)
		return state, nil
	}
	// The agent says it joined; confirm on the hub when the token allows.
	mc := &clusterv1.ManagedCluster{}
	if err := hub.Get(ctx, types.NamespacedName{Name: o.ClusterName}, mc); err != nil {
		return state, nil
	}
	if !meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
		return joinState{step: "joined", detail: fmt.Sprintf("ManagedCluster %s joined; waiting for the hub to report it available", o.ClusterName), registered: true}, nil
	}
	return state, nil
}

// operatorState describes the Klusterlet operator's Deployment while it is
// not rolled out: its state and the Pod-level cause with its fix, or where
// to look when its Pods show none.
func operatorState(r deploystatus.Report) joinState {
	s := joinState{step: "operator starting", detail: r.String()}
	if r.Serving {
		s.step = "operator rolling out"
	}
	if r.Cause == nil {
		s.detail += fmt.Sprintf("; check its Pods with `kubectl -n %s describe pods`", r.Deployment.Namespace)
	}
	return s
}

// agentDeployments are the Deployments the Klusterlet operator reports it
// runs for k: the agent's.
func agentDeployments(k *operatorv1.Klusterlet) []types.NamespacedName {
	var keys []types.NamespacedName
	for _, g := range k.Status.Generations {
		if g.Group == appsv1.GroupName && g.Resource == "deployments" {
			keys = append(keys, types.NamespacedName{Namespace: g.Namespace, Name: g.Name})
		}
	}
	return keys
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
		return joinState{step: "available", detail: c.Message, done: true, registered: true}
	case c.Reason == operatorv1.KlusterletReasonCSRPending:
		return joinState{step: "CSR pending", detail: fmt.Sprintf("%s (on the hub: `kubectl ocm accept --clusters %s`)", c.Message, cluster), registered: true}
	case c.Reason == operatorv1.KlusterletReasonHubAcceptancePending:
		return joinState{step: "certificate issued", detail: c.Message, registered: true}
	}
	return joinState{step: c.Reason, detail: c.Message}
}
