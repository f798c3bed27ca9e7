package hub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// RevokeOptions are the flags of `kubectl ocm hub token revoke`.
type RevokeOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// ClusterName, when set, revokes the tokens bound to that cluster;
	// empty, the shared ones.
	ClusterName string
	// Output is "", "json" or "yaml".
	Output string
	// DryRun is none, client or server: say what would be revoked,
	// revoking nothing.
	DryRun string
}

// RevokeResult is what `hub token revoke -o json|yaml` prints.
type RevokeResult struct {
	// ServiceAccount is the bootstrap ServiceAccount whose tokens were
	// revoked, as namespace/name.
	ServiceAccount string `json:"serviceAccount"`
	// ClusterName is the cluster the revoked tokens were bound to, if any.
	ClusterName string `json:"clusterName,omitempty"`
	// Found is false when there was no such ServiceAccount: no token of it
	// could work.
	Found bool `json:"found"`
	// RecreatedUID is the UID of the shared ServiceAccount created anew,
	// whose tokens `hub token` issues from now on.
	RecreatedUID types.UID `json:"recreatedUID,omitempty"`
	// DryRun is client or server when nothing was changed.
	DryRun string `json:"dryRun,omitempty"`
}

// NewRevokeOptions returns RevokeOptions for the hub getter selects.
func NewRevokeOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *RevokeOptions {
	return &RevokeOptions{IOStreams: streams, getter: getter, DryRun: cli.DryRunNone}
}

// Complete has nothing to fill in.
func (o *RevokeOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate checks the flags.
func (o *RevokeOptions) Validate() error {
	return errors.Join(cli.ValidateOutputFormat(o.Output, cli.DataFormats), cli.ValidateDryRunMode(o.DryRun), validateClusterName(o.ClusterName))
}

func newCmdTokenRevoke(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := NewRevokeOptions(getter, streams)
	cmd := &cobra.Command{
		Use:   "revoke",
		Short: "Make every bootstrap token issued so far stop working",
		Long: `Revoke the bootstrap tokens of the hub of the current context: every token
'kubectl ocm hub token' (or 'hub init') has printed stops working within
seconds (the API server keeps a token's authentication for up to 10 seconds).

A bootstrap token is a token of a bootstrap ServiceAccount, which the API
server accepts only while that ServiceAccount exists with the same UID. With
--cluster-name, revoke deletes the cluster's own bootstrap ServiceAccount
(` + identity.ClusterBootstrapNamespace + `/` + identity.ClusterBootstrapServiceAccountPrefix + `<cluster>): the tokens bound to that cluster stop working,
and the next 'hub token --cluster-name' creates it again. Without it, revoke
deletes the shared ServiceAccount ` + identity.BootstrapNamespace + `/` + identity.BootstrapServiceAccount + ` and
creates it anew, so that 'hub token' keeps issuing tokens that work.

Clusters that have registered keep their own hub credential and are not
affected. An agent still waiting for acceptance with a revoked token needs a
new one (kubectl ocm join again).`,
		Example: cli.Examples(`
			# Revoke every shared bootstrap token, then print a join command with a new one
			kubectl ocm hub token revoke --context hub
			kubectl ocm hub token --context hub

			# Revoke the tokens that may register cluster1
			kubectl ocm hub token revoke --cluster-name cluster1 --context hub

			# Say which ServiceAccount would go, changing nothing
			kubectl ocm hub token revoke --dry-run`),
		Args: cobra.NoArgs,
		RunE: cli.RunE(o),
	}
	cmd.Flags().StringVar(&o.ClusterName, "cluster-name", "", "Revoke the tokens bound to this cluster instead of the shared ones.")
	cli.AddOutputFlag(cmd, &o.Output, "Output format: json, yaml or jsonpath=TEMPLATE. Empty prints a summary.", cli.DataFormats)
	cli.AddDryRunFlagUsage(cmd, &o.DryRun, `"client" says which ServiceAccount would be deleted, changing nothing; "server" also has the hub admit the deletion without doing it.`)
	return cmd
}

// Run deletes the bootstrap ServiceAccount (and creates the shared one
// anew), revoking every token issued for it.
func (o *RevokeOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	ns, name := identity.BootstrapServiceAccountOf(o.ClusterName)
	key := client.ObjectKey{Namespace: ns, Name: name}
	res := &RevokeResult{ServiceAccount: key.String(), ClusterName: o.ClusterName}
	if cli.IsDryRun(o.DryRun) {
		res.DryRun = o.DryRun
	}
	sa := &corev1.ServiceAccount{}
	switch err := c.Get(ctx, key, sa); {
	case apierrors.IsNotFound(err):
		if o.ClusterName == "" {
			return fmt.Errorf("ServiceAccount %s does not exist on %s: is the hub installed? Run `kubectl ocm hub init`", key, cfg.Host)
		}
	case err != nil:
		return fmt.Errorf("read ServiceAccount %s on %s: %w", key, cfg.Host, err)
	default:
		res.Found = true
		w := cli.DryRunWriter(c, o.DryRun)
		uid := sa.UID
		if err := w.Delete(ctx, sa, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete ServiceAccount %s on %s: %w", key, cfg.Host, err)
		}
		if o.ClusterName == "" && !cli.IsDryRun(o.DryRun) {
			if res.RecreatedUID, err = recreate(ctx, c, key, sa, uid); err != nil {
				return fmt.Errorf("%w on %s; `kubectl ocm hub init` creates it again", err, cfg.Host)
			}
		}
	}
	if o.Output != "" {
		return cli.PrintData(o.Out, o.Output, res)
	}
	o.printRevoke(res)
	return nil
}

// recreate creates ServiceAccount key anew from old, whose UID was uid, once
// the old one is gone; the hub's operator may have done so first. It
// returns the new UID.
func recreate(ctx context.Context, c client.Client, key client.ObjectKey, old *corev1.ServiceAccount, uid types.UID) (types.UID, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Namespace: key.Namespace, Name: key.Name, Labels: old.Labels, Annotations: old.Annotations, OwnerReferences: old.OwnerReferences,
	}}
	var newUID types.UID
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got := &corev1.ServiceAccount{}
		switch err := c.Get(ctx, key, got); {
		case apierrors.IsNotFound(err):
			if err := c.Create(ctx, sa.DeepCopy()); err != nil && !apierrors.IsAlreadyExists(err) {
				return false, err
			}
			return false, nil
		case err != nil:
			return false, err
		case got.UID == uid:
			return false, nil // still being deleted
		default:
			newUID = got.UID
			return true, nil
		}
	})
	if err != nil {
		return "", fmt.Errorf("create ServiceAccount %s anew: %w", key, err)
	}
	return newUID, nil
}

// printRevoke writes the summary of res.
func (o *RevokeOptions) printRevoke(res *RevokeResult) {
	suffix := cli.DryRunSuffix(res.DryRun)
	switch {
	case !res.Found:
		fmt.Fprintf(o.Out, "No ServiceAccount %s: no token bound to cluster %s can work; nothing to revoke.\n", res.ServiceAccount, res.ClusterName)
	case res.DryRun != "":
		fmt.Fprintf(o.Out, "ServiceAccount %s would be deleted%s: every bootstrap token issued for it would stop working.\n", res.ServiceAccount, suffix)
	case res.ClusterName != "":
		fmt.Fprintf(o.Out, "ServiceAccount %s deleted: every bootstrap token bound to cluster %s stops working.\n", res.ServiceAccount, res.ClusterName)
	default:
		fmt.Fprintf(o.Out, "ServiceAccount %s deleted and created anew: every bootstrap token issued before stops working; `kubectl ocm hub token` prints a new one.\n", res.ServiceAccount)
	}
}
