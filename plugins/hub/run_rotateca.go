package hub

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// RotateCAOptions are the flags of `kubectl ocm hub rotate-ca`.
type RotateCAOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Check reports and changes nothing.
	Check bool
	// CAFile names the serving CAs to check; empty: the hub's published
	// bundle.
	CAFile string
	// SigningCAFile names the CA the hub now signs client certificates
	// with: rotate-ca announces it to the agents (unless Check) and reports
	// which clusters hold a certificate of it.
	SigningCAFile string
	// Wait waits until every cluster is ready, for at most Timeout.
	Wait    bool
	Timeout time.Duration
	// Output is "", "json" or "yaml".
	Output string
}

// NewRotateCAOptions returns RotateCAOptions for the hub getter selects.
func NewRotateCAOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *RotateCAOptions {
	return &RotateCAOptions{IOStreams: streams, getter: getter, Timeout: 10 * time.Minute}
}

func newCmdRotateCA(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewRotateCAOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "rotate-ca (--check | --signing-ca-file FILE)",
		Short: "Follow a rotation of the hub's CAs across the fleet: which clusters trust the new serving CA, hold a certificate of the new signing CA",
		Long: `Follow a rotation of the hub's CAs across the fleet, so that no managed cluster
loses the hub.

--check reports, cluster by cluster, whether its agent trusts every serving CA
the hub publishes in ConfigMap kube-public/kube-root-ca.crt (or the CA of
--ca-file). --signing-ca-file announces the CA the hub now signs agents' client
certificates with; agents holding a certificate of another CA request a new
one, and rotate-ca reports which clusters hold one of the new CA. rotate-ca
exits with an error while a cluster is not ready; --wait waits until all are.

The steps of a serving or signing CA rotation are in
docs/operations.md#rotating-the-hubs-cas.`,
		Example: cli.Examples(`
			# Do all clusters trust every CA the hub publishes?
			kubectl ocm hub rotate-ca --check --context hub

			# Do they trust the CA of new-ca.crt? Wait until they all do.
			kubectl ocm hub rotate-ca --check --ca-file new-ca.crt --wait --context hub

			# The hub signs with new-signer.crt now: tell the agents, wait until
			# every cluster holds a certificate of it.
			kubectl ocm hub rotate-ca --signing-ca-file new-signer.crt --wait --context hub

			# As JSON
			kubectl ocm hub rotate-ca --check -o json`),
		Args: cobra.NoArgs,
		RunE: cli.RunE(o),
	}
	cmd.Flags().BoolVar(&o.Check, "check", false, "Report which clusters are ready; change nothing.")
	cmd.Flags().StringVar(&o.CAFile, "ca-file", "", "PEM file of the serving CAs to check. Default: the hub's CA bundle, ConfigMap kube-public/kube-root-ca.crt.")
	cmd.Flags().StringVar(&o.SigningCAFile, "signing-ca-file", "", "PEM file of the CA the hub signs client certificates with now: announce it to the agents (not with --check) and report which clusters hold a certificate of it.")
	cmd.Flags().BoolVar(&o.Wait, "wait", false, "Wait until every cluster is ready, printing progress.")
	cli.AddTimeoutFlag(cmd.Flags(), &o.Timeout, o.Timeout, "How long --wait waits.")
	cli.AddOutputFlag(cmd, &o.Output, "Output format: json, yaml or jsonpath=TEMPLATE. Empty prints a table.", cli.DataFormats)
	return cmd
}

// Complete has nothing to fill in.
func (o *RotateCAOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks the flags.
func (o *RotateCAOptions) Validate() error {
	if !o.Check && o.SigningCAFile == "" {
		return fmt.Errorf("rotate-ca needs --check (report the serving CAs' trust), or --signing-ca-file (announce the new client-signing CA); see --help for the rotation's steps")
	}
	if o.CAFile != "" && o.SigningCAFile != "" {
		return fmt.Errorf("--ca-file checks serving CAs and --signing-ca-file the client-signing CA: pass one of them")
	}
	if o.Wait && o.Timeout <= 0 {
		return fmt.Errorf("--timeout must be positive with --wait")
	}
	return cli.ValidateOutputFormat(o.Output, cli.DataFormats)
}

// CATrust is what rotate-ca reports.
type CATrust struct {
	// Kind is "serving" or "signing".
	Kind string `json:"kind"`
	// CAs are the IDs of the CAs checked: certs.HubCAID of serving CAs,
	// certs.KeyID of a signing CA's key.
	CAs []string `json:"cas"`
	// Clusters is every managed cluster's state.
	Clusters []ClusterCATrust `json:"clusters"`
	// Ready reports whether every cluster is ready.
	Ready bool `json:"ready"`
}

// ClusterCATrust is one cluster's state in a CA rotation.
type ClusterCATrust struct {
	Name      string `json:"name"`
	Available bool   `json:"available"`
	// Reported reports whether the agent reports what is checked.
	Reported bool `json:"reported"`
	// Missing are the serving CAs the cluster does not trust yet.
	Missing []string `json:"missing,omitempty"`
	// Credential is, for a signing CA check, "certificate" or "token".
	Credential string `json:"credential,omitempty"`
	// Issuer is, for a signing CA check, the key ID of the CA of the
	// cluster's certificate.
	Issuer string `json:"issuer,omitempty"`
	// Ready reports whether the cluster is ready for the old CA to go.
	Ready bool `json:"ready"`
}

// Run announces the signing CA when asked to, then reports, until every
// cluster is ready with --wait.
func (o *RotateCAOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	var check func(ctx context.Context) (CATrust, string, error)
	if o.SigningCAFile != "" {
		check, err = o.signing(ctx, c, cfg.Host)
	} else {
		check, err = o.serving(ctx, c, cfg.Host)
	}
	if err != nil {
		return err
	}
	report, source, err := check(ctx)
	if err != nil {
		return err
	}
	var waitErr error
	if o.Wait && !report.Ready {
		waitErr = cli.Wait(ctx, o.ErrOut, o.Timeout, "every cluster to be ready for the old CA to go", func(ctx context.Context) (bool, string, error) {
			r, _, err := check(ctx)
			if err != nil {
				return false, "", err
			}
			report = r
			return r.Ready, fmt.Sprintf("%d of %d clusters ready", len(r.Clusters)-notReady(r), len(r.Clusters)), nil
		})
	}
	if o.Output != "" {
		if err := cli.PrintData(o.Out, o.Output, report); err != nil {
			return err
		}
	} else {
		printCATrust(o.Out, report, source)
	}
	if !report.Ready {
		if waitErr != nil {
			return waitErr
		}
		return fmt.Errorf("%d of %d clusters are not ready: keep the old CA until they are", notReady(report), len(report.Clusters))
	}
	return nil
}

// serving returns the check of the serving CAs of --ca-file or the hub's
// published bundle.
func (o *RotateCAOptions) serving(ctx context.Context, c client.Client, host string) (func(context.Context) (CATrust, string, error), error) {
	var cas []*x509.Certificate
	source := o.CAFile
	if o.CAFile != "" {
		bundle, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read --ca-file: %w", err)
		}
		if cas, err = certs.ParseCertificates(bundle); err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
	} else {
		source = "ConfigMap " + certs.HubCABundleRef + " of " + host
		var err error
		if _, cas, err = certs.ReadHubCABundle(ctx, c); err != nil {
			return nil, fmt.Errorf("%w (on %s)", err, host)
		}
	}
	return func(ctx context.Context) (CATrust, string, error) {
		clusters := &clusterv1.ManagedClusterList{}
		if err := c.List(ctx, clusters); err != nil {
			return CATrust{}, "", fmt.Errorf("list ManagedClusters on %s: %w", host, err)
		}
		return checkCATrust(cas, clusters.Items), source, nil
	}, nil
}

// signing reads --signing-ca-file, announces it on every ManagedCluster
// unless --check, and returns the check of which clusters hold a
// certificate of it.
func (o *RotateCAOptions) signing(ctx context.Context, c client.Client, host string) (func(context.Context) (CATrust, string, error), error) {
	bundle, err := os.ReadFile(o.SigningCAFile)
	if err != nil {
		return nil, fmt.Errorf("read --signing-ca-file: %w", err)
	}
	cas, err := certs.ParseCertificates(bundle)
	if err != nil {
		return nil, fmt.Errorf("--signing-ca-file %s: %w", o.SigningCAFile, err)
	}
	for _, ca := range cas {
		if !ca.IsCA || len(ca.SubjectKeyId) == 0 {
			return nil, fmt.Errorf("--signing-ca-file %s: %q is not a CA with a subject key identifier; agents name their certificate's CA by it", o.SigningCAFile, ca.Subject.CommonName)
		}
	}
	source := o.SigningCAFile
	announcedPEM, err := certutil.EncodeCertificates(cas...)
	if err != nil {
		return nil, fmt.Errorf("--signing-ca-file %s: %w", o.SigningCAFile, err)
	}
	announced := string(announcedPEM)
	if !o.Check {
		clusters := &clusterv1.ManagedClusterList{}
		if err := c.List(ctx, clusters); err != nil {
			return nil, fmt.Errorf("list ManagedClusters on %s: %w", host, err)
		}
		n := 0
		for _, mc := range clusters.Items {
			if mc.Annotations[certs.ClientSignerAnnotation] == announced {
				continue
			}
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{certs.ClientSignerAnnotation: announced}}})
			if err != nil {
				return nil, err
			}
			if err := c.Patch(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: mc.Name}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
				return nil, fmt.Errorf("announce the signing CA on ManagedCluster %s: %w (%d announced before it)", mc.Name, err, n)
			}
			n++
		}
		fmt.Fprintf(o.ErrOut, "Announced the client-signing CA of %s to %d clusters (annotation %s).\n", o.SigningCAFile, n, certs.ClientSignerAnnotation)
	}
	return func(ctx context.Context) (CATrust, string, error) {
		clusters := &clusterv1.ManagedClusterList{}
		if err := c.List(ctx, clusters); err != nil {
			return CATrust{}, "", fmt.Errorf("list ManagedClusters on %s: %w", host, err)
		}
		// The token driver's clusters have a token identity, a
		// ServiceAccount named after the cluster in
		// identity.AgentTokenNamespace, and no certificate.
		sas := &corev1.ServiceAccountList{}
		if err := c.List(ctx, sas, client.InNamespace(identity.AgentTokenNamespace)); err != nil {
			return CATrust{}, "", fmt.Errorf("list the token driver's ServiceAccounts in namespace %s on %s: %w", identity.AgentTokenNamespace, host, err)
		}
		token := map[string]bool{}
		for _, sa := range sas.Items {
			token[sa.Name] = true
		}
		return checkSigning(cas, clusters.Items, token), source, nil
	}, nil
}

// checkCATrust compares the serving CAs with what each cluster reports.
func checkCATrust(cas []*x509.Certificate, clusters []clusterv1.ManagedCluster) CATrust {
	r := CATrust{Kind: "serving", Ready: true}
	for _, ca := range cas {
		r.CAs = append(r.CAs, certs.HubCAID(ca))
	}
	r.CAs = slices.Compact(r.CAs)
	for i := range clusters {
		mc := &clusters[i]
		t := ClusterCATrust{Name: mc.Name, Available: meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)}
		var trusted []string
		if v, ok := mc.ClaimValue(certs.HubCAsClaim); ok {
			t.Reported, trusted = true, strings.Split(v, ",")
		}
		for _, id := range r.CAs {
			if !slices.Contains(trusted, id) {
				t.Missing = append(t.Missing, id)
			}
		}
		t.Ready = len(t.Missing) == 0
		r.Ready = r.Ready && t.Ready
		r.Clusters = append(r.Clusters, t)
	}
	return r
}

// checkSigning compares the signing CAs with the CA of each cluster's
// certificate; clusters of token are ready without one.
func checkSigning(cas []*x509.Certificate, clusters []clusterv1.ManagedCluster, token map[string]bool) CATrust {
	r := CATrust{Kind: "signing", Ready: true}
	for _, ca := range cas {
		r.CAs = append(r.CAs, certs.KeyID(ca.SubjectKeyId))
	}
	for i := range clusters {
		mc := &clusters[i]
		t := ClusterCATrust{Name: mc.Name, Available: meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable)}
		switch issuer, ok := mc.ClaimValue(certs.ClientIssuerClaim); {
		case ok:
			t.Credential, t.Issuer, t.Reported = "certificate", issuer, true
			t.Ready = slices.Contains(r.CAs, issuer)
		case token[mc.Name]:
			t.Credential, t.Reported, t.Ready = "token", true, true
		}
		r.Ready = r.Ready && t.Ready
		r.Clusters = append(r.Clusters, t)
	}
	return r
}

// notReady counts the clusters that are not ready.
func notReady(r CATrust) int {
	n := 0
	for _, c := range r.Clusters {
		if !c.Ready {
			n++
		}
	}
	return n
}

// notReported explains a cluster whose agent reports nothing.
const notReported = "not reported (the agent is not kubectl-ocm's, has cluster claims off, or trusts the system's roots)"

// printCATrust writes the report as a table and a verdict.
func printCATrust(out io.Writer, r CATrust, source string) {
	w := printers.GetNewTabWriter(out)
	switch r.Kind {
	case "signing":
		fmt.Fprintf(out, "Client-signing CA (%s): %s\n", source, strings.Join(r.CAs, ", "))
		fmt.Fprintln(w, "CLUSTER\tAVAILABLE\tCREDENTIAL\tCERTIFICATE CA\tREADY")
		for _, c := range r.Clusters {
			cred, issuer := c.Credential, c.Issuer
			if !c.Reported {
				cred = notReported
			}
			if issuer == "" {
				issuer = "-"
			}
			fmt.Fprintf(w, "%s\t%t\t%s\t%s\t%t\n", c.Name, c.Available, cred, issuer, c.Ready)
		}
	default:
		fmt.Fprintf(out, "Serving CAs checked (%s): %s\n", source, strings.Join(r.CAs, ", "))
		fmt.Fprintln(w, "CLUSTER\tAVAILABLE\tTRUSTS ALL\tMISSING")
		for _, c := range r.Clusters {
			missing := strings.Join(c.Missing, ",")
			if !c.Reported {
				missing = notReported
			}
			fmt.Fprintf(w, "%s\t%t\t%t\t%s\n", c.Name, c.Available, c.Ready, missing)
		}
	}
	_ = w.Flush()
	if r.Ready {
		fmt.Fprintf(out, "All %d clusters are ready for the old CA to go.\n", len(r.Clusters))
	}
}
