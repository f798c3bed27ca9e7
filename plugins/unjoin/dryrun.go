package unjoin

import (
	"context"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// dryRun says what Run would remove from the cluster of c, the Klusterlet k
// (nil when there is none) first, removing nothing: in server mode the API
// server admits each deletion without performing it. It waits for nothing,
// since nothing goes; the CRDs, which Run removes once no objects of theirs
// remain, are named.
func (o *Options) dryRun(ctx context.Context, c client.Client, t *target, k *operatorv1.Klusterlet) error {
	c = cli.DryRunWriter(c, o.DryRun)
	suffix := cli.DryRunSuffix(o.DryRun)
	var objs []*unstructured.Unstructured
	if k != nil {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(operatorv1.GroupVersion.WithKind("Klusterlet"))
		u.SetName(k.Name)
		objs = append(objs, u)
	}
	agent := apply.Sort(t.objs)
	slices.Reverse(agent)
	objs = append(objs, agent...)
	operator, err := o.operatorObjects(ctx, c, t.klusterlet)
	if err != nil {
		return err
	}
	objs = append(objs, operator...)
	var errs []error
	for _, obj := range objs {
		err := c.Delete(ctx, obj.DeepCopy(), client.PropagationPolicy("Foreground"))
		switch {
		case err == nil:
			fmt.Fprintf(o.Out, "%s deleted%s\n", apply.Describe(obj), suffix)
		case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		default:
			errs = append(errs, fmt.Errorf("delete %s: %w", apply.Describe(obj), err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove the agent of cluster %s%s: %w", o.ClusterName, suffix, err)
	}
	crds := crdNames(t.crds)
	if o.Mode == ModeHosted {
		crds += "; on the managed cluster, " + crdNames(t.managedCRDs)
	}
	fmt.Fprintf(o.Out, "Then the CRDs no objects use any more would be deleted (%s)%s.\n", crds, suffix)
	return nil
}

// operatorObjects returns what removeOperator would delete once the
// Klusterlet named klusterlet is gone: the Klusterlet operator's objects
// but its CRD, and its namespace unless shared; none while another
// Klusterlet remains.
func (o *Options) operatorObjects(ctx context.Context, c client.Client, klusterlet string) ([]*unstructured.Unstructured, error) {
	list := &operatorv1.KlusterletList{}
	if err := c.List(ctx, list); err != nil && !meta.IsNoMatchError(err) && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("list the Klusterlets: %w", err)
	}
	for _, k := range list.Items {
		if k.Name != klusterlet {
			return nil, nil // the operator still serves another Klusterlet
		}
	}
	objs, err := config.KlusterletOperatorObjects(config.KlusterletOperatorValues{})
	if err != nil {
		return nil, err
	}
	keepNamespace, err := namespaceShared(ctx, c)
	if err != nil {
		return nil, err
	}
	objs = slices.DeleteFunc(objs, func(obj *unstructured.Unstructured) bool {
		return obj.GetKind() == "CustomResourceDefinition" || (obj.GetKind() == "Namespace" && keepNamespace)
	})
	sorted := apply.Sort(objs)
	slices.Reverse(sorted)
	return sorted, nil
}
