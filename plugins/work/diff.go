package work

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/text"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/workset"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// DiffOfLabel on a ManifestWork in ReportDiff mode names the work whose
// new manifests `kubectl ocm work diff` compares; the command deletes it
// when done.
const DiffOfLabel = "work.kubectl-ocm.io/diff-of"

// errDiffers is returned, silently, when the new manifests would change a
// cluster: the command exits 1, as kubectl diff does.
var errDiffers = errors.New("the new manifests would change the cluster")

// DiffOptions are the flags and arguments of `kubectl ocm work diff`.
type DiffOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Name is the ManifestWork, or the ManifestWorkReplicaSet with
	// ReplicaSet.
	Name string
	// Filenames and Recursive are the new manifests (-f, -R).
	Filenames []string
	Recursive bool
	// Clusters are the clusters whose work NAME to compare (--clusters, else
	// an explicit -n); empty: every cluster that has it.
	Clusters []string
	// ReplicaSet compares ManifestWorkReplicaSet NAME of Namespace on every
	// cluster it has a work on.
	ReplicaSet bool
	Namespace  string
	// Timeout bounds the wait for the agents' reports.
	Timeout time.Duration
	// Output is json or yaml; empty prints the diffs.
	Output string
}

func newCmdDiff(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &DiffOptions{IOStreams: streams, getter: getter, Timeout: 2 * time.Minute}
	cmd := &cobra.Command{
		Use:   "diff NAME -f FILE|DIR [--clusters CLUSTER[,CLUSTER...] | --replicaset -n NAMESPACE]",
		Short: "Show, per cluster, what new manifests for a work would change, without changing anything",
		Long: `Show what replacing the manifests of ManifestWork NAME (or of
ManifestWorkReplicaSet NAME, with --replicaset) with those read from -f would
change on each cluster, without changing anything.

The hub cannot reach the clusters, so each cluster's work agent computes it: the
command writes, next to the work on each cluster, a ManifestWork in ReportDiff
mode (annotation ` + workv1.ApplyModeAnnotation + `) holding the new manifests
with the work's manifest configs, executor and, for a ManifestWorkReplicaSet,
the cluster's overrides. The agent applies each manifest with its update
strategy as a server-side dry run against the live object and reports the
difference; the command waits for every report, prints them as unified diffs,
one per group of clusters that agree, and deletes those works. Manifests the
new set leaves out are listed as deleted (unless the work orphans them).

The exit status is 0 when nothing would change, 1 when something would, and
another failure otherwise, as kubectl diff's.`,
		Example: cli.Examples(`
			# What app-v2.yaml would change where work web runs
			kubectl ocm work diff web -f app-v2.yaml

			# Only on cluster1 and cluster2
			kubectl ocm work diff web -f app-v2.yaml --clusters cluster1,cluster2

			# On every cluster of ManifestWorkReplicaSet web in namespace apps, overrides included
			kubectl ocm work diff web -f app-v2.yaml --replicaset -n apps`),
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeWorks(getter),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := cli.RunE(o)(cmd, args)
			if errors.Is(err, errDiffers) {
				cmd.SilenceErrors = true
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&o.Filenames, "filename", "f", nil, "Files or directories of the new manifests (repeatable; - reads stdin).")
	f.BoolVarP(&o.Recursive, "recursive", "R", false, "Also read the subdirectories of directories given with -f.")
	f.StringSliceVarP(&o.Clusters, "clusters", "c", nil, "The clusters whose work NAME to compare, comma separated; default: every cluster that has it.")
	f.BoolVarP(&o.ReplicaSet, "replicaset", "r", false, "NAME is a ManifestWorkReplicaSet of -n NAMESPACE: compare on every cluster it has a work on.")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long to wait for the agents' reports.")
	f.StringVarP(&o.Output, "output", "o", "", "Output format: json or yaml. Empty prints the diffs.")
	_ = cmd.MarkFlagRequired("filename")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.RegisterFlagCompletionFunc("clusters", cli.CompleteClusters(getter))
	return cmd
}

// Complete records NAME, and the namespace: the clusters' (an explicit -n)
// or the set's.
func (o *DiffOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	var err error
	if o.ReplicaSet {
		o.Namespace, _, err = namespaceClusters(o.getter, nil, false)
		return err
	}
	_, o.Clusters, err = namespaceClusters(o.getter, o.Clusters, true)
	return err
}

// Validate checks the flags.
func (o *DiffOptions) Validate() error {
	errs := []error{validateWorkName(o.Name)}
	if o.ReplicaSet && len(o.Clusters) > 0 {
		errs = append(errs, errors.New("--clusters and --replicaset exclude each other: a ManifestWorkReplicaSet is compared on every cluster it has a work on"))
	}
	if len(o.Clusters) > 0 {
		errs = append(errs, validateClusters(o.Clusters, "--clusters"))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %s: give a positive duration", o.Timeout))
	}
	if o.Output != "" && o.Output != "json" && o.Output != "yaml" {
		errs = append(errs, fmt.Errorf("--output %q is not supported: use json or yaml", o.Output))
	}
	return errors.Join(errs...)
}

// DiffReport is what the new manifests would change, per cluster.
type DiffReport struct {
	Name     string        `json:"name"`
	Clusters []ClusterDiff `json:"clusters"`
}

// ClusterDiff is what the new manifests would change on one cluster.
type ClusterDiff struct {
	Cluster   string         `json:"cluster"`
	Differs   bool           `json:"differs"`
	Manifests []ManifestDiff `json:"manifests"`
}

// ManifestDiff is what one manifest would change: Result is NoDiff,
// Differs, WouldCreate, Deleted (the new manifests leave it out) or
// DiffFailed; Diff is the unified diff, or the error.
type ManifestDiff struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Result    string `json:"result"`
	Diff      string `json:"diff,omitempty"`
}

// diffTarget is one cluster to compare on: its current work and the spec
// the new manifests give it.
type diffTarget struct {
	cluster string
	current *workv1.ManifestWork
	spec    workv1.ManifestWorkSpec
	probe   *workv1.ManifestWork
}

// Run writes the ReportDiff works, waits for their reports, prints them and
// deletes the works.
func (o *DiffOptions) Run(ctx context.Context) error {
	manifests, err := cli.ReadManifests(o.Filenames, o.Recursive, o.In)
	if err != nil {
		return err
	}
	if err := cli.ValidateManifests(manifests, workv1.DefaultManifestsSizeLimit); err != nil {
		return err
	}
	raw := make([]workv1.Manifest, 0, len(manifests))
	for _, m := range manifests {
		data, err := json.Marshal(m.Object.Object)
		if err != nil {
			return fmt.Errorf("encode manifest %s: %w", m.Object.GetName(), err)
		}
		raw = append(raw, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: data}})
	}
	c, cfg, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	var targets []*diffTarget
	if o.ReplicaSet {
		targets, err = o.setTargets(ctx, c, raw)
	} else {
		targets, err = o.workTargets(ctx, c, raw)
	}
	if err != nil {
		return err
	}
	defer o.cleanup(ctx, c, targets)
	err = eachTarget(ctx, targets, func(ctx context.Context, t *diffTarget) error {
		probe := &workv1.ManifestWork{
			ObjectMeta: metav1.ObjectMeta{GenerateName: probePrefix(o.Name), Namespace: t.cluster,
				Labels:      map[string]string{DiffOfLabel: o.Name},
				Annotations: map[string]string{workv1.ApplyModeAnnotation: string(workv1.ApplyModeReportDiff)}},
			Spec: t.spec,
		}
		if err := c.Create(ctx, probe); err != nil {
			return fmt.Errorf("write the ReportDiff ManifestWork of %s to cluster %s on %s: %w", o.Name, t.cluster, cfg.Host, err)
		}
		t.probe = probe
		return nil
	})
	if err != nil {
		return err
	}
	if err := o.wait(ctx, c, targets); err != nil {
		return err
	}
	report := o.report(targets)
	switch o.Output {
	case "json":
		err = cli.PrintJSON(o.Out, report)
	case "yaml":
		err = cli.PrintYAML(o.Out, report)
	default:
		printDiffs(o.Out, report)
	}
	if err != nil {
		return err
	}
	var failed []string
	differs := false
	for _, cd := range report.Clusters {
		differs = differs || cd.Differs
		for _, m := range cd.Manifests {
			if m.Result == workv1.DiffReasonFailed {
				failed = append(failed, fmt.Sprintf("%s: %s %s: %s", cd.Cluster, m.Kind, m.Name, m.Diff))
			}
		}
	}
	switch {
	case len(failed) > 0:
		return fmt.Errorf("%d manifests could not be compared: %s", len(failed), text.JoinLimited(failed, "; ", 5))
	case differs:
		return errDiffers
	}
	return nil
}

// probePrefix is the generateName of the ReportDiff works of name.
func probePrefix(name string) string {
	if len(name) > 200 {
		name = strings.TrimRight(name[:200], "-.")
	}
	return name + "-diff-"
}

// workTargets reads ManifestWork NAME on each cluster (every cluster that
// has it without --clusters): each must have applied its current
// generation, which the new manifests are compared with.
func (o *DiffOptions) workTargets(ctx context.Context, c client.Client, manifests []workv1.Manifest) ([]*diffTarget, error) {
	var works []workv1.ManifestWork
	if len(o.Clusters) == 0 {
		list := &workv1.ManifestWorkList{}
		if err := c.List(ctx, list); err != nil {
			return nil, fmt.Errorf("list ManifestWorks: %w", err)
		}
		for _, w := range list.Items {
			if w.Name == o.Name {
				works = append(works, w)
			}
		}
		if len(works) == 0 {
			return nil, fmt.Errorf("no cluster has ManifestWork %s: a diff compares new manifests with a work that applied; list the works with `kubectl ocm work get`", o.Name)
		}
	}
	for _, cluster := range o.Clusters {
		w := workv1.ManifestWork{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: o.Name}, &w); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("ManifestWork %s not found in cluster %s: a diff compares new manifests with a work that applied; list the works with `kubectl ocm work get --clusters %s`", o.Name, cluster, cluster)
			}
			return nil, fmt.Errorf("read ManifestWork %s in cluster %s: %w", o.Name, cluster, err)
		}
		works = append(works, w)
	}
	targets := make([]*diffTarget, 0, len(works))
	for i := range works {
		w := &works[i]
		if err := applied(w); err != nil {
			return nil, err
		}
		spec := *w.Spec.DeepCopy()
		spec.Workload.Manifests = manifests
		targets = append(targets, &diffTarget{cluster: w.Namespace, current: w, spec: spec})
	}
	return targets, nil
}

// setTargets reads ManifestWorkReplicaSet NAME and its works: each cluster's
// new spec is the set's template with the new manifests and the overrides
// that choose the cluster.
func (o *DiffOptions) setTargets(ctx context.Context, c client.Client, manifests []workv1.Manifest) ([]*diffTarget, error) {
	set := &workv1alpha1.ManifestWorkReplicaSet{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, set); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("ManifestWorkReplicaSet %s not found in namespace %s: list them with `kubectl ocm work get --replicaset -n %s`", o.Name, o.Namespace, o.Namespace)
		}
		return nil, fmt.Errorf("read ManifestWorkReplicaSet %s/%s: %w", o.Namespace, o.Name, err)
	}
	spec := set.Spec.DeepCopy()
	spec.ManifestWorkTemplate.Workload.Manifests = manifests
	ov, err := workset.NewOverrider(spec)
	if err != nil {
		return nil, fmt.Errorf("the overrides of ManifestWorkReplicaSet %s/%s do not fit the new manifests: %w", o.Namespace, o.Name, err)
	}
	value, err := workv1alpha1.ControllerNameLabelValue(o.Namespace, o.Name)
	if err != nil {
		return nil, err
	}
	works := &workv1.ManifestWorkList{}
	if err := c.List(ctx, works, client.MatchingLabels{workv1alpha1.ManifestWorkReplicaSetControllerNameLabelKey: value}); err != nil {
		return nil, fmt.Errorf("list the ManifestWorks of ManifestWorkReplicaSet %s/%s: %w", o.Namespace, o.Name, err)
	}
	if len(works.Items) == 0 {
		return nil, fmt.Errorf("ManifestWorkReplicaSet %s/%s has no ManifestWork yet: a diff compares new manifests with works that applied; see `kubectl ocm work rollout status %s -n %s`", o.Namespace, o.Name, o.Name, o.Namespace)
	}
	targets := make([]*diffTarget, 0, len(works.Items))
	for i := range works.Items {
		w := &works.Items[i]
		if err := applied(w); err != nil {
			return nil, err
		}
		var lbls map[string]string
		if ov.NeedsLabels() {
			mc := &clusterv1.ManagedCluster{}
			if err := c.Get(ctx, client.ObjectKey{Name: w.Namespace}, mc); client.IgnoreNotFound(err) != nil {
				return nil, fmt.Errorf("read ManagedCluster %s for the set's overrides by label: %w", w.Namespace, err)
			}
			lbls = mc.Labels
		}
		s, _, err := ov.SpecFor(w.Namespace, lbls)
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", w.Namespace, err)
		}
		targets = append(targets, &diffTarget{cluster: w.Namespace, current: w, spec: *s})
	}
	return targets, nil
}

// applied returns an error unless w applied its current generation.
func applied(w *workv1.ManifestWork) error {
	c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkApplied)
	if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != w.Generation {
		return fmt.Errorf("ManifestWork %s in cluster %s has not applied yet (Applied is not True for its generation %d): a diff compares new manifests with what it applied; wait for it with `kubectl ocm work get %s --clusters %s`",
			w.Name, w.Namespace, w.Generation, w.Name, w.Namespace)
	}
	return nil
}

// diffWriters bounds the concurrent writes of `work diff`.
const diffWriters = 8

// eachTarget calls fn for every target, diffWriters at a time, and returns
// the first error.
func eachTarget(ctx context.Context, targets []*diffTarget, fn func(context.Context, *diffTarget) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(diffWriters)
	for _, t := range targets {
		g.Go(func() error { return fn(ctx, t) })
	}
	return g.Wait()
}

// wait waits until every ReportDiff work reported its generation, reading
// them with one list per poll.
func (o *DiffOptions) wait(ctx context.Context, c client.Client, targets []*diffTarget) error {
	byKey := make(map[client.ObjectKey]*diffTarget, len(targets))
	for _, t := range targets {
		byKey[client.ObjectKeyFromObject(t.probe)] = t
	}
	return cli.Wait(ctx, o.ErrOut, o.Timeout, fmt.Sprintf("the agents' diff reports of %s", o.Name), func(ctx context.Context) (bool, string, error) {
		list := &workv1.ManifestWorkList{}
		if err := c.List(ctx, list, client.MatchingLabels{DiffOfLabel: o.Name}); err != nil {
			return false, "", err
		}
		for i := range list.Items {
			if t := byKey[client.ObjectKeyFromObject(&list.Items[i])]; t != nil {
				t.probe = &list.Items[i]
			}
		}
		var waiting []string
		for _, t := range targets {
			if !reported(t.probe) {
				waiting = append(waiting, t.cluster)
			}
		}
		if len(waiting) == 0 {
			return true, "", nil
		}
		sort.Strings(waiting)
		return false, fmt.Sprintf("%d of %d clusters reported; waiting for %s", len(targets)-len(waiting), len(targets), text.JoinLimited(waiting, ", ", 5)), nil
	})
}

// reported says whether the agent reported the diff of w's generation.
func reported(w *workv1.ManifestWork) bool {
	c := meta.FindStatusCondition(w.Status.Conditions, workv1.WorkDiffReported)
	return c != nil && c.ObservedGeneration == w.Generation && w.Generation > 0
}

// cleanup deletes the ReportDiff works, also when the command was
// interrupted.
func (o *DiffOptions) cleanup(ctx context.Context, c client.Client, targets []*diffTarget) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	_ = eachTarget(ctx, targets, func(ctx context.Context, t *diffTarget) error {
		if t.probe == nil || t.probe.Name == "" {
			return nil
		}
		if err := c.Delete(ctx, t.probe); client.IgnoreNotFound(err) != nil {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(o.ErrOut, "Warning: delete ManifestWork %s/%s: %v; delete it with `kubectl delete manifestwork %s -n %s`\n",
				t.probe.Namespace, t.probe.Name, err, t.probe.Name, t.probe.Namespace)
		}
		return nil
	})
}

// report builds the DiffReport from the ReportDiff works.
func (o *DiffOptions) report(targets []*diffTarget) *DiffReport {
	r := &DiffReport{Name: o.Name, Clusters: []ClusterDiff{}}
	for _, t := range targets {
		cd := ClusterDiff{Cluster: t.cluster, Manifests: []ManifestDiff{}}
		for _, mc := range t.probe.Status.ResourceStatus.Manifests {
			md := ManifestDiff{Kind: mc.ResourceMeta.Kind, Namespace: mc.ResourceMeta.Namespace, Name: mc.ResourceMeta.Name}
			c := meta.FindStatusCondition(mc.Conditions, workv1.ManifestDiff)
			switch {
			case c == nil:
				md.Result = workv1.DiffReasonFailed
				md.Diff = "no report"
			case c.Status == metav1.ConditionFalse:
				md.Result = c.Reason
			default:
				md.Result, md.Diff = c.Reason, c.Message
			}
			cd.Differs = cd.Differs || c != nil && c.Status == metav1.ConditionTrue
			cd.Manifests = append(cd.Manifests, md)
		}
		if c := meta.FindStatusCondition(t.probe.Status.Conditions, workv1.WorkDiffReported); c != nil && c.Reason == workv1.DiffReasonInvalidApplyMode {
			cd.Manifests = append(cd.Manifests, ManifestDiff{Kind: "ManifestWork", Name: t.probe.Name, Result: workv1.DiffReasonFailed, Diff: c.Message})
		}
		for _, gone := range removed(t.current, t.spec) {
			cd.Manifests = append(cd.Manifests, gone)
			cd.Differs = true
		}
		r.Clusters = append(r.Clusters, cd)
	}
	slices.SortFunc(r.Clusters, func(a, b ClusterDiff) int { return strings.Compare(a.Cluster, b.Cluster) })
	return r
}

// removed lists the manifests of current that spec leaves out and that the
// work would delete (it does not orphan them).
func removed(current *workv1.ManifestWork, spec workv1.ManifestWorkSpec) []ManifestDiff {
	keep := map[string]bool{}
	for _, m := range spec.Workload.Manifests {
		if id, ok := manifestID(m); ok {
			keep[id.key()] = true
		}
	}
	var out []ManifestDiff
	for _, m := range current.Spec.Workload.Manifests {
		id, ok := manifestID(m)
		if !ok || keep[id.key()] || orphaned(current.Spec.DeleteOption, id) {
			continue
		}
		out = append(out, ManifestDiff{Kind: id.kind, Namespace: id.namespace, Name: id.name, Result: "Deleted",
			Diff: "the new manifests leave it out: the work would delete it from the cluster"})
	}
	return out
}

// objectID identifies a manifest's object.
type objectID struct {
	apiVersion, kind, namespace, name string
}

func (id objectID) key() string {
	return workv1.ManifestKey(id.apiVersion, id.kind, id.namespace, id.name)
}

// manifestID reads a manifest's identity.
func manifestID(m workv1.Manifest) (objectID, bool) {
	var obj struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	data := m.Raw
	if data == nil && m.Object != nil {
		var err error
		if data, err = json.Marshal(m.Object); err != nil {
			return objectID{}, false
		}
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		return objectID{}, false
	}
	return objectID{obj.APIVersion, obj.Kind, obj.Metadata.Namespace, obj.Metadata.Name}, true
}

// orphaned says whether the delete option keeps the object when the work
// drops it.
func orphaned(opt *workv1.DeleteOption, id objectID) bool {
	if opt == nil {
		return false
	}
	switch opt.PropagationPolicy {
	case workv1.DeletePropagationPolicyTypeOrphan:
		return true
	case workv1.DeletePropagationPolicyTypeSelectivelyOrphan:
		if opt.SelectivelyOrphan == nil {
			return false
		}
		group, _, _ := strings.Cut(id.apiVersion, "/")
		if !strings.Contains(id.apiVersion, "/") {
			group = ""
		}
		for _, r := range opt.SelectivelyOrphan.OrphaningRules {
			if r.Group == group && r.Name == id.name && r.Namespace == id.namespace {
				return true
			}
		}
	}
	return false
}

// printDiffs prints the report kubectl-diff style: one section per group
// of clusters with the same changes.
func printDiffs(out io.Writer, r *DiffReport) {
	type group struct {
		clusters []string
		cd       ClusterDiff
	}
	var groups []*group
	byText := map[string]*group{}
	for _, cd := range r.Clusters {
		text, err := json.Marshal(cd.Manifests)
		if err != nil {
			text = []byte(cd.Cluster)
		}
		g := byText[string(text)]
		if g == nil {
			g = &group{cd: cd}
			byText[string(text)] = g
			groups = append(groups, g)
		}
		g.clusters = append(g.clusters, cd.Cluster)
	}
	for i, g := range groups {
		if i > 0 {
			fmt.Fprintln(out)
		}
		changed := 0
		for _, m := range g.cd.Manifests {
			if m.Result != workv1.DiffReasonNoDiff {
				changed++
			}
		}
		if !g.cd.Differs && changed == 0 {
			fmt.Fprintf(out, "# %s: no change\n", strings.Join(g.clusters, ", "))
			continue
		}
		fmt.Fprintf(out, "# %s: %d of %d manifests change\n", strings.Join(g.clusters, ", "), changed, len(g.cd.Manifests))
		for _, m := range g.cd.Manifests {
			switch m.Result {
			case workv1.DiffReasonNoDiff:
			case workv1.DiffReasonDiffers, workv1.DiffReasonWouldCreate:
				fmt.Fprint(out, m.Diff)
				if !strings.HasSuffix(m.Diff, "\n") {
					fmt.Fprintln(out)
				}
			default:
				name := m.Name
				if m.Namespace != "" {
					name = m.Namespace + "/" + m.Name
				}
				fmt.Fprintf(out, "%s %s %s: %s\n", m.Result, m.Kind, name, m.Diff)
			}
		}
	}
}
