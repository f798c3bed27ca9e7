package work

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/internal/workpayload"
)

// packPayload replaces the manifests of spec with a ManifestPayload when they
// are over the limit of one ManifestWork, splitting them into chunks on the
// first call (workpayload.Pack); smaller manifests are left as they are, in
// OCM's form.
func (o *CreateOptions) packPayload(spec *workv1.ManifestWorkSpec) error {
	if o.payload == nil {
		p, err := workpayload.Pack(o.Name, spec.Workload.Manifests)
		if err != nil {
			return err
		}
		o.payload = p
	}
	if o.payload != nil {
		spec.Workload.Manifests = []workv1.Manifest{o.payload.Manifest}
	}
	return nil
}

// writeChunks writes the chunks of a large payload that namespace lacks,
// before the work or set that lists them, with progress on stderr, and says
// how many it wrote and how many were already there (on stderr with -o);
// nothing for a small work or a dry run.
func (o *CreateOptions) writeChunks(ctx context.Context, c client.Client, namespace string) error {
	if o.payload == nil || o.DryRun != cli.DryRunNone {
		return nil
	}
	w, err := o.payload.Write(ctx, c, namespace, o.ErrOut)
	if err != nil {
		return err
	}
	out := o.Out
	if cli.Output(o.PrintFlags) != "" {
		out = o.ErrOut
	}
	fmt.Fprintln(out, o.payload.Summary(namespace, w))
	return nil
}
