package placement

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run writes the Placement, refusing to change an existing one without
// --overwrite, and warns when the namespace has no usable cluster set.
func (o *CreateOptions) Run(ctx context.Context) error {
	if o.DryRun == cli.DryRunClient {
		u, err := cli.ToUnstructured(o.Placement)
		if err != nil {
			return err
		}
		return o.print(u, "created (dry run)")
	}
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	verb := "created"
	err = c.Get(ctx, client.ObjectKeyFromObject(o.Placement), &clusterv1beta1.Placement{})
	switch {
	case err == nil && !o.Overwrite:
		return fmt.Errorf("placement %s already exists in namespace %s: add --overwrite to replace its spec, or choose another name", o.Name, o.Namespace)
	case err == nil:
		verb = "configured"
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("read Placement %s/%s on %s: %w", o.Namespace, o.Name, cfg.Host, err)
	}
	u, err := cli.Apply(ctx, c, o.Placement, o.DryRun == cli.DryRunServer)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("write Placement %s/%s: namespace %s does not exist on the hub: create it with `kubectl create namespace %s`: %w", o.Namespace, o.Name, o.Namespace, o.Namespace, err)
		}
		return fmt.Errorf("write Placement %s/%s on %s: %w", o.Namespace, o.Name, cfg.Host, err)
	}
	if o.DryRun == cli.DryRunServer {
		verb += " (server dry run)"
	}
	if err := o.print(u, verb); err != nil {
		return err
	}
	if warning := o.bindingWarning(ctx, c); warning != "" {
		fmt.Fprintln(o.ErrOut, "Warning: "+warning)
	}
	return nil
}

// print writes the Placement with -o, or a one-line message.
func (o *CreateOptions) print(obj runtime.Object, verb string) error {
	if cli.Output(o.PrintFlags) == "" {
		fmt.Fprintf(o.Out, "Placement %s %s in namespace %s\n", o.Name, verb, o.Namespace)
		return nil
	}
	printer, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return err
	}
	return printer.PrintObj(obj, o.Out)
}

// bindingWarning explains why the Placement cannot select any cluster
// because of the bindings of its namespace, or returns "".
func (o *CreateOptions) bindingWarning(ctx context.Context, c client.Client) string {
	list := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := c.List(ctx, list, client.InNamespace(o.Namespace)); err != nil {
		return ""
	}
	var bound []string
	for _, b := range list.Items {
		bound = append(bound, b.Spec.ClusterSet)
	}
	if len(bound) == 0 {
		return fmt.Sprintf("no ManagedClusterSet is bound to namespace %s, so the placement selects no cluster: bind one with `kubectl ocm clusterset bind SET -n %s`", o.Namespace, o.Namespace)
	}
	var missing []string
	for _, s := range o.ClusterSets {
		if !slices.Contains(bound, s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("cluster set(s) %s of --clustersets are not bound to namespace %s and are ignored: bind them with `kubectl ocm clusterset bind SET -n %s`", strings.Join(missing, ","), o.Namespace, o.Namespace)
	}
	return ""
}
