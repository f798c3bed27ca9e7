package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	ctrl "sigs.k8s.io/controller-runtime"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
)

// identityRetryInterval is how often the agent retries resolving its identity.
const identityRetryInterval = 5 * time.Second

// errNoClusterName means that no source names the cluster.
var errNoClusterName = errors.New("no cluster name")

// waitForIdentity resolves the agent's identity, retrying until it can.
func (a *Agent) waitForIdentity(ctx context.Context) (identity, error) {
	for {
		id, err := a.resolveIdentity(ctx)
		if err == nil {
			return id, nil
		}
		ctrl.LoggerFrom(ctx).Info("Cannot resolve the agent's identity yet", "reason", err.Error())
		if errors.Is(err, errNoClusterName) {
			a.reportDegraded(ctx, operatorv1.ReasonClusterNameMissing, fmt.Sprintf(
				"The agent does not know its cluster name: set spec.clusterName on Klusterlet %s or pass --cluster-name to the agent", a.opts.KlusterletName))
		}
		if err := sleep(ctx, identityRetryInterval); err != nil {
			return identity{}, err
		}
	}
}

// resolveIdentity returns the cluster name (flag, Klusterlet spec.clusterName,
// hub kubeconfig Secret) and the agent ID (flag, hub kubeconfig Secret,
// pending Secret, else five random characters, persisted in the pending Secret).
func (a *Agent) resolveIdentity(ctx context.Context) (identity, error) {
	hubData, err := a.secretData(ctx, a.opts.HubKubeconfigSecret)
	if err != nil {
		return identity{}, err
	}
	id := identity{cluster: a.opts.ClusterName, agentID: a.opts.AgentID}
	if id.cluster == "" {
		k := &operatorv1.Klusterlet{}
		err := a.mgmt.Get(ctx, types.NamespacedName{Name: a.opts.KlusterletName}, k)
		if err != nil && !apierrors.IsNotFound(err) {
			return identity{}, fmt.Errorf("read Klusterlet %s: %w", a.opts.KlusterletName, err)
		}
		id.cluster = k.Spec.ClusterName
	}
	if id.cluster == "" {
		id.cluster = string(hubData[kubeconfig.ClusterNameKey])
	}
	if id.cluster == "" {
		return identity{}, errNoClusterName
	}
	if id.agentID != "" {
		return id, nil
	}
	if string(hubData[kubeconfig.ClusterNameKey]) == id.cluster && len(hubData[kubeconfig.AgentNameKey]) > 0 {
		id.agentID = string(hubData[kubeconfig.AgentNameKey])
		return id, nil
	}
	pending, err := a.secretData(ctx, a.opts.pendingSecretName())
	if err != nil {
		return identity{}, err
	}
	if string(pending[kubeconfig.ClusterNameKey]) == id.cluster && len(pending[kubeconfig.AgentNameKey]) > 0 {
		id.agentID = string(pending[kubeconfig.AgentNameKey])
		return id, nil
	}
	id.agentID = utilrand.String(5)
	if err := a.savePending(ctx, id, nil); err != nil {
		return identity{}, fmt.Errorf("persist the new agent ID: %w", err)
	}
	return id, nil
}
