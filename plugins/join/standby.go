package join

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// checkedHub is a standby hub that passed the preflight checks.
type checkedHub struct {
	Hub
	check *hubCheck
}

// preflightHubs runs the preflight checks and the cluster name check on
// each of hubs, hub n being the n-th of the agent's.
func (o *Options) preflightHubs(ctx context.Context, hubs []Hub, n int, localCluster string) ([]checkedHub, error) {
	var out []checkedHub
	for i, h := range hubs {
		ho := o.forHub(h)
		check, err := ho.preflight(ctx)
		if err != nil {
			return nil, fmt.Errorf("hub %d (%s): %w", n+i, h.APIServer, err)
		}
		if err := ho.checkClusterName(ctx, check.client, localCluster); err != nil {
			return nil, fmt.Errorf("hub %d (%s): %w", n+i, h.APIServer, err)
		}
		out = append(out, checkedHub{Hub: h, check: check})
	}
	return out, nil
}

// standbyValues returns the standby hubs' bootstrap kubeconfigs in Secrets
// named for hubs first, first+1, ...
func (o *Options) standbyValues(hubs []checkedHub, first int) ([]config.StandbyHub, error) {
	var out []config.StandbyHub
	for i, h := range hubs {
		kc, err := kubeconfig.ForTokenVia(h.APIServer, o.caBundle(h.check.ca), o.ProxyURL, h.Token)
		if err != nil {
			return nil, err
		}
		out = append(out, config.StandbyHub{Secret: config.StandbySecretName(first + i), Kubeconfig: kc})
	}
	return out, nil
}

// runAddHub adds the hubs of the flags to the agent installed on the
// cluster of --context: it checks each hub, writes its bootstrap kubeconfig
// Secret and appends it to the Klusterlet's bootstrapKubeConfigs, from
// which the Klusterlet operator restarts the agent with the new list.
func (o *Options) runAddHub(ctx context.Context) error {
	spoke, spokeCfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	k, err := o.joinedKlusterlet(ctx, spoke)
	if err != nil {
		return err
	}
	o.ClusterName = k.Spec.ClusterName
	namespace := k.AgentNamespace()
	if k.Mode().IsHosted() {
		namespace = k.Name
	}
	names := k.BootstrapKubeconfigSecrets()
	current := map[string]string{}
	for _, name := range names {
		s := &corev1.Secret{}
		if err := spoke.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s); err == nil {
			if info, err := kubeconfig.FromSecret(s.Data); err == nil {
				current[info.Server] = name
			}
		}
	}
	for _, h := range o.hubs() {
		if name, ok := current[h.APIServer]; ok {
			return fmt.Errorf("hub %s is already a hub of cluster %s (Secret %s/%s); to replace its token, delete that Secret's hub from the Klusterlet first or run `kubectl ocm join` again", h.APIServer, o.ClusterName, namespace, name)
		}
	}
	checked, err := o.preflightHubs(ctx, o.hubs(), len(names)+1, localClusterName(ctx, spoke, namespace))
	if err != nil {
		return err
	}
	first := len(names) + 1
	for slices.Contains(names, config.StandbySecretName(first)) {
		first++
	}
	standby, err := o.standbyValues(checked, first)
	if err != nil {
		return err
	}
	for i, sh := range standby {
		s := &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: sh.Secret, Labels: map[string]string{apply.PartOfLabelKey: apply.PartOfLabelValue}},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{kubeconfig.KubeconfigKey: sh.Kubeconfig},
		}
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s)
		if err == nil {
			err = apply.Apply(ctx, spoke, []*unstructured.Unstructured{{Object: u}}, apply.Options{})
		}
		if err != nil {
			return fmt.Errorf("write the bootstrap kubeconfig of hub %s to Secret %s/%s: %w", checked[i].APIServer, namespace, sh.Secret, err)
		}
		names = append(names, sh.Secret)
	}
	if err := o.listHubs(ctx, spoke, k, names); err != nil {
		return err
	}
	if err := o.waitAgentRestarted(ctx, spoke, k, cli.NewInspector(spoke, spokeCfg, cli.ImageFlagsFix)); err != nil {
		return fmt.Errorf("the hubs are listed in Klusterlet %s, but %w", k.Name, err)
	}
	for i, h := range checked {
		fmt.Fprintf(o.Out, "Added hub %s as hub %d of cluster %s (Secret %s/%s; the hub accepts the token as %s).\n",
			h.APIServer, first+i, o.ClusterName, namespace, standby[i].Secret, h.check.user)
	}
	timeout := k.HubConnectionTimeoutSeconds()
	fmt.Fprintf(o.Out, "The agent moves to the next hub when its hub has not renewed the cluster's lease for %ds. On each added hub, accept the cluster once it registers there:\n\n    kubectl ocm accept --clusters %s\n\nor let the hub accept it (kubectl ocm hub init --auto-approved-csr-identities).\n", timeout, o.ClusterName)
	return nil
}

// waitAgentRestarted waits, showing progress on stderr, until the Klusterlet
// operator has acted on k's generation (the one listing the added hubs) and
// the agent runs with it: the Klusterlet Available at that generation and
// every agent Deployment rolled out, no Pod of the old list left, not even
// terminating. A stalled
// rollout or a Klusterlet the operator cannot apply ends the wait with its
// cause; a timeout names the last Pod-level cause seen.
func (o *Options) waitAgentRestarted(ctx context.Context, c client.Client, k *operatorv1.Klusterlet, in *deploystatus.Inspector) error {
	gen := k.Generation
	what := fmt.Sprintf("the agent of cluster %s to restart with the new hub list (Klusterlet %s generation %d)", o.ClusterName, k.Name, gen)
	err := cli.Wait(ctx, o.ErrOut, o.Timeout, what, func(ctx context.Context) (bool, string, error) {
		cur := &operatorv1.Klusterlet{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(k), cur); err != nil {
			return false, "", fmt.Errorf("read Klusterlet %s: %w", k.Name, err)
		}
		if cur.Status.ObservedGeneration < gen {
			return false, fmt.Sprintf("the Klusterlet operator has not acted on generation %d yet (observed %d)", gen, cur.Status.ObservedGeneration), nil
		}
		if a := cli.CurrentCondition(cur.Status.Conditions, operatorv1.ConditionKlusterletApplied, gen); a != nil && a.Status == metav1.ConditionFalse && a.Reason != operatorv1.ReasonKlusterletApplyFailed {
			return false, "", cli.Stop(fmt.Errorf("the Klusterlet operator cannot apply Klusterlet %s (%s): %s", k.Name, a.Reason, a.Message))
		}
		var pending []string
		for _, key := range agentDeployments(cur) {
			r, err := in.Read(ctx, key)
			switch {
			case err != nil:
				return false, "", err
			case r == nil:
				pending = append(pending, fmt.Sprintf("Deployment %s is missing", key))
			case r.Stalled:
				return false, "", cli.Stop(fmt.Errorf("the agent's rollout stalled: %s", r))
			case !r.Done:
				pending = append(pending, r.String())
			default:
				// Rolled out; its old Pods may still be terminating.
				if n, err := terminatingPods(ctx, c, key); err != nil {
					return false, "", err
				} else if n > 0 {
					pending = append(pending, fmt.Sprintf("Deployment %s: %d old Pods terminating", key, n))
				}
			}
		}
		switch a := cli.CurrentCondition(cur.Status.Conditions, operatorv1.ConditionKlusterletAvailable, gen); {
		case a == nil:
			pending = append(pending, "the Klusterlet reports no Available condition for this generation yet")
		case a.Status != metav1.ConditionTrue:
			pending = append(pending, fmt.Sprintf("Available=%s (%s): %s", a.Status, a.Reason, a.Message))
		}
		return len(pending) == 0, strings.Join(pending, "; "), nil
	})
	if err != nil {
		return in.Explain(err)
	}
	fmt.Fprintf(o.ErrOut, "The agent of cluster %s runs with the new hub list.\n", o.ClusterName)
	return nil
}

// terminatingPods counts the Pods of Deployment key that are being deleted.
func terminatingPods(ctx context.Context, c client.Client, key types.NamespacedName) (int, error) {
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, key, dep); err != nil {
		return 0, fmt.Errorf("read Deployment %s: %w", key, err)
	}
	sel, err := metav1.LabelSelectorAsSelector(dep.Spec.Selector)
	if err != nil {
		return 0, fmt.Errorf("the selector of Deployment %s: %w", key, err)
	}
	pods := &corev1.PodList{}
	if err := c.List(ctx, pods, client.InNamespace(key.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return 0, fmt.Errorf("list the Pods of Deployment %s: %w", key, err)
	}
	n := 0
	for i := range pods.Items {
		if pods.Items[i].DeletionTimestamp != nil {
			n++
		}
	}
	return n, nil
}

// joinedKlusterlet returns the Klusterlet of the cluster of --context: the
// one of --cluster-name, else the only one.
func (o *Options) joinedKlusterlet(ctx context.Context, c client.Client) (*operatorv1.Klusterlet, error) {
	list := &operatorv1.KlusterletList{}
	if err := c.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) {
			return nil, errors.New("--add-hub: this cluster has not joined a hub (no Klusterlet CRD); run `kubectl ocm join` without --add-hub first")
		}
		return nil, fmt.Errorf("--add-hub: list Klusterlets: %w", err)
	}
	var match []*operatorv1.Klusterlet
	var clusters []string
	for i := range list.Items {
		k := &list.Items[i]
		clusters = append(clusters, k.Spec.ClusterName)
		if o.ClusterName == "" || k.Spec.ClusterName == o.ClusterName {
			match = append(match, k)
		}
	}
	switch {
	case len(list.Items) == 0:
		return nil, errors.New("--add-hub: this cluster has not joined a hub (no Klusterlet); run `kubectl ocm join` without --add-hub first")
	case len(match) == 0:
		return nil, fmt.Errorf("--add-hub: no Klusterlet here is for cluster %s (they are for %s); pass one of those with --cluster-name", o.ClusterName, strings.Join(clusters, ", "))
	case len(match) > 1:
		return nil, fmt.Errorf("--add-hub: this cluster runs the agents of clusters %s; choose one with --cluster-name", strings.Join(clusters, ", "))
	}
	return match[0], nil
}

// listHubs sets k's bootstrapKubeConfigs to the Secrets names, and the hub
// connection timeout when given. The Klusterlet operator writes the
// Klusterlet too: on a conflict it reads k again and sets them on that.
func (o *Options) listHubs(ctx context.Context, c client.Client, k *operatorv1.Klusterlet, names []string) error {
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := c.Get(ctx, client.ObjectKeyFromObject(k), k); err != nil {
				return err
			}
		}
		first = false
		before := k.DeepCopy()
		o.setHubs(k, names)
		return c.Patch(ctx, k, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
	})
	if err != nil {
		return fmt.Errorf("list the hubs in Klusterlet %s: %w", k.Name, err)
	}
	return nil
}

// setHubs sets k's bootstrapKubeConfigs to the Secrets names, and the hub
// connection timeout when given.
func (o *Options) setHubs(k *operatorv1.Klusterlet, names []string) {
	if k.Spec.RegistrationConfiguration == nil {
		k.Spec.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{}
	}
	b := &k.Spec.RegistrationConfiguration.BootstrapKubeConfigs
	b.Type = operatorv1.LocalSecrets
	if b.LocalSecrets == nil {
		b.LocalSecrets = &operatorv1.LocalSecretsConfig{}
	}
	b.LocalSecrets.KubeConfigSecrets = nil
	for _, name := range names {
		b.LocalSecrets.KubeConfigSecrets = append(b.LocalSecrets.KubeConfigSecrets, operatorv1.KubeConfigSecret{Name: name})
	}
	if o.HubConnectionTimeoutSeconds != 0 {
		b.LocalSecrets.HubConnectionTimeoutSeconds = o.HubConnectionTimeoutSeconds
	}
	if b.LocalSecrets.HubConnectionTimeoutSeconds == 0 {
		b.LocalSecrets.HubConnectionTimeoutSeconds = operatorv1.DefaultHubConnectionTimeoutSeconds
	}
}
