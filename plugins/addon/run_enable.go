package addon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ocmconfig "github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run checks every add-on and cluster, then writes the ManagedClusterAddOn
// of each add-on to each cluster's namespace and, with --wait, waits until
// all of them are Available. With --dry-run=client it only prints them.
func (o *EnableOptions) Run(ctx context.Context) error {
	if o.DryRun == cli.DryRunClient {
		var objs []*unstructured.Unstructured
		for _, name := range o.Names {
			for _, cluster := range o.Clusters {
				u, err := cli.ToUnstructured(o.managedClusterAddOn(name, cluster))
				if err != nil {
					return err
				}
				objs = append(objs, u)
				o.report(name, cluster, " (dry run)")
			}
		}
		return o.print(objs)
	}
	h, cmas, err := connectAddons(ctx, o.getter)
	if err != nil {
		return err
	}
	if err := errors.Join(requireAddons(cmas, o.Names...), h.checkClusters(ctx, o.Clusters, true)); err != nil {
		return err
	}
	for _, name := range o.Names {
		warnUnsupported(o.ErrOut, cmas[name], o.Configs)
	}
	suffix := ""
	if o.DryRun == cli.DryRunServer {
		suffix = " (server dry run)"
	}
	var written []*unstructured.Unstructured
	for _, name := range o.Names {
		for _, cluster := range o.Clusters {
			u, err := cli.Apply(ctx, h, o.managedClusterAddOn(name, cluster), o.DryRun == cli.DryRunServer)
			if err != nil {
				return fmt.Errorf("enable add-on %s on managed cluster %s (ManagedClusterAddOn %s/%s on %s): %w", name, cluster, cluster, name, h.host, err)
			}
			written = append(written, u)
			o.report(name, cluster, suffix)
		}
	}
	if err := o.print(written); err != nil {
		return err
	}
	if !o.Wait {
		return nil
	}
	return o.waitAvailable(ctx, h)
}

// managedClusterAddOn returns the ManagedClusterAddOn that enables add-on
// name on cluster with the options.
func (o *EnableOptions) managedClusterAddOn(name, cluster string) *addonv1alpha1.ManagedClusterAddOn {
	return NewManagedClusterAddOn(name, cluster, o.InstallNamespace, o.Configs, o.Annotations, o.Labels)
}

// NewManagedClusterAddOn returns ManagedClusterAddOn name in the namespace
// of cluster, installing the agent in installNamespace with configs, and
// carrying annotations and labels.
func NewManagedClusterAddOn(name, cluster, installNamespace string, configs []addonv1alpha1.AddOnConfig, annotations, labels map[string]string) *addonv1alpha1.ManagedClusterAddOn {
	mca := &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster, Annotations: annotations, Labels: labels},
		Spec:       addonv1alpha1.ManagedClusterAddOnSpec{Configs: slices.Clone(configs)},
	}
	mca.Spec.InstallNamespace = installNamespace //nolint:staticcheck // -n sets the v1alpha1 field, as clusteradm does; the add-on manager still honors it
	return mca
}

// report prints clusteradm's line for one ManagedClusterAddOn written,
// unless -o prints the objects.
func (o *EnableOptions) report(name, cluster, suffix string) {
	if cli.Output(o.PrintFlags) == "" {
		fmt.Fprintf(o.Out, "Deploying %s add-on to namespaces %s of managed cluster: %s%s.\n", name, o.InstallNamespace, cluster, suffix)
	}
}

// print writes objs with the -o printer, if -o is given.
func (o *EnableOptions) print(objs []*unstructured.Unstructured) error {
	return printObjects(o.Out, o.PrintFlags, objs)
}

// printObjects writes objs with the -o printer of flags, several objects as
// one List in JSON; without -o it prints nothing.
func printObjects(out io.Writer, flags *genericclioptions.PrintFlags, objs []*unstructured.Unstructured) error {
	format := cli.Output(flags)
	if format == "" {
		return nil
	}
	printer, err := flags.ToPrinter()
	if err != nil {
		return err
	}
	if format == "json" && len(objs) > 1 {
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
		for _, obj := range objs {
			list.Items = append(list.Items, *obj)
		}
		return printer.PrintObj(list, out)
	}
	for _, obj := range objs {
		if err := printer.PrintObj(obj, out); err != nil {
			return err
		}
	}
	return nil
}

// warnUnsupported warns about configs whose kind cma does not list among
// its supportedConfigs: the add-on manager keeps them, and the
// ManagedClusterAddOn reports Configured False.
func warnUnsupported(out io.Writer, cma *addonv1alpha1.ClusterManagementAddOn, configs []addonv1alpha1.AddOnConfig) {
	supported := "none"
	if len(cma.Spec.SupportedConfigs) > 0 {
		kinds := make([]string, 0, len(cma.Spec.SupportedConfigs))
		for _, s := range cma.Spec.SupportedConfigs {
			kinds = append(kinds, kindString(s.ConfigGroupResource))
		}
		supported = strings.Join(kinds, ", ")
	}
	for _, c := range configs {
		if !config.Supports(cma, c.ConfigGroupResource) {
			fmt.Fprintf(out, "Warning: add-on %s does not support configs of kind %s (it supports %s): its ManagedClusterAddOns will report Configured False\n",
				cma.Name, kindString(c.ConfigGroupResource), supported)
		}
	}
}

// waitAvailable waits until the ManagedClusterAddOn of every add-on on
// every cluster is Available, showing each one's state and what stops the
// hub controller, whose add-on manager deploys the agents. When the wait
// fails, the error names the last Pod-level cause seen of the hub
// controller, and where to look at the agents.
func (o *EnableOptions) waitAvailable(ctx context.Context, h hub) error {
	what := fmt.Sprintf("add-on %s to be available on managed cluster(s) %s", strings.Join(o.Names, ","), strings.Join(o.Clusters, ","))
	in := cli.NewInspector(h.Client, h.config, cli.HubImageFix)
	hubController := types.NamespacedName{Namespace: ocmconfig.HubNamespace, Name: ocmconfig.HubControllerDeployment}
	err := cli.Wait(ctx, o.ErrOut, o.Timeout, what, func(ctx context.Context) (bool, string, error) {
		done := true
		var states []string
		for _, name := range o.Names {
			for _, cluster := range o.Clusters {
				available, state, err := availability(ctx, h, cluster, name)
				if err != nil {
					return false, "", err
				}
				done = done && available
				if len(o.Names) > 1 {
					state = name + " on " + state
				}
				states = append(states, state)
			}
		}
		if done {
			return true, strings.Join(states, "; "), nil
		}
		return false, cli.DescribeNotReady(ctx, in, strings.Join(states, "; "), hubController), nil
	})
	if err != nil {
		return in.Explain(fmt.Errorf("%w; the hub's add-on manager deploys the agent and its health check sets Available: see `kubectl ocm addon get %s`; "+
			"the agent runs on the managed cluster, out of the hub's sight: there, `kubectl -n %s get pods` shows its Pods", err, o.Names[0], o.InstallNamespace))
	}
	if cli.Output(o.PrintFlags) == "" {
		fmt.Fprintf(o.Out, "Add-on %s is available on managed cluster(s) %s.\n", strings.Join(o.Names, ","), strings.Join(o.Clusters, ","))
	}
	return nil
}

// availability reads ManagedClusterAddOn name of cluster and says whether
// it is Available, and its state as "CLUSTER: STATE".
func availability(ctx context.Context, h hub, cluster, name string) (bool, string, error) {
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	err := h.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mca)
	switch {
	case apierrors.IsNotFound(err):
		return false, cluster + ": the ManagedClusterAddOn was deleted", nil
	case err != nil:
		return false, "", fmt.Errorf("read ManagedClusterAddOn %s/%s: %w", cluster, name, err)
	case mca.DeletionTimestamp != nil:
		return false, cluster + ": being deleted", nil
	}
	c := findCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
	if c == nil {
		return false, cluster + ": Available not reported yet", nil
	}
	return c.Status == metav1.ConditionTrue, cluster + ": Available " + conditionText(c), nil
}
