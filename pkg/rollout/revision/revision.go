// Package revision holds the revision history of ManifestWorkReplicaSets,
// which the hub controller writes and `kubectl ocm work rollout
// history|undo` read: each template a set has had (with its take-over rule)
// is kept in a ControllerRevision of the set's namespace, numbered as a
// Deployment numbers its revisions, the newest `revisionHistoryLimit` of
// them besides the current one.
package revision

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
)

// Names of ours on ManifestWorkReplicaSets, their ManifestWorks and their
// ControllerRevisions. OCM's kinds have no such fields.
const (
	// Annotation on a ManifestWorkReplicaSet is the number of its current
	// revision.
	Annotation = "work.kubectl-ocm.io/revision"
	// HistoryLimitAnnotation on a ManifestWorkReplicaSet is how many
	// revisions besides the current one are kept (DefaultHistoryLimit).
	HistoryLimitAnnotation = "work.kubectl-ocm.io/revision-history-limit"
	// HashAnnotation on a ManifestWork is the hash of the revision it was
	// written from; HashLabel on a ControllerRevision is its own.
	HashAnnotation = "work.kubectl-ocm.io/template-hash"
	HashLabel      = HashAnnotation
	// SetLabel on a ControllerRevision (and a RolloutApproval) names its
	// ManifestWorkReplicaSet: SetLabelValue.
	SetLabel = "work.kubectl-ocm.io/replicaset"
	// DefaultHistoryLimit is the number of earlier revisions kept, as a
	// Deployment's revisionHistoryLimit.
	DefaultHistoryLimit = 10
)

// Content is what a revision holds: the set's template and its take-over
// rule (workv1.TakeOverAnnotation, "" without one).
type Content struct {
	Template workv1.ManifestWorkSpec `json:"manifestWorkTemplate"`
	TakeOver string                  `json:"takeOver,omitempty"`
}

// Of returns the content of mwrs's current revision.
func Of(mwrs *workv1alpha1.ManifestWorkReplicaSet) Content {
	return Content{Template: *mwrs.Spec.ManifestWorkTemplate.DeepCopy(), TakeOver: mwrs.Annotations[workv1.TakeOverAnnotation]}
}

// ApplyTo makes c the template and take-over rule of mwrs: an undo.
func (c Content) ApplyTo(mwrs *workv1alpha1.ManifestWorkReplicaSet) {
	mwrs.Spec.ManifestWorkTemplate = *c.Template.DeepCopy()
	if c.TakeOver == "" {
		delete(mwrs.Annotations, workv1.TakeOverAnnotation)
		return
	}
	if mwrs.Annotations == nil {
		mwrs.Annotations = map[string]string{}
	}
	mwrs.Annotations[workv1.TakeOverAnnotation] = c.TakeOver
}

// AbortTo aborts the rollout of mwrs's current revision (number current):
// no further cluster is started. With prev, the newest earlier revision,
// the set also goes back to it, and that rollback passes every gate: the
// clusters that got the current revision get prev's back without waiting.
func AbortTo(mwrs *workv1alpha1.ManifestWorkReplicaSet, current int64, prev *appsv1.ControllerRevision) error {
	if mwrs.Annotations == nil {
		mwrs.Annotations = map[string]string{}
	}
	if prev != nil {
		c, err := Decode(prev)
		if err != nil {
			return err
		}
		c.ApplyTo(mwrs)
		mwrs.Annotations[rolloutv1alpha1.UngatedAnnotation] = prev.Labels[HashLabel]
	}
	mwrs.Annotations[rolloutv1alpha1.AbortedAnnotation] = strconv.FormatInt(current, 10)
	return nil
}

// Encode returns c as a ControllerRevision's data and its hash.
func (c Content) Encode() (data []byte, hash string, err error) {
	data, err = json.Marshal(c)
	if err != nil {
		return nil, "", fmt.Errorf("encode the revision: %w", err)
	}
	sum := sha256.Sum256(data)
	return data, hex.EncodeToString(sum[:])[:10], nil
}

// Decode returns the content of a ControllerRevision.
func Decode(cr *appsv1.ControllerRevision) (Content, error) {
	var c Content
	if err := json.Unmarshal(cr.Data.Raw, &c); err != nil {
		return Content{}, fmt.Errorf("ControllerRevision %s/%s: decode: %w", cr.Namespace, cr.Name, err)
	}
	return c, nil
}

// maxNamePrefix is the longest set name Name keeps whole in the name of a
// ControllerRevision: with a '-', 8 digits of the set name's hash, a '-' and
// a revision hash, it stays within the 253 characters of an object name.
const maxNamePrefix = 200

// Name is the name of the ControllerRevision of set with hash: <set>-<hash>,
// or, for a set name too long for that to be an object name, the first 200
// characters of set, 8 hex digits of the SHA-256 of the whole name (so that
// two sets sharing those characters differ) and hash.
func Name(set, hash string) string {
	if len(set)+1+len(hash) <= validation.DNS1123SubdomainMaxLength {
		return set + "-" + hash
	}
	return strings.TrimRight(set[:maxNamePrefix], "-.") + "-" + setHash(set)[:8] + "-" + hash
}

// SetLabelValue is the value of SetLabel for the ManifestWorkReplicaSet
// named set: the name itself when it is a valid label value (at most 63
// characters), else "set_" and 32 hex digits of the SHA-256 of the name;
// names cannot contain '_', so the two forms never meet.
func SetLabelValue(set string) string {
	if len(validation.IsValidLabelValue(set)) == 0 {
		return set
	}
	return "set_" + setHash(set)[:32]
}

// setHash is the SHA-256 of the set name, in hex.
func setHash(set string) string {
	sum := sha256.Sum256([]byte(set))
	return hex.EncodeToString(sum[:])
}

// HistoryLimit returns the history limit of mwrs: its annotation, else
// DefaultHistoryLimit; an error names a value that is not a number >= 0.
func HistoryLimit(mwrs *workv1alpha1.ManifestWorkReplicaSet) (int, error) {
	v, ok := mwrs.Annotations[HistoryLimitAnnotation]
	if !ok {
		return DefaultHistoryLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("annotation %s=%q: must be a whole number, 0 or more", HistoryLimitAnnotation, v)
	}
	return n, nil
}

// Sort orders revisions by number, oldest first.
func Sort(revs []*appsv1.ControllerRevision) {
	slices.SortFunc(revs, func(a, b *appsv1.ControllerRevision) int {
		switch {
		case a.Revision < b.Revision:
			return -1
		case a.Revision > b.Revision:
			return 1
		default:
			return 0
		}
	})
}
