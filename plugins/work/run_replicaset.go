package work

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// runReplicaSet writes the ManifestWorkReplicaSet that delivers manifests to
// the clusters of --placement, after checking that the placement exists.
func (o *CreateOptions) runReplicaSet(ctx context.Context, manifests []cli.Manifest) error {
	r := &o.Rollout
	if o.DryRun == cli.DryRunClient && cli.Output(o.PrintFlags) == "" {
		fmt.Fprintf(o.Out, "ManifestWorkReplicaSet %s created in namespace %s for placement %s (rollout %s) (dry run)\n", o.Name, r.PlacementNamespace, r.PlacementName, r.Type)
		return nil
	}
	if o.DryRun == cli.DryRunClient {
		mwrs := o.buildReplicaSet(manifests, nil)
		if err := o.packPayload(&mwrs.Spec.ManifestWorkTemplate); err != nil {
			return err
		}
		u, err := cli.ToUnstructured(mwrs)
		if err != nil {
			return err
		}
		return o.print([]*unstructured.Unstructured{u}, "created (dry run)")
	}
	c, cfg, err := cli.NewClient(ctx, o.getter)
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
	mwrs := o.buildReplicaSet(manifests, o.mapper())
	if err := o.packPayload(&mwrs.Spec.ManifestWorkTemplate); err != nil {
		return err
	}
	if err := o.writeChunks(ctx, c, r.PlacementNamespace); err != nil {
		return err
	}
	u, err := cli.Apply(ctx, c, mwrs, o.DryRun == cli.DryRunServer)
	if err != nil {
		return fmt.Errorf("write ManifestWorkReplicaSet %s/%s on %s: %w", r.PlacementNamespace, o.Name, cfg.Host, err)
	}
	if cli.Output(o.PrintFlags) != "" {
		return o.print([]*unstructured.Unstructured{u}, "")
	}
	if o.DryRun == cli.DryRunServer {
		verb += " (server dry run)"
	}
	fmt.Fprintf(o.Out, "ManifestWorkReplicaSet %s %s in namespace %s for placement %s (rollout %s)\n", o.Name, verb, r.PlacementNamespace, r.PlacementName, r.Type)
	if placement.Name != "" && placement.Status.NumberOfSelectedClusters == 0 {
		fmt.Fprintf(o.ErrOut, "Warning: placement %s selects no cluster yet, so no work is delivered: `kubectl ocm placement explain %s -n %s` tells why\n",
			r.PlacementName, r.PlacementName, r.PlacementNamespace)
	}
	return nil
}

// buildReplicaSet is BuildReplicaSet with the flags' name, placement,
// rollout, update strategy and annotations.
func (o *CreateOptions) buildReplicaSet(manifests []cli.Manifest, mapper meta.RESTMapper) *workv1alpha1.ManifestWorkReplicaSet {
	r := &o.Rollout
	mwrs := BuildReplicaSet(o.Name, r.PlacementNamespace, r.PlacementName, r.Strategy(), manifests, o.UpdateStrategy, mapper)
	mwrs.Annotations = o.annotations()
	for k, v := range r.annotations() {
		if mwrs.Annotations == nil {
			mwrs.Annotations = map[string]string{}
		}
		mwrs.Annotations[k] = v
	}
	return mwrs
}

// BuildReplicaSet returns ManifestWorkReplicaSet name in namespace, whose
// template holds the manifests (see buildSpec) and whose one placementRef
// names placement with strategy. Unset rollout settings are left out of the
// applied object (omitzero), so that the hub's defaults apply.
func BuildReplicaSet(name, namespace, placement string, strategy clusterv1alpha1.RolloutStrategy, manifests []cli.Manifest, updateStrategy string, mapper meta.RESTMapper) *workv1alpha1.ManifestWorkReplicaSet {
	return &workv1alpha1.ManifestWorkReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: workv1alpha1.ManifestWorkReplicaSetSpec{
			ManifestWorkTemplate: buildSpec(manifests, updateStrategy, mapper),
			PlacementRefs:        []workv1alpha1.LocalPlacementReference{{Name: placement, RolloutStrategy: strategy}},
		},
	}
}
