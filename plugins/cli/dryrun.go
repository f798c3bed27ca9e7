package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// AddDryRunFlagUsage adds --dry-run as AddDryRunFlag does, with a usage
// text of the verb's own: what "client" and "server" do for it.
func AddDryRunFlagUsage(cmd *cobra.Command, target *string, usage string) {
	AddDryRunFlag(cmd, target)
	cmd.Flags().Lookup("dry-run").Usage = usage
}

// DeleteDryRunUsage is the --dry-run usage of the verbs that delete.
const DeleteDryRunUsage = `"client" says what would be deleted and deletes nothing; "server" also has the API server admit each deletion without performing it.`

// IsDryRun reports whether mode is a dry run, client or server; "" is
// none, as the zero value of a verb's options.
func IsDryRun(mode string) bool { return mode == DryRunClient || mode == DryRunServer }

// ValidateDryRunMode is ValidateDryRun with "" taken as none.
func ValidateDryRunMode(mode string) error {
	if mode == "" {
		return nil
	}
	return ValidateDryRun(mode)
}

// DryRunSuffix is what a line saying that an object was written ends with in
// mode: nothing, " (dry run)" or " (server dry run)", as kubectl does.
func DryRunSuffix(mode string) string {
	switch mode {
	case DryRunClient:
		return " (dry run)"
	case DryRunServer:
		return " (server dry run)"
	}
	return ""
}

// DryRunWriter returns the client a verb writes through in dry-run mode:
// c itself for DryRunNone; for DryRunServer, c sending every write with
// dryRun=All, so that the API server validates and admits it and stores
// nothing; for DryRunClient, c sending no write at all. Reads go to the
// server in every mode. In client mode an update, patch or delete of an
// object that does not exist fails with NotFound, as it would on the
// server, and a create or apply succeeds without checking anything.
func DryRunWriter(c client.Client, mode string) client.Client {
	switch mode {
	case DryRunServer:
		return client.NewDryRunClient(c)
	case DryRunClient:
		return noWrites{c}
	}
	return c
}

// noWrites is a client that reads and never writes.
type noWrites struct {
	client.Client
}

// exists fails with the server's error, NotFound among them, unless obj
// exists; it leaves obj as it is.
func (c noWrites) exists(ctx context.Context, obj client.Object) error {
	probe, ok := obj.DeepCopyObject().(client.Object)
	if !ok {
		return fmt.Errorf("%T is not an object", obj)
	}
	return c.Get(ctx, client.ObjectKeyFromObject(obj), probe)
}

// Create sends nothing.
func (c noWrites) Create(context.Context, client.Object, ...client.CreateOption) error { return nil }

// Update checks that obj exists and sends nothing.
func (c noWrites) Update(ctx context.Context, obj client.Object, _ ...client.UpdateOption) error {
	return c.exists(ctx, obj)
}

// Patch checks that obj exists and sends nothing.
func (c noWrites) Patch(ctx context.Context, obj client.Object, _ client.Patch, _ ...client.PatchOption) error {
	return c.exists(ctx, obj)
}

// Delete checks that obj exists and sends nothing.
func (c noWrites) Delete(ctx context.Context, obj client.Object, _ ...client.DeleteOption) error {
	return c.exists(ctx, obj)
}

// DeleteAllOf sends nothing.
func (c noWrites) DeleteAllOf(context.Context, client.Object, ...client.DeleteAllOfOption) error {
	return nil
}

// Apply sends nothing.
func (c noWrites) Apply(context.Context, runtime.ApplyConfiguration, ...client.ApplyOption) error {
	return nil
}

// Status reads the status subresource and writes nothing.
func (c noWrites) Status() client.SubResourceWriter {
	return noSubResourceWrites{c.Client.SubResource("status"), c}
}

// SubResource reads subResource and writes nothing.
func (c noWrites) SubResource(subResource string) client.SubResourceClient {
	return noSubResourceWrites{c.Client.SubResource(subResource), c}
}

// noSubResourceWrites is a subresource client that reads and never writes.
type noSubResourceWrites struct {
	client.SubResourceClient
	parent noWrites
}

// Create sends nothing.
func (s noSubResourceWrites) Create(context.Context, client.Object, client.Object, ...client.SubResourceCreateOption) error {
	return nil
}

// Update checks that obj exists and sends nothing.
func (s noSubResourceWrites) Update(ctx context.Context, obj client.Object, _ ...client.SubResourceUpdateOption) error {
	return s.parent.exists(ctx, obj)
}

// Patch checks that obj exists and sends nothing.
func (s noSubResourceWrites) Patch(ctx context.Context, obj client.Object, _ client.Patch, _ ...client.SubResourcePatchOption) error {
	return s.parent.exists(ctx, obj)
}

// Apply sends nothing.
func (s noSubResourceWrites) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return nil
}

// serverDryRunKey is the context key of WithServerDryRun.
type serverDryRunKey struct{}

// WithServerDryRun returns ctx under which NewClient's clients send every
// write with dryRun=All: a verb run under it is admitted by the API server
// and stores nothing, as with --dry-run=server, whatever its own flags. A
// SelfSubjectReview (who the caller is) is still created for real: it
// stores nothing.
func WithServerDryRun(ctx context.Context) context.Context {
	return context.WithValue(ctx, serverDryRunKey{}, true)
}

// serverDryRun is DryRunWriter's server mode, except for SelfSubjectReviews.
type serverDryRun struct {
	client.Client
	real client.Client
}

// Create creates obj with dryRun=All, or for real when it is a review.
func (c serverDryRun) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if _, ok := obj.(*authenticationv1.SelfSubjectReview); ok {
		return c.real.Create(ctx, obj, opts...)
	}
	return c.Client.Create(ctx, obj, opts...)
}

// withContextDryRun wraps c as ctx asks (WithServerDryRun).
func withContextDryRun(ctx context.Context, c client.Client) client.Client {
	if on, _ := ctx.Value(serverDryRunKey{}).(bool); on {
		return serverDryRun{Client: client.NewDryRunClient(c), real: c}
	}
	return c
}
