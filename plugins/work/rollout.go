package work

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

func newCmdRollout(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout",
		Short: "Follow and steer the rollout of a ManifestWorkReplicaSet: status, approve, pause, resume, abort, history, undo",
		Long: `Follow and steer the rollout of a ManifestWorkReplicaSet.

A Progressive or ProgressivePerGroup rollout can run in stages held at gates
(annotation ` + rolloutv1alpha1.GatesAnnotation + `: Before, After or Before,After): one stage per
decision group, or batches of ` + rolloutv1alpha1.StageSizeAnnotation + ` clusters. status shows
where it stands, approve opens a gate; pause, resume and abort stop and start
it; annotation ` + rolloutv1alpha1.FailureStrategyAnnotation + ` (Abort or Rollback) aborts it
when its failures pass maxFailures.

Every template a ManifestWorkReplicaSet has had (with its take-over rule) is
kept by the hub as a ControllerRevision of the set's namespace, numbered as a
Deployment numbers its revisions: the newest 10 besides the current one, or as
many as the set's annotation ` + revision.HistoryLimitAnnotation + ` says.
Each ManifestWork of the set records the revision it was written from.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCmdRolloutStatus(getter, streams), newCmdRolloutApprove(getter, streams),
		newCmdRolloutControl(getter, streams, "pause"), newCmdRolloutControl(getter, streams, "resume"),
		newCmdRolloutControl(getter, streams, "abort"),
		newCmdRolloutHistory(getter, streams), newCmdRolloutUndo(getter, streams))
	return cmd
}

// HistoryOptions are the flags and arguments of `kubectl ocm work rollout
// history`.
type HistoryOptions struct {
	genericiooptions.IOStreams
	getter    genericclioptions.RESTClientGetter
	Name      string
	Namespace string
}

func newCmdRolloutHistory(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &HistoryOptions{IOStreams: streams, getter: getter}
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
func (o *HistoryOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	var err error
	o.Namespace, _, err = namespaceClusters(o.getter, nil, false)
	return err
}

// Validate checks NAME.
func (o *HistoryOptions) Validate() error { return validateWorkName(o.Name) }

// Run prints the revisions, newest last.
func (o *HistoryOptions) Run(ctx context.Context) error {
	c, _, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	h, err := readHistory(ctx, c, o.Namespace, o.Name)
	if err != nil {
		return err
	}
	if len(h.revisions) == 0 {
		fmt.Fprintf(o.ErrOut, "ManifestWorkReplicaSet %s/%s has no revisions yet: the hub controller records them as it reconciles the set (kubectl ocm hub status)\n", o.Namespace, o.Name)
		return nil
	}
	clusters, err := h.clustersByHash(ctx, c)
	if err != nil {
		return err
	}
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Revision", Type: "integer"}, {Name: "Hash", Type: "string"}, {Name: "Created", Type: "string"},
		{Name: "Clusters", Type: "integer"}, {Name: "Current", Type: "string"},
	}}
	for _, cr := range h.revisions {
		current := ""
		if cr == h.current() {
			current = "yes"
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{cr.Revision, cr.Labels[revision.HashLabel],
			duration.HumanDuration(time.Since(cr.CreationTimestamp.Time)) + " ago", int64(len(clusters[cr.Labels[revision.HashLabel]])), current}})
	}
	return cli.PrintTable(o.Out, table, false)
}

// history is a set and its revisions, oldest first.
type history struct {
	set       *workv1alpha1.ManifestWorkReplicaSet
	revisions []*appsv1.ControllerRevision
}

// readHistory reads ManifestWorkReplicaSet namespace/name and its revisions.
func readHistory(ctx context.Context, c client.Client, namespace, name string) (*history, error) {
	set := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, set); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("ManifestWorkReplicaSet %s not found in namespace %s: list them with `kubectl ocm work get --replicaset -n %s`", name, namespace, namespace)
		}
		return nil, fmt.Errorf("read ManifestWorkReplicaSet %s/%s: %w", namespace, name, err)
	}
	revs, err := listRevisions(ctx, c, set)
	if err != nil {
		return nil, err
	}
	return &history{set: set, revisions: revs}, nil
}

// listRevisions returns the revisions of mwrs, oldest first.
func listRevisions(ctx context.Context, c client.Client, mwrs *workv1alpha1.ManifestWorkReplicaSet) ([]*appsv1.ControllerRevision, error) {
	list := &appsv1.ControllerRevisionList{}
	if err := c.List(ctx, list, client.InNamespace(mwrs.Namespace), client.MatchingLabels{revision.SetLabel: mwrs.Name}); err != nil {
		return nil, fmt.Errorf("list the revisions of ManifestWorkReplicaSet %s/%s: %w", mwrs.Namespace, mwrs.Name, err)
	}
	var out []*appsv1.ControllerRevision
	for i := range list.Items {
		if metav1.IsControlledBy(&list.Items[i], mwrs) {
			out = append(out, &list.Items[i])
		}
	}
	revision.Sort(out)
	return out, nil
}

// current returns the newest revision, nil without any.
func (h *history) current() *appsv1.ControllerRevision {
	if len(h.revisions) == 0 {
		return nil
	}
	return h.revisions[len(h.revisions)-1]
}

// find returns revision number n, nil when it is not kept.
func (h *history) find(n int64) *appsv1.ControllerRevision {
	for _, cr := range h.revisions {
		if cr.Revision == n {
			return cr
		}
	}
	return nil
}

// numbers lists the kept revision numbers.
func (h *history) numbers() string {
	out := make([]string, 0, len(h.revisions))
	for _, cr := range h.revisions {
		out = append(out, strconv.FormatInt(cr.Revision, 10))
	}
	return strings.Join(out, ", ")
}

// clustersByHash returns the clusters whose ManifestWork of the set was
// written from each revision hash.
func (h *history) clustersByHash(ctx context.Context, c client.Client) (map[string][]string, error) {
	value, err := workv1alpha1.ControllerNameLabelValue(h.set.Namespace, h.set.Name)
	if err != nil {
		return nil, err
	}
	works := &workv1.ManifestWorkList{}
	if err := c.List(ctx, works, client.MatchingLabels{workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey: value}); err != nil {
		return nil, fmt.Errorf("list the ManifestWorks of ManifestWorkReplicaSet %s/%s: %w", h.set.Namespace, h.set.Name, err)
	}
	out := map[string][]string{}
	for _, w := range works.Items {
		hash := w.Annotations[revision.HashAnnotation]
		out[hash] = append(out[hash], w.Namespace)
	}
	return out, nil
}

// revisionNumbers maps the hashes of the kept revisions of mwrs to their
// numbers; none when the caller may not list ControllerRevisions.
func revisionNumbers(ctx context.Context, c client.Client, mwrs *workv1alpha1.ManifestWorkReplicaSet) (map[string]int64, error) {
	revs, err := listRevisions(ctx, c, mwrs)
	if apierrors.IsForbidden(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, cr := range revs {
		out[cr.Labels[revision.HashLabel]] = cr.Revision
	}
	return out, nil
}

// UndoOptions are the flags and arguments of `kubectl ocm work rollout undo`.
type UndoOptions struct {
	genericiooptions.IOStreams
	getter     genericclioptions.RESTClientGetter
	Name       string
	Namespace  string
	ToRevision int64
	DryRun     string
}

func newCmdRolloutUndo(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &UndoOptions{IOStreams: streams, getter: getter}
	cmd := &cobra.Command{
		Use:   "undo NAME [--to-revision N] [-n NAMESPACE]",
		Short: "Roll ManifestWorkReplicaSet NAME back to an earlier revision, through its own rollout strategy",
		Long: `Roll ManifestWorkReplicaSet NAME back to an earlier revision: its template
(and take-over rule) become those of that revision, which the hub then rolls
out to the clusters as any change of the template, with the set's rollout
strategy (Progressive: a few clusters at a time). The revision becomes the
newest, as with kubectl rollout undo.`,
		Example: cli.Examples(`
			# Back to the previous revision of web in namespace apps
			kubectl ocm work rollout undo web -n apps

			# Back to revision 3 (see kubectl ocm work rollout history web -n apps)
			kubectl ocm work rollout undo web -n apps --to-revision 3`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE:              cli.RunE(o),
	}
	cmd.Flags().Int64Var(&o.ToRevision, "to-revision", 0, "The revision to roll back to; 0 means the one before the current.")
	cli.AddDryRunFlagUsage(cmd, &o.DryRun, `"client" says which revision the set would go back to and changes nothing; "server" also has the hub admit the change without storing it.`)
	return cmd
}

// Complete records NAME and the namespace.
func (o *UndoOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	var err error
	o.Namespace, _, err = namespaceClusters(o.getter, nil, false)
	return err
}

// Validate checks the flags.
func (o *UndoOptions) Validate() error {
	errs := []error{validateWorkName(o.Name), cli.ValidateDryRunMode(o.DryRun)}
	if o.ToRevision < 0 {
		errs = append(errs, fmt.Errorf("--to-revision %d: a revision is a number from 1, or 0 for the one before the current", o.ToRevision))
	}
	return errors.Join(errs...)
}

// Run writes the chosen revision's template into the set.
func (o *UndoOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	h, err := readHistory(ctx, c, o.Namespace, o.Name)
	if err != nil {
		return err
	}
	cur := h.current()
	if cur == nil {
		return fmt.Errorf("ManifestWorkReplicaSet %s/%s has no revisions yet: the hub controller records them as it reconciles the set (kubectl ocm hub status)", o.Namespace, o.Name)
	}
	target := h.find(o.ToRevision)
	switch {
	case o.ToRevision == 0 && len(h.revisions) < 2:
		return fmt.Errorf("ManifestWorkReplicaSet %s/%s has no revision before the current one (%d) to go back to", o.Namespace, o.Name, cur.Revision)
	case o.ToRevision == 0:
		target = h.revisions[len(h.revisions)-2]
	case target == nil:
		return fmt.Errorf("revision %d of ManifestWorkReplicaSet %s/%s is not kept (kept: %s): choose one of them with --to-revision", o.ToRevision, o.Namespace, o.Name, h.numbers())
	case target == cur:
		return fmt.Errorf("ManifestWorkReplicaSet %s/%s is at revision %d already", o.Namespace, o.Name, cur.Revision)
	}
	content, err := revision.Decode(target)
	if err != nil {
		return err
	}
	hash := target.Labels[revision.HashLabel]
	if o.DryRun == cli.DryRunClient {
		fmt.Fprintf(o.Out, "ManifestWorkReplicaSet %s/%s would go back from revision %d to revision %d (%s) (dry run)\n", o.Namespace, o.Name, cur.Revision, target.Revision, hash)
		return nil
	}
	set := h.set
	content.ApplyTo(set)
	var opts []client.UpdateOption
	suffix := ""
	if o.DryRun == cli.DryRunServer {
		opts, suffix = append(opts, client.DryRunAll), " (server dry run)"
	}
	if err := c.Update(ctx, set, opts...); err != nil {
		if apierrors.IsConflict(err) {
			return fmt.Errorf("ManifestWorkReplicaSet %s/%s changed while it was being rolled back: run the command again", o.Namespace, o.Name)
		}
		return fmt.Errorf("write ManifestWorkReplicaSet %s/%s on %s: %w", o.Namespace, o.Name, cfg.Host, err)
	}
	gated := ""
	if p, _ := rolloutv1alpha1.PolicyOf(set.Annotations); p.Gated() {
		gated = " and its gates (approve them with `kubectl ocm work rollout approve`)"
	}
	fmt.Fprintf(o.Out, "ManifestWorkReplicaSet %s/%s rolled back from revision %d to revision %d (%s)%s; the hub rolls it out with the set's rollout strategy%s: follow it with `kubectl ocm work rollout status %s -n %s`\n",
		o.Namespace, o.Name, cur.Revision, target.Revision, hash, suffix, gated, o.Name, o.Namespace)
	return nil
}
