package hub

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// RotateCAOptions are the flags of `kubectl ocm hub rotate-ca`.
type RotateCAOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Check reports and changes nothing; it is the only mode today.
	Check bool
	// CAFile names the CAs to check; empty: the hub's published bundle.
	CAFile string
	// Output is "", "json" or "yaml".
	Output string
}

// NewRotateCAOptions returns RotateCAOptions for the hub getter selects.
func NewRotateCAOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *RotateCAOptions {
	return &RotateCAOptions{IOStreams: streams, getter: getter}
}

func newCmdRotateCA(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewRotateCAOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "rotate-ca --check",
		Short: "Report whether every managed cluster trusts the hub's CAs, during a hub CA rotation",
		Long: `Report, for every managed cluster, whether its agent trusts each CA of the hub's
CA bundle (or of --ca-file), so that a hub administrator knows when the hub may
serve with a new CA and when an old CA may go.

Agents follow the hub's CA bundle, ConfigMap kube-root-ca.crt in their cluster
namespace, which kube-controller-manager publishes from its --root-ca-file:
they add every CA of it to the CAs they trust for the hub, in their hub and
bootstrap kubeconfigs, and drop a CA once it has left the bundle and the hub no
longer serves with it. Each agent reports the CAs it trusts in its
ManagedCluster's claim hubcas.kubectl-ocm.io. A serving CA rotation is then:

  1. Add the new CA to the bundle: --root-ca-file of kube-controller-manager
     holds the old and the new CA.
  2. Wait until 'kubectl ocm hub rotate-ca --check' reports every cluster ready.
  3. Serve the hub API with a certificate of the new CA.
  4. Remove the old CA from the bundle.

--check changes nothing; it exits with an error while a cluster does not trust
every CA yet.`,
		Example: cli.Examples(`
			# Do all clusters trust every CA the hub publishes?
			kubectl ocm hub rotate-ca --check --context hub

			# Do they trust the CA of new-ca.crt?
			kubectl ocm hub rotate-ca --check --ca-file new-ca.crt --context hub

			# As JSON
			kubectl ocm hub rotate-ca --check -o json`),
		Args: cobra.NoArgs,
		RunE: cli.RunE(o),
	}
	cmd.Flags().BoolVar(&o.Check, "check", false, "Report which clusters trust the CAs; change nothing.")
	cmd.Flags().StringVar(&o.CAFile, "ca-file", "", "PEM file of the CAs to check. Default: the hub's CA bundle, ConfigMap kube-public/kube-root-ca.crt.")
	cmd.Flags().StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml. Empty prints a table.")
	return cmd
}

// Complete has nothing to fill in.
func (o *RotateCAOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks the flags.
func (o *RotateCAOptions) Validate() error {
	if !o.Check {
		return fmt.Errorf("rotate-ca only checks: pass --check (the rotation itself is the hub's: see --help)")
	}
	return validateOutput(o.Output)
}

// CATrust is what rotate-ca --check reports.
type CATrust struct {
	// CAs are the IDs (certs.HubCAID) of the CAs checked.
	CAs []string `json:"cas"`
	// Clusters is every managed cluster's trust.
	Clusters []ClusterCATrust `json:"clusters"`
	// Ready reports whether every cluster trusts every CA.
	Ready bool `json:"ready"`
}

// ClusterCATrust is one cluster's trust of the checked CAs.
type ClusterCATrust struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	// Reported reports whether the agent reports the CAs it trusts.
	Reported bool `json:"reported"`
	// Missing are the checked CAs the cluster does not trust yet.
	Missing []string `json:"missing,omitempty"`
}

// Run reads the CAs and the clusters' claims and reports.
func (o *RotateCAOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	var bundle []byte
	source := o.CAFile
	if o.CAFile != "" {
		if bundle, err = os.ReadFile(o.CAFile); err != nil {
			return fmt.Errorf("read --ca-file: %w", err)
		}
	} else {
		cm := &corev1.ConfigMap{}
		source = "ConfigMap kube-public/" + certs.HubCABundleConfigMap + " of " + cfg.Host
		if err := c.Get(ctx, client.ObjectKey{Namespace: "kube-public", Name: certs.HubCABundleConfigMap}, cm); err != nil {
			return fmt.Errorf("read the hub's CA bundle, %s: %w", source, err)
		}
		bundle = []byte(cm.Data[certs.HubCABundleKey])
	}
	cas, err := certs.ParseCertificates(bundle)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	clusters := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, clusters); err != nil {
		return fmt.Errorf("list ManagedClusters on %s: %w", cfg.Host, err)
	}
	report := checkCATrust(cas, clusters.Items)
	if o.Output != "" {
		if err := printData(o.Out, o.Output, report); err != nil {
			return err
		}
	} else {
		printCATrust(o.Out, report, source)
	}
	if !report.Ready {
		return fmt.Errorf("%d of %d clusters do not trust every CA yet: keep the old CA until they do", notReady(report), len(report.Clusters))
	}
	return nil
}

// checkCATrust compares the CAs with what each cluster reports.
func checkCATrust(cas []*x509.Certificate, clusters []clusterv1.ManagedCluster) CATrust {
	r := CATrust{Ready: true}
	for _, ca := range cas {
		r.CAs = append(r.CAs, certs.HubCAID(ca))
	}
	r.CAs = slices.Compact(r.CAs)
	for i := range clusters {
		mc := &clusters[i]
		t := ClusterCATrust{Name: mc.Name, Available: meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)}
		var trusted []string
		for _, claim := range mc.Status.ClusterClaims {
			if claim.Name == certs.HubCAsClaim {
				t.Reported, trusted = true, strings.Split(claim.Value, ",")
			}
		}
		for _, id := range r.CAs {
			if !slices.Contains(trusted, id) {
				t.Missing = append(t.Missing, id)
			}
		}
		if len(t.Missing) > 0 {
			r.Ready = false
		}
		r.Clusters = append(r.Clusters, t)
	}
	return r
}

// notReady counts the clusters that miss a CA.
func notReady(r CATrust) int {
	n := 0
	for _, c := range r.Clusters {
		if len(c.Missing) > 0 {
			n++
		}
	}
	return n
}

// printCATrust writes the report as a table and a verdict.
func printCATrust(out io.Writer, r CATrust, source string) {
	fmt.Fprintf(out, "CAs checked (%s): %s\n", source, strings.Join(r.CAs, ", "))
	w := printers.GetNewTabWriter(out)
	fmt.Fprintln(w, "CLUSTER\tAVAILABLE\tTRUSTS ALL\tMISSING")
	for _, c := range r.Clusters {
		missing := strings.Join(c.Missing, ",")
		if !c.Reported {
			missing = "not reported (the agent is not kubectl-ocm's, has cluster claims off, or trusts the system's roots)"
		}
		fmt.Fprintf(w, "%s\t%t\t%t\t%s\n", c.Name, c.Available, len(c.Missing) == 0, missing)
	}
	_ = w.Flush()
	if r.Ready {
		fmt.Fprintf(out, "All %d clusters trust every CA checked.\n", len(r.Clusters))
	}
}
