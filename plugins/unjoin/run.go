package unjoin

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// target is what unjoin removes from the cluster of --context.
type target struct {
	// namespace is the agent's namespace; klusterlet names the Klusterlet.
	namespace, klusterlet string
	// objs are the installed objects except CRDs; crds the CRDs removed when
	// unused.
	objs, crds []*unstructured.Unstructured
	// managedCRDs are, in hosted mode, the CRDs on the managed cluster.
	managedCRDs []*unstructured.Unstructured
}

// target returns what join installed for the cluster in this mode.
func (o *Options) target() (*target, error) {
	split := func(objs []*unstructured.Unstructured) (crds, others []*unstructured.Unstructured) {
		for _, obj := range objs {
			if obj.GetKind() == "CustomResourceDefinition" {
				crds = append(crds, obj)
			} else {
				others = append(others, obj)
			}
		}
		return crds, others
	}
	if o.Mode == ModeHosted {
		hosting, managed, err := config.HostedAgentObjects(config.AgentValues{ClusterName: o.ClusterName})
		if err != nil {
			return nil, err
		}
		name := config.HostedKlusterletName(o.ClusterName)
		t := &target{namespace: name, klusterlet: name, managedCRDs: managed}
		t.crds, t.objs = split(hosting)
		return t, nil
	}
	objs, err := config.AgentObjects(config.AgentValues{ClusterName: o.ClusterName})
	if err != nil {
		return nil, err
	}
	t := &target{namespace: config.AgentNamespace, klusterlet: operatorv1.KlusterletName}
	t.crds, t.objs = split(objs)
	return t, nil
}

// Run removes the agent and waits until it is gone.
func (o *Options) Run(ctx context.Context) error {
	t, err := o.target()
	if err != nil {
		return err
	}
	c, _, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	var managed client.Client
	if o.ManagedClusterKubeconfig != "" {
		if managed, err = managedClient(o.ManagedClusterKubeconfig); err != nil {
			return err
		}
	}
	k, err := o.klusterlet(ctx, c, t)
	if err != nil {
		return err
	}
	if cli.IsDryRun(o.DryRun) {
		return o.dryRun(ctx, c, t, k)
	}
	hubServer := o.hubServer(ctx, c, t.namespace)

	// The Klusterlet operator unjoins a deleted Klusterlet; without a running
	// operator (an agent installed directly), unjoin removes the agent below.
	if k != nil {
		if err := o.deleteKlusterlet(ctx, c, k); err != nil {
			return err
		}
	}
	// Secrets the agent created itself live in the namespace and go with it.
	if err := apply.Delete(ctx, c, t.objs, client.PropagationPolicy("Foreground")); err != nil {
		return fmt.Errorf("remove the agent: %w", err)
	}
	if err := o.waitGone(ctx, c, "the agent of cluster "+o.ClusterName, t.objs); err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "Removed the agent of cluster %s: Deployment, Secrets, RBAC, Klusterlet %s and namespace %s.\n", o.ClusterName, t.klusterlet, t.namespace)
	if err := o.removeOperator(ctx, c); err != nil {
		return err
	}

	if err := o.removeCRDs(ctx, c, managed, t); err != nil {
		return err
	}
	hub := "the hub"
	if hubServer != "" {
		hub = "the hub (" + hubServer + ")"
	}
	fmt.Fprintf(o.Out, "On %s, ManagedCluster %s and its namespace remain; remove them with:\n\n    kubectl delete managedcluster %s --context <hub>\n\n",
		hub, o.ClusterName, o.ClusterName)
	return nil
}

// klusterlet reads the Klusterlet of t, nil when there is none, and checks
// that it is the one of --cluster-name and --mode.
func (o *Options) klusterlet(ctx context.Context, c client.Client, t *target) (*operatorv1.Klusterlet, error) {
	k := &operatorv1.Klusterlet{}
	err := c.Get(ctx, types.NamespacedName{Name: t.klusterlet}, k)
	switch {
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read Klusterlet %s: %w", t.klusterlet, err)
	case k.Spec.ClusterName != "" && k.Spec.ClusterName != o.ClusterName:
		return nil, fmt.Errorf("this cluster joined as %s, not %s: pass --cluster-name %s, or check --context", k.Spec.ClusterName, o.ClusterName, k.Spec.ClusterName)
	case o.Mode == ModeDefault && k.Mode().IsHosted():
		return nil, fmt.Errorf("the Klusterlet %s records mode %s: pass --mode hosted", t.klusterlet, k.Mode())
	}
	return k, nil
}

// removeCRDs removes the CRDs of t that nothing uses any more, on the
// cluster of --context and, given its client, the managed cluster of hosted
// mode, and names those it kept.
func (o *Options) removeCRDs(ctx context.Context, c, managed client.Client, t *target) error {
	kept, err := o.removeUnusedCRDs(ctx, c, t.crds)
	if err != nil {
		return err
	}
	if managed != nil {
		keptManaged, err := o.removeUnusedCRDs(ctx, managed, t.managedCRDs)
		if err != nil {
			return fmt.Errorf("on the managed cluster: %w", err)
		}
		kept = append(kept, keptManaged...)
	} else if o.Mode == ModeHosted {
		fmt.Fprintf(o.Out, "The managed cluster keeps its CRDs (%s); pass --managed-cluster-kubeconfig to remove them when unused.\n", crdNames(t.managedCRDs))
	}
	if len(kept) > 0 {
		fmt.Fprintf(o.Out, "Kept CRDs still in use: %s.\n", strings.Join(kept, ", "))
	}
	return nil
}

// managedClient returns a client of the managed cluster from a kubeconfig
// file (its current context), writing as the install verbs do.
func managedClient(file string) (client.Client, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", file)
	if err != nil {
		return nil, fmt.Errorf("cannot load --managed-cluster-kubeconfig %s: %v; pass a kubeconfig file whose current context reaches the managed cluster", file, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		return nil, fmt.Errorf("cannot reach the managed cluster with --managed-cluster-kubeconfig %s: %w", file, err)
	}
	return client.WithFieldOwner(c, cli.InstallFieldManager), nil
}

// crdNames lists the names of crds, comma-separated.
func crdNames(crds []*unstructured.Unstructured) string {
	names := make([]string, 0, len(crds))
	for _, c := range crds {
		names = append(names, c.GetName())
	}
	return strings.Join(names, ", ")
}

// hubServer returns the hub URL from the bootstrap kubeconfig, for messages.
func (o *Options) hubServer(ctx context.Context, c client.Client, namespace string) string {
	s := &corev1.Secret{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: operatorv1.BootstrapHubKubeConfigSecret}, s); err != nil {
		return ""
	}
	info, err := kubeconfig.FromSecret(s.Data)
	if err != nil {
		return ""
	}
	return info.Server
}

// waitGone waits until every object in objs is gone, showing on stderr
// those that remain; what names the objects in messages.
func (o *Options) waitGone(ctx context.Context, c client.Client, what string, objs []*unstructured.Unstructured) error {
	return cli.Wait(ctx, o.ErrOut, o.Timeout, "the removal of "+what, func(ctx context.Context) (bool, string, error) {
		var remaining []string
		for _, obj := range objs {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(obj.GroupVersionKind())
			err := c.Get(ctx, client.ObjectKeyFromObject(obj), u)
			if err == nil {
				remaining = append(remaining, apply.Describe(obj))
			} else if !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
				return false, "", fmt.Errorf("read %s: %w", apply.Describe(obj), err)
			}
		}
		if len(remaining) == 0 {
			return true, "", nil
		}
		return false, fmt.Sprintf("%d left (%s); if one stays, check its finalizers", len(remaining), strings.Join(remaining, ", ")), nil
	})
}

// removeUnusedCRDs deletes each CRD that no object uses any more and returns
// the names of those kept.
func (o *Options) removeUnusedCRDs(ctx context.Context, c client.Client, crds []*unstructured.Unstructured) ([]string, error) {
	toDelete, inUse, err := apply.UnusedCRDs(ctx, c, crds)
	if err != nil {
		return nil, err
	}
	if err := apply.Delete(ctx, c, toDelete); err != nil {
		return nil, fmt.Errorf("remove unused CRDs: %w", err)
	}
	if err := o.waitGone(ctx, c, "the unused CRDs", toDelete); err != nil {
		return nil, err
	}
	if len(toDelete) > 0 {
		fmt.Fprintf(o.Out, "Removed unused CRDs: %s.\n", crdNames(toDelete))
	}
	kept := make([]string, 0, len(inUse))
	for _, crd := range inUse {
		kept = append(kept, crd.GetName())
	}
	slices.Sort(kept)
	return kept, nil
}
