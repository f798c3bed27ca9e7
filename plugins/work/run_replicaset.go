package work

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// runReplicaSet writes the ManifestWorkReplicaSet that delivers manifests to
// the clusters of --placement, after checking that the placement exists.
func (o *CreateOptions) runReplicaSet(ctx context.Context, manifests []Manifest) error {
	r := &o.Rollout
	if o.DryRun == dryRunClient && output(o.PrintFlags) == "" {
		fmt.Fprintf(o.Out, "ManifestWorkReplicaSet %s created in namespace %s for placement %s (rollout %s) (dry run)\n", o.Name, r.PlacementNamespace, r.PlacementName, r.Type)
		return nil
	}
	if o.DryRun == dryRunClient {
		return o.print([]*unstructured.Unstructured{BuildReplicaSet(o.Name, r.PlacementNamespace, r.PlacementName, r.Strategy(), manifests, o.UpdateStrategy, nil)}, "created (dry run)")
	}
	c, cfg, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	placement := &clusterv1beta1.Placement{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: r.PlacementNamespace, Name: r.PlacementName}, placement); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("placement %s not found in namespace %s: create it first with `kubectl ocm placement create %s -n %s`, or list them with `kubectl ocm placement get -A`",
				r.PlacementName, r.PlacementNamespace, r.PlacementName, r.PlacementNamespace)
		}
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("read Placement %s/%s on %s: %w", r.PlacementNamespace, r.PlacementName, cfg.Host, err)
		}
	}
	verb := "created"
	err = c.Get(ctx, client.ObjectKey{Namespace: r.PlacementNamespace, Name: o.Name}, &workv1alpha1.ManifestWorkReplicaSet{})
	switch {
	case err == nil && !o.Overwrite:
		return fmt.Errorf("ManifestWorkReplicaSet %s already exists in namespace %s: add --overwrite to replace its manifests and rollout, or choose another name", o.Name, r.PlacementNamespace)
	case err == nil:
		verb = "configured"
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("read ManifestWorkReplicaSet %s/%s on %s: %w", r.PlacementNamespace, o.Name, cfg.Host, err)
	}
	var mapper meta.RESTMapper
	if o.UpdateStrategy != "" {
		mapper, _ = o.getter.ToRESTMapper()
	}
	mwrs := BuildReplicaSet(o.Name, r.PlacementNamespace, r.PlacementName, r.Strategy(), manifests, o.UpdateStrategy, mapper)
	opts := []client.ApplyOption{client.FieldOwner(apply.FieldManager), client.ForceOwnership}
	if o.DryRun == dryRunServer {
		opts = append(opts, client.DryRunAll)
		verb += " (server dry run)"
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(mwrs.DeepCopy()), opts...); err != nil {
		return fmt.Errorf("write ManifestWorkReplicaSet %s/%s on %s: %w", r.PlacementNamespace, o.Name, cfg.Host, err)
	}
	if o.DryRun != dryRunServer {
		if err := c.Get(ctx, client.ObjectKeyFromObject(mwrs), mwrs); err != nil {
			return fmt.Errorf("read back ManifestWorkReplicaSet %s/%s: %w", r.PlacementNamespace, o.Name, err)
		}
	}
	if output(o.PrintFlags) != "" {
		return o.print([]*unstructured.Unstructured{mwrs}, "")
	}
	fmt.Fprintf(o.Out, "ManifestWorkReplicaSet %s %s in namespace %s for placement %s (rollout %s)\n", o.Name, verb, r.PlacementNamespace, r.PlacementName, r.Type)
	if placement.Name != "" && placement.Status.NumberOfSelectedClusters == 0 {
		fmt.Fprintf(o.ErrOut, "Warning: placement %s selects no cluster yet, so no work is delivered: `kubectl ocm placement explain %s -n %s` tells why\n",
			r.PlacementName, r.PlacementName, r.PlacementNamespace)
	}
	return nil
}

// BuildReplicaSet returns ManifestWorkReplicaSet name in namespace, whose
// template holds the manifests (as BuildWork builds a work's spec) and whose
// one placementRef names placement with strategy.
func BuildReplicaSet(name, namespace, placement string, strategy clusterv1alpha1.RolloutStrategy, manifests []Manifest, updateStrategy string, mapper meta.RESTMapper) *unstructured.Unstructured {
	template := BuildWork(name, namespace, manifests, updateStrategy, mapper).Object["spec"]
	rollout, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&strategy)
	if err != nil {
		rollout = map[string]any{"type": string(strategy.Type)}
	}
	for _, key := range []string{"all", "progressive", "progressivePerGroup"} {
		// Unset fields convert to zero values: drop them so that the hub's
		// defaults apply (maxConcurrency 0 would mean no cluster at a time).
		if cfg, ok := rollout[key].(map[string]any); ok {
			for field, zero := range map[string]any{"minSuccessTime": "0s", "maxFailures": int64(0), "maxConcurrency": int64(0)} {
				if v, ok := cfg[field]; ok && (v == zero || v == 0) {
					delete(cfg, field)
				}
			}
		}
	}
	mwrs := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"manifestWorkTemplate": template,
		"placementRefs":        []any{map[string]any{"name": placement, "rolloutStrategy": rollout}},
	}}}
	mwrs.SetGroupVersionKind(workv1alpha1.GroupVersion.WithKind("ManifestWorkReplicaSet"))
	mwrs.SetName(name)
	mwrs.SetNamespace(namespace)
	return mwrs
}
