package rollout

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/setstate"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/internal/workargs"
)

// HistoryOptions are the flags and arguments of `kubectl ocm work rollout
// history`.
type HistoryOptions struct {
	genericiooptions.IOStreams
	rolloutTarget
}

func newCmdHistory(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &HistoryOptions{IOStreams: streams, rolloutTarget: rolloutTarget{getter: getter}}
	return &cobra.Command{
		Use:   "history NAME [-n NAMESPACE]",
		Short: "List the revisions of ManifestWorkReplicaSet NAME and the clusters running each",
		Example: cli.Examples(`
			# The revisions of web in namespace apps
			kubectl ocm work rollout history web -n apps`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
}

// Complete records NAME and the namespace.
func (o *HistoryOptions) Complete(_ *cobra.Command, args []string) error { return o.complete(args) }

// Validate checks NAME.
func (o *HistoryOptions) Validate() error { return workargs.ValidateName(o.Name) }

// Run prints the revisions, newest last.
func (o *HistoryOptions) Run(ctx context.Context) error {
	c, _, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	h, err := setstate.ReadHistory(ctx, c, o.Namespace, o.Name)
	if err != nil {
		return err
	}
	if len(h.Revisions) == 0 {
		fmt.Fprintf(o.ErrOut, "ManifestWorkReplicaSet %s/%s has no revisions yet: the hub controller records them as it reconciles the set (kubectl ocm hub status)\n", o.Namespace, o.Name)
		return nil
	}
	clusters, err := h.ClustersByHash(ctx, c)
	if err != nil {
		return err
	}
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Revision", Type: "integer"}, {Name: "Hash", Type: "string"}, {Name: "Created", Type: "string"},
		{Name: "Clusters", Type: "integer"}, {Name: "Current", Type: "string"},
	}}
	for _, cr := range h.Revisions {
		current := ""
		if cr == h.Current() {
			current = "yes"
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{cr.Revision, cr.Labels[revision.HashLabel],
			duration.HumanDuration(time.Since(cr.CreationTimestamp.Time)) + " ago", int64(len(clusters[cr.Labels[revision.HashLabel]])), current}})
	}
	return cli.PrintTable(o.Out, table, false)
}
