package rollout

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/setstate"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// revisionWait bounds how long the rollout verbs wait for the hub to record
// the revision of a set's current template.
const revisionWait = 30 * time.Second

// readCurrentRollout is setstate.Read, waiting up to revisionWait (with
// progress on out) while the hub has not recorded the revision of the set's
// current template, as right after a change or an undo.
func readCurrentRollout(ctx context.Context, out io.Writer, c client.Client, namespace, name string, needWorks bool) (*setstate.Rollout, error) {
	var r *setstate.Rollout
	err := cli.Wait(ctx, out, revisionWait, fmt.Sprintf("the revision of ManifestWorkReplicaSet %s/%s", namespace, name), func(ctx context.Context) (bool, string, error) {
		var err error
		r, err = setstate.Read(ctx, c, namespace, name, needWorks, time.Now())
		if errors.Is(err, setstate.ErrRevisionPending) {
			return false, "the hub has not recorded the current template's revision yet", nil
		}
		if err != nil {
			return false, "", cli.Stop(err)
		}
		return true, "", nil
	})
	return r, err
}

// approvalName is the name of the RolloutApproval of one gate: readable
// when it fits a name, else the set's name and a hash of the gate.
func approvalName(set string, rev int64, placement, stage string, gate rollout.GateType) string {
	name := strings.ToLower(fmt.Sprintf("%s-r%d-%s-%s-%s", set, rev, placement, stage, gate))
	if len(validation.IsDNS1123Subdomain(name)) == 0 {
		return name
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%s\x00%s\x00%s", set, rev, placement, stage, gate)))
	return fmt.Sprintf("%s-r%d-%s", cli.NamePrefix(set), rev, hex.EncodeToString(sum[:])[:10])
}

// stageNames lists the names of stages.
func stageNames(stages []rollout.Stage) []string {
	out := make([]string, 0, len(stages))
	for _, s := range stages {
		out = append(out, s.Name)
	}
	return out
}

// findStage returns the stage named name, nil when there is none.
func findStage(stages []rollout.Stage, name string) *rollout.Stage {
	i := slices.IndexFunc(stages, func(s rollout.Stage) bool { return s.Name == name })
	if i < 0 {
		return nil
	}
	return &stages[i]
}
