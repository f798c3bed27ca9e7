package diff

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/text"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/workreport"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// probePrefix is the generateName of the ReportDiff works of name.
func probePrefix(name string) string {
	return cli.NamePrefix(name) + "-diff-"
}

// writeProbes writes the ReportDiff work of every target, next to its
// work: the agent of its cluster reports what the new spec would change.
// The chunks of a large payload are written first, with progress.
func (o *Options) writeProbes(ctx context.Context, c client.Client, host string, targets []*diffTarget) error {
	progress := &lockedWriter{w: o.ErrOut}
	return eachTarget(ctx, targets, func(ctx context.Context, t *diffTarget) error {
		if o.payload != nil {
			if _, err := o.payload.Write(ctx, c, t.cluster, progress); err != nil {
				return fmt.Errorf("cluster %s on %s: %w", t.cluster, host, err)
			}
		}
		probe := &workv1.ManifestWork{
			ObjectMeta: metav1.ObjectMeta{GenerateName: probePrefix(o.Name), Namespace: t.cluster,
				Labels:      map[string]string{OfLabel: o.Name},
				Annotations: map[string]string{workv1.ApplyModeAnnotation: string(workv1.ApplyModeReportDiff)}},
			Spec: t.spec,
		}
		if err := c.Create(ctx, probe); err != nil {
			return fmt.Errorf("write the ReportDiff ManifestWork of %s to cluster %s on %s: %w", o.Name, t.cluster, host, err)
		}
		t.probe = probe
		return nil
	})
}

// lockedWriter writes each line of the writers of several targets whole.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
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
func (o *Options) wait(ctx context.Context, c client.Client, targets []*diffTarget) error {
	byKey := make(map[client.ObjectKey]*diffTarget, len(targets))
	for _, t := range targets {
		byKey[client.ObjectKeyFromObject(t.probe)] = t
	}
	return cli.Wait(ctx, o.ErrOut, o.Timeout, fmt.Sprintf("the agents' diff reports of %s", o.Name), func(ctx context.Context) (bool, string, error) {
		list := &workv1.ManifestWorkList{}
		if err := c.List(ctx, list, client.MatchingLabels{OfLabel: o.Name}); err != nil {
			return false, "", err
		}
		for i := range list.Items {
			if t := byKey[client.ObjectKeyFromObject(&list.Items[i])]; t != nil {
				t.probe = &list.Items[i]
			}
		}
		var waiting []string
		for _, t := range targets {
			if reported(t.probe) {
				continue
			}
			// An agent that refused the payload reports nothing.
			p := workreport.PayloadOf(t.probe)
			if p != nil && p.Refused() {
				return false, "", cli.Stop(fmt.Errorf("the agent of cluster %s refused the new manifests' payload (%s): %s", t.cluster, p.Reason, p.Message))
			}
			if p != nil && p.Staged != "" {
				waiting = append(waiting, fmt.Sprintf("%s (payload %s)", t.cluster, p.Summary()))
				continue
			}
			waiting = append(waiting, t.cluster)
		}
		if len(waiting) == 0 {
			return true, "", nil
		}
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
func (o *Options) cleanup(ctx context.Context, c client.Client, targets []*diffTarget) {
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
