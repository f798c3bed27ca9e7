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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
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
	c, cfg, err := cli.NewClient(ctx, o.getter)
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
		k := &list.Items[i]
		if err := PrintKlusterlet(o.Out, k, klusterletHubs(ctx, c, k)); err != nil {
			return err
		}
	}
	return nil
}

// KlusterletHub is one hub a Klusterlet names: its bootstrap kubeconfig
// Secret, and whether the agent's hub credential is for that hub.
type KlusterletHub struct {
	// Secret names the bootstrap kubeconfig Secret.
	Secret string
	// Server is the hub's API server URL; empty when Problem is set.
	Server string
	// Current is whether the agent's hub credential is for this hub.
	Current bool
	// Problem says why the Secret could not be read.
	Problem string
}

// klusterletHubs reads the bootstrap kubeconfig Secrets k names, in order,
// and the agent's hub credential, to tell which hub is current
// (kubeconfig.HubIndex, as the agent decides).
func klusterletHubs(ctx context.Context, c client.Client, k *operatorv1.Klusterlet) []KlusterletHub {
	namespace := k.AgentNamespace()
	if k.Mode().IsHosted() {
		namespace = k.Name
	}
	read := func(name string) (*kubeconfig.Info, error) {
		s := &corev1.Secret{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("secret %s/%s not found", namespace, name)
			}
			return nil, err
		}
		return kubeconfig.FromSecret(s.Data)
	}
	var hubs []KlusterletHub
	var infos []*kubeconfig.Info
	for _, name := range k.BootstrapKubeconfigSecrets() {
		info, err := read(name)
		h := KlusterletHub{Secret: name}
		if err != nil {
			h.Problem = err.Error()
		} else {
			h.Server = info.Server
		}
		hubs, infos = append(hubs, h), append(infos, info)
	}
	if cred, err := read(operatorv1.HubKubeConfigSecret); err == nil {
		if i := kubeconfig.HubIndex(cred, infos); i >= 0 {
			hubs[i].Current = true
		}
	}
	return hubs
}

// newBlockWriter returns the writer that aligns one block of
// PrintKlusterlet's report: columns two spaces apart.
func newBlockWriter(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
}

// PrintKlusterlet writes a readable report of k: its settings, its hubs
// (read by klusterletHubs; none when nil), conditions, generations and
// related resources.
func PrintKlusterlet(out io.Writer, k *operatorv1.Klusterlet, hubs []KlusterletHub) error {
	w := newBlockWriter(out)
	fmt.Fprintf(w, "Klusterlet:\t%s\n", k.Name)
	fmt.Fprintf(w, "Cluster:\t%s\n", k.Spec.ClusterName)
	fmt.Fprintf(w, "Namespace:\t%s\n", k.AgentNamespace())
	fmt.Fprintf(w, "Mode:\t%s\n", k.Mode())
	fmt.Fprintf(w, "Image:\t%s\n", k.Spec.ImagePullSpec)
	fmt.Fprintf(w, "Registration:\t%s\n", registrationAuth(k))
	fmt.Fprintf(w, "Generation:\t%d (observed %d)\n", k.Generation, k.Status.ObservedGeneration)
	if len(hubs) > 1 {
		fmt.Fprintf(w, "Hub connection timeout:\t%ds (then the agent moves to the next hub that answers)\n", k.HubConnectionTimeoutSeconds())
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(hubs) > 0 {
		fmt.Fprintln(out, "Hubs:")
		w = newBlockWriter(out)
		fmt.Fprintln(w, "  SECRET\tSERVER\tCURRENT")
		for _, h := range hubs {
			server, current := h.Server, ""
			if h.Problem != "" {
				server = "(" + h.Problem + ")"
			}
			if h.Current {
				current = "yes"
			}
			fmt.Fprintf(w, "  %s\t%s\t%s\n", h.Secret, server, current)
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "Conditions:")
	w = newBlockWriter(out)
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
