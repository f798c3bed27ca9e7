package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// Report is what the new manifests would change, per cluster.
type Report struct {
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
// Differs, WouldCreate, DiffFailed (the agent's workv1.DiffReason*) or
// ResultDeleted (the new manifests leave it out); Diff is the unified diff,
// or the error.
type ManifestDiff struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Result    string `json:"result"`
	Diff      string `json:"diff,omitempty"`
}

// report builds the Report from the ReportDiff works.
func (o *Options) report(targets []*diffTarget, mapper resourceMapper) *Report {
	r := &Report{Name: o.Name, Clusters: []ClusterDiff{}}
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
		for _, gone := range removed(t.before, t.after, t.current.Spec.DeleteOption, mapper) {
			cd.Manifests = append(cd.Manifests, gone)
			cd.Differs = true
		}
		r.Clusters = append(r.Clusters, cd)
	}
	slices.SortFunc(r.Clusters, func(a, b ClusterDiff) int { return strings.Compare(a.Cluster, b.Cluster) })
	return r
}

// ResultDeleted is the Result of a manifest of the current work that the
// new manifests leave out and that the work does not orphan: the agent
// would delete its object. The other results are the agent's
// (workv1.DiffReason*).
const ResultDeleted = "Deleted"

// resourceMapper finds the resource of a manifest's kind, as the agent does
// on its cluster, to match the work's orphaning rules.
type resourceMapper interface {
	RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error)
}

// removed lists the manifests of before (the current work's) that after
// (the new ones) leaves out and that the work would delete: those its delete
// option opt does not orphan (workv1.DeleteOption.Orphans). Orphaning rules
// name a resource, which mapper gives; a manifest whose kind mapper does not
// know is listed, saying that an orphaning rule might keep it.
func removed(before, after []workv1.Manifest, opt *workv1.DeleteOption, mapper resourceMapper) []ManifestDiff {
	keep := map[string]bool{}
	for _, m := range after {
		if id, err := m.ResourceMeta(); err == nil {
			keep[id.Key()] = true
		}
	}
	selective := opt != nil && opt.PropagationPolicy == workv1.DeletePropagationPolicyTypeSelectivelyOrphan
	var out []ManifestDiff
	for _, m := range before {
		id, err := m.ResourceMeta()
		if err != nil || keep[id.Key()] {
			continue
		}
		gone := ManifestDiff{Kind: id.Kind, Namespace: id.Namespace, Name: id.Name, Result: ResultDeleted,
			Diff: "the new manifests leave it out: the work would delete it from the cluster"}
		if selective {
			mapping, err := mapper.RESTMapping(schema.GroupKind{Group: id.Group, Kind: id.Kind}, id.Version)
			if err != nil {
				gone.Diff = fmt.Sprintf("the new manifests leave it out: the work would delete it from the cluster unless one of its orphaning rules names it, which is unknown here: %v", err)
				out = append(out, gone)
				continue
			}
			id.Resource = mapping.Resource.Resource
		}
		if opt.Orphans(workv1.ResourceIdentifier{Group: id.Group, Resource: id.Resource, Namespace: id.Namespace, Name: id.Name}) {
			continue
		}
		out = append(out, gone)
	}
	return out
}

// printDiffs prints the report kubectl-diff style: one section per group
// of clusters with the same changes.
func printDiffs(out io.Writer, r *Report) {
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
