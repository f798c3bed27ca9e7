package setstate

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
)

// StatusReport is the rollout of a set's current revision.
type StatusReport struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Revision and Hash identify the current revision.
	Revision int64  `json:"revision"`
	Hash     string `json:"hash"`
	// Gates are the set's gates (annotation rollout.kubectl-ocm.io/gates).
	Gates string `json:"gates,omitempty"`
	// State is Progressing, Complete, AwaitingApproval, Paused, Aborted or
	// InvalidRolloutStrategy; Message says more.
	State      string            `json:"state"`
	Message    string            `json:"message,omitempty"`
	Placements []PlacementReport `json:"placements"`
}

// PlacementReport is the rollout of one placementRef.
type PlacementReport struct {
	Name    string        `json:"name"`
	Error   string        `json:"error,omitempty"`
	Waiting string        `json:"waiting,omitempty"`
	Stages  []StageReport `json:"stages"`
}

// StageReport is one stage of a rollout.
type StageReport struct {
	Name      string          `json:"name"`
	Clusters  []ClusterReport `json:"clusters"`
	Updated   int             `json:"updated"`
	Succeeded int             `json:"succeeded"`
	Failed    int             `json:"failed"`
	Before    string          `json:"before,omitempty"`
	After     string          `json:"after,omitempty"`
}

// ClusterReport is one cluster of a stage.
type ClusterReport struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// Status reads the rollout of ManifestWorkReplicaSet namespace/name's
// current revision, as `kubectl ocm work rollout status -o json` reports it.
func Status(ctx context.Context, c client.Client, namespace, name string) (*StatusReport, error) {
	r, err := Read(ctx, c, namespace, name, true, time.Now())
	if err != nil {
		return nil, err
	}
	return r.Report(), nil
}

// Report builds the StatusReport of r: its state, and per placement its
// stages with the state of each cluster, how many run the current revision
// (Updated) and succeeded or failed, and the state of each gate ("Approved
// by" its approver when approved).
func (r *Rollout) Report() *StatusReport {
	s := &StatusReport{Name: r.Set.Name, Namespace: r.Set.Namespace, Revision: r.Number, Hash: r.Hash,
		Gates: r.Set.Annotations[rolloutv1alpha1.GatesAnnotation], Placements: []PlacementReport{}}
	s.State, s.Message = r.State()
	gate := func(p string, st rollout.Stage, t rollout.GateType, gs rollout.GateState) string {
		if gs == rollout.GateApproved {
			if a := r.Approval(p, st.Name, t); a != nil {
				return "Approved by " + a.Spec.Approver
			}
		}
		return string(gs)
	}
	for _, p := range r.Placements {
		pr := PlacementReport{Name: p.Name, Stages: []StageReport{}}
		if p.Err != nil {
			pr.Error = p.Err.Error()
		}
		if w := p.Result.Waiting; w != nil {
			pr.Waiting = w.String()
		}
		for _, st := range p.Result.Stages {
			sr := StageReport{Name: st.Name, Clusters: []ClusterReport{},
				Before: gate(p.Name, st, rollout.GateBefore, st.Before), After: gate(p.Name, st, rollout.GateAfter, st.After)}
			for _, cl := range st.Clusters {
				sr.Clusters = append(sr.Clusters, ClusterReport{Name: cl.Name, State: string(cl.State)})
				switch cl.State {
				case rollout.ToApply:
					continue
				case rollout.Succeeded:
					sr.Succeeded++
				case rollout.Failed, rollout.TimeOut:
					sr.Failed++
				}
				sr.Updated++
			}
			pr.Stages = append(pr.Stages, sr)
		}
		s.Placements = append(s.Placements, pr)
	}
	return s
}
