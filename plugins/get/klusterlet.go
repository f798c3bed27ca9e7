package get

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// KlusterletOptions are the flags of `kubectl ocm get klusterlet`.
type KlusterletOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// PrintFlags holds -o: json or yaml; empty prints the readable report.
	PrintFlags *genericclioptions.PrintFlags
	// Names restricts the report to these Klusterlets.
	Names []string
}

// NewKlusterletOptions returns KlusterletOptions for the managed (or
// hosting) cluster getter selects.
func NewKlusterletOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *KlusterletOptions {
	return &KlusterletOptions{IOStreams: streams, getter: getter, PrintFlags: genericclioptions.NewPrintFlags("").WithTypeSetter(apis.Scheme)}
}

func newCmdKlusterlet(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewKlusterletOptions(getter, streams)
	cmd := &cobra.Command{
		Use:     "klusterlet [NAME...]",
		Aliases: []string{"klusterlets", "klusterlet-info"},
		Short:   "Show the Klusterlet of a managed cluster: its agent, image, mode and status",
		Long: `Show the Klusterlets of the cluster of --context (a managed cluster, or a
hosting cluster in Hosted mode): the cluster name, the agent's namespace, the
mode and image, the conditions the Klusterlet operator and the agent report,
the generations of the agent Deployment and the objects the operator applied.`,
		Example: cli.Examples(`
			# Show the Klusterlet of the cluster of context cluster1
			kubectl ocm get klusterlet --context cluster1

			# As YAML
			kubectl ocm get klusterlet --context cluster1 -o yaml`),
		RunE: cli.RunE(o),
	}
	o.PrintFlags.AddFlags(cmd)
	return cmd
}

// Complete records the names given as arguments.
func (o *KlusterletOptions) Complete(_ *cobra.Command, args []string) error {
	o.Names = args
	return nil
}

// Validate checks -o: json or yaml.
func (o *KlusterletOptions) Validate() error { return cli.ValidateOutput(o.PrintFlags, "json", "yaml") }

// Run reads the Klusterlets and prints them.
func (o *KlusterletOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	list := &operatorv1.KlusterletList{}
	if err := c.List(ctx, list); err != nil {
		if meta.IsNoMatchError(err) {
			return fmt.Errorf("the cluster at %s has no Klusterlet CRD: it has not joined a hub; run `kubectl ocm join` there", cfg.Host)
		}
		return fmt.Errorf("list Klusterlets on %s: %w", cfg.Host, err)
	}
	if len(o.Names) > 0 {
		list.Items = slices.DeleteFunc(list.Items, func(k operatorv1.Klusterlet) bool { return !slices.Contains(o.Names, k.Name) })
	}
	if cli.Output(o.PrintFlags) != "" {
		return cli.PrintList(o.IOStreams, o.PrintFlags, list, list.Items, operatorv1.GroupVersion.WithKind("Klusterlet"), nil,
			cli.ListOutput{Named: len(o.Names) == 1 && len(list.Items) == 1})
	}
	if len(list.Items) == 0 {
		fmt.Fprintf(o.ErrOut, "No Klusterlet found on %s: the cluster has not joined a hub.\n", cfg.Host)
		return nil
	}
	for i := range list.Items {
		if i > 0 {
			fmt.Fprintln(o.Out)
		}
		if err := PrintKlusterlet(o.Out, &list.Items[i]); err != nil {
			return err
		}
	}
	return nil
}

// PrintKlusterlet writes a readable report of k: its settings, conditions,
// generations and related resources.
func PrintKlusterlet(out io.Writer, k *operatorv1.Klusterlet) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "Klusterlet:\t%s\n", k.Name)
	fmt.Fprintf(w, "Cluster:\t%s\n", k.Spec.ClusterName)
	fmt.Fprintf(w, "Namespace:\t%s\n", k.AgentNamespace())
	fmt.Fprintf(w, "Mode:\t%s\n", k.Mode())
	fmt.Fprintf(w, "Image:\t%s\n", k.Spec.ImagePullSpec)
	fmt.Fprintf(w, "Registration:\t%s\n", registrationAuth(k))
	fmt.Fprintf(w, "Generation:\t%d (observed %d)\n", k.Generation, k.Status.ObservedGeneration)
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "Conditions:")
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "  TYPE\tSTATUS\tREASON\tMESSAGE")
	for _, c := range k.Status.Conditions {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", c.Type, c.Status, c.Reason, strings.ReplaceAll(c.Message, "\n", " "))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "Generations:")
	for _, g := range k.Status.Generations {
		fmt.Fprintf(out, "  %s %s/%s: %d\n", resourceName(g.Group, g.Resource), g.Namespace, g.Name, g.LastGeneration)
	}
	fmt.Fprintln(out, "Related resources:")
	for _, r := range k.Status.RelatedResources {
		name := r.Name
		if r.Namespace != "" {
			name = r.Namespace + "/" + r.Name
		}
		fmt.Fprintf(out, "  %s %s\n", resourceName(r.Group, r.Resource), name)
	}
	return nil
}

// registrationAuth describes how the agent of k authenticates to the hub.
func registrationAuth(k *operatorv1.Klusterlet) string {
	if rc := k.Spec.RegistrationConfiguration; rc != nil && rc.RegistrationDriver.AuthType == operatorv1.TokenAuthType {
		return "token (a ServiceAccount token of the hub, refreshed through TokenRequest)"
	}
	return "csr (a client certificate the hub signs)"
}

// resourceName writes a resource as kubectl does: resource.group.
func resourceName(group, resource string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}
