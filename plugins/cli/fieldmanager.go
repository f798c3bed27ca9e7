package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
)

// Field managers: every write a verb makes carries one, so that the API
// server's audit log (the request's fieldManager) and the objects'
// managedFields say which command changed what.
//
// A verb's field manager is "kubectl-ocm-" and the words of its command
// path joined by '-': `kubectl ocm work rollout approve` writes as
// kubectl-ocm-work-rollout-approve. The install verbs (hub init, clean and
// token, join, unjoin, upgrade) are the exception: they all write as
// InstallFieldManager, the one manager every release has applied the
// product's manifests with, so that a re-run, an upgrade or a later
// release still owns, and so can change or remove, every field an earlier
// one applied; a second manager would keep the fields it owns, and
// server-side apply would never remove them.
const (
	// InstallFieldManager is the field manager of the install verbs.
	InstallFieldManager = apply.FieldManager
	// FieldManagerAnnotation, on a command or one of its parents, holds the
	// field manager of its writes instead of the one its path makes.
	FieldManagerAnnotation = "kubectl-ocm/field-manager"
)

// InstallVerb marks cmd, and every command below it, as an install verb,
// which writes as InstallFieldManager, and returns cmd.
func InstallVerb(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[FieldManagerAnnotation] = InstallFieldManager
	return cmd
}

// FieldManager returns the field manager of cmd's writes: the
// FieldManagerAnnotation of cmd or of its nearest parent that has one, else
// "kubectl-ocm-" and the words of cmd's path below the root, joined by '-'.
func FieldManager(cmd *cobra.Command) string {
	for c := cmd; c != nil; c = c.Parent() {
		if m := c.Annotations[FieldManagerAnnotation]; m != "" {
			return m
		}
	}
	var words []string
	for c := cmd; c != nil && c.HasParent(); c = c.Parent() {
		words = append([]string{c.Name()}, words...)
	}
	return strings.Join(append([]string{apply.FieldManager}, words...), "-")
}

// PinFieldManagers records in cmd, and every command below it, the field
// manager it has where it stands now, so that it keeps it when moved to
// another path (clusteradm's spellings of the verbs).
func PinFieldManagers(cmd *cobra.Command) {
	m := FieldManager(cmd)
	for _, sub := range cmd.Commands() {
		PinFieldManagers(sub)
	}
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[FieldManagerAnnotation] = m
}

// fieldManagerKey is the context key of the verb's field manager.
type fieldManagerKey struct{}

// WithFieldManager returns ctx carrying the field manager of the verb that
// runs with it, which NewClient and Apply write with.
func WithFieldManager(ctx context.Context, manager string) context.Context {
	return context.WithValue(ctx, fieldManagerKey{}, manager)
}

// FieldManagerFrom returns the field manager ctx carries (see RunE), or
// InstallFieldManager when it carries none.
func FieldManagerFrom(ctx context.Context) string {
	if m, ok := ctx.Value(fieldManagerKey{}).(string); ok && m != "" {
		return m
	}
	return InstallFieldManager
}
