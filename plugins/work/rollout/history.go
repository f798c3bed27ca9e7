package rollout

import (
	"context"
	"fmt"
	"slices"
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

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
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
	if err := c.List(ctx, list, client.InNamespace(mwrs.Namespace), client.MatchingLabels{revision.SetLabel: revision.SetLabelValue(mwrs.Name)}); err != nil {
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
	works := &workv1.ManifestWorkList{}
	if err := c.List(ctx, works, client.MatchingLabels(workv1alpha1.OwnerLabels(h.set.Namespace, h.set.Name))); err != nil {
		return nil, fmt.Errorf("list the ManifestWorks of ManifestWorkReplicaSet %s/%s: %w", h.set.Namespace, h.set.Name, err)
	}
	out := map[string][]string{}
	for _, w := range works.Items {
		if !workv1alpha1.Owns(h.set.Namespace, h.set.Name, &w) {
			continue
		}
		hash := w.Annotations[revision.HashAnnotation]
		out[hash] = append(out[hash], w.Namespace)
	}
	return out, nil
}

// RevisionNumbers maps the hashes of the kept revisions of mwrs to their
// numbers; none when the caller may not list ControllerRevisions.
func RevisionNumbers(ctx context.Context, c client.Client, mwrs *workv1alpha1.ManifestWorkReplicaSet) (map[string]int64, error) {
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

// RevisionReport is one kept revision of a ManifestWorkReplicaSet.
type RevisionReport struct {
	Revision int64     `json:"revision"`
	Hash     string    `json:"hash"`
	Created  time.Time `json:"created"`
	// Clusters have a ManifestWork of the set written from the revision.
	Clusters []string `json:"clusters,omitempty"`
	Current  bool     `json:"current,omitempty"`
}

// History reads the kept revisions of ManifestWorkReplicaSet
// namespace/name, oldest first, with the clusters at each.
func History(ctx context.Context, c client.Client, namespace, name string) ([]RevisionReport, error) {
	h, err := readHistory(ctx, c, namespace, name)
	if err != nil {
		return nil, err
	}
	clusters, err := h.clustersByHash(ctx, c)
	if err != nil {
		return nil, err
	}
	out := make([]RevisionReport, 0, len(h.revisions))
	for _, cr := range h.revisions {
		hash := cr.Labels[revision.HashLabel]
		names := slices.Clone(clusters[hash])
		slices.Sort(names)
		out = append(out, RevisionReport{Revision: cr.Revision, Hash: hash, Created: cr.CreationTimestamp.UTC(), Clusters: names, Current: cr == h.current()})
	}
	return out, nil
}
