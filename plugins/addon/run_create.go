package addon

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run reads and checks the manifests as the hub checks a ManifestWork's,
// builds the AddOnTemplate and the ClusterManagementAddOn, checks that the
// add-on does not exist (unless --overwrite) and writes the template, then
// the ClusterManagementAddOn that points at it.
func (o *CreateOptions) Run(ctx context.Context) error {
	manifests, err := cli.ReadManifests(o.Filenames, o.Recursive, o.In)
	if err != nil {
		return err
	}
	if err := errors.Join(cli.ValidateManifests(manifests, workv1.DefaultManifestsSizeLimit), ValidateTemplateNamespaces(manifests)); err != nil {
		return fmt.Errorf("the manifests of add-on %s: %w", o.Name, err)
	}
	var placement *addonv1alpha1.PlacementRef
	if o.Placement != "" {
		ref, err := placementRef(o.Placement)
		if err != nil {
			return err
		}
		placement = &ref
	}
	template := NewAddOnTemplate(o.Name, o.Version, manifests, o.HubRegistration, o.ClusterRoleBind, o.Labels)
	cma := NewClusterManagementAddOn(o.Name, template.Name, placement, o.Labels)
	objs := []client.Object{template, cma}
	if o.DryRun == cli.DryRunClient {
		var out []*unstructured.Unstructured
		for _, obj := range objs {
			u, err := cli.ToUnstructured(obj)
			if err != nil {
				return err
			}
			out = append(out, u)
			o.report(u, "created (dry run)")
		}
		return printObjects(o.Out, o.PrintFlags, out)
	}
	h, err := connect(ctx, o.getter)
	if err != nil {
		return err
	}
	existing, previous, err := o.precheck(ctx, h, template, cma)
	if err != nil {
		return err
	}
	o.warnPlacement(ctx, h, placement)
	var written []*unstructured.Unstructured
	for i, obj := range objs {
		u, err := cli.Apply(ctx, h, obj, o.DryRun == cli.DryRunServer)
		if err != nil {
			return fmt.Errorf("write %s %s on %s: %w", []string{"AddOnTemplate", "ClusterManagementAddOn"}[i], obj.GetName(), h.host, err)
		}
		written = append(written, u)
		verb := "created"
		if existing[obj.GetName()] {
			verb = "configured"
		}
		if o.DryRun == cli.DryRunServer {
			verb += " (server dry run)"
		}
		o.report(u, verb)
	}
	if previous != "" && o.DryRun == cli.DryRunNone {
		fmt.Fprintf(o.ErrOut, "AddOnTemplate %s, the previous template of add-on %s, is kept: delete it once no cluster uses it\n", previous, o.Name)
	}
	return printObjects(o.Out, o.PrintFlags, written)
}

// report prints one line for an object written, unless -o prints the objects.
func (o *CreateOptions) report(obj *unstructured.Unstructured, verb string) {
	if cli.Output(o.PrintFlags) == "" {
		fmt.Fprintf(o.Out, "%s %s %s\n", obj.GetKind(), obj.GetName(), verb)
	}
}

// precheck fails, before anything is written, when the add-on or its
// template exists and --overwrite is not given, or when the template of that
// name belongs to another add-on. It returns the names of the objects that
// exist and the default template of an overwritten add-on when it is
// another one, which stays behind.
func (o *CreateOptions) precheck(ctx context.Context, h hub, template *addonv1alpha1.AddOnTemplate, cma *addonv1alpha1.ClusterManagementAddOn) (map[string]bool, string, error) {
	existing, previous := map[string]bool{}, ""
	var errs []error
	old := &addonv1alpha1.ClusterManagementAddOn{}
	switch err := h.Get(ctx, client.ObjectKey{Name: cma.Name}, old); {
	case err == nil && !o.Overwrite:
		errs = append(errs, fmt.Errorf("add-on %s exists already (ClusterManagementAddOn %s): add --overwrite to replace its template and install strategy, or choose another name", cma.Name, cma.Name))
	case err == nil:
		existing[cma.Name] = true
		previous = defaultTemplate(old)
	case !apierrors.IsNotFound(err):
		errs = append(errs, fmt.Errorf("read ClusterManagementAddOn %s on %s: %w", cma.Name, h.host, err))
	}
	oldTemplate := &addonv1alpha1.AddOnTemplate{}
	switch err := h.Get(ctx, client.ObjectKey{Name: template.Name}, oldTemplate); {
	case err == nil && oldTemplate.Spec.AddonName != o.Name:
		errs = append(errs, fmt.Errorf("AddOnTemplate %s exists already and belongs to add-on %s: give another --version", template.Name, oldTemplate.Spec.AddonName))
	case err == nil && !o.Overwrite && !existing[cma.Name]:
		errs = append(errs, fmt.Errorf("AddOnTemplate %s exists already: add --overwrite to replace it, or give another --version", template.Name))
	case err == nil:
		existing[template.Name] = true
	case !apierrors.IsNotFound(err):
		errs = append(errs, fmt.Errorf("read AddOnTemplate %s on %s: %w", template.Name, h.host, err))
	}
	if previous == template.Name {
		previous = ""
	}
	return existing, previous, errors.Join(errs...)
}

// defaultTemplate is the name of cma's default AddOnTemplate, "" when it
// has none.
func defaultTemplate(cma *addonv1alpha1.ClusterManagementAddOn) string {
	for _, s := range cma.Spec.SupportedConfigs {
		if s.IsTemplateConfig() && s.DefaultConfig != nil {
			return s.DefaultConfig.Name
		}
	}
	return ""
}

// warnPlacement warns when the Placement of the install strategy does not
// exist (yet): the add-on manager installs nothing until it does.
func (o *CreateOptions) warnPlacement(ctx context.Context, h hub, ref *addonv1alpha1.PlacementRef) {
	if ref == nil {
		return
	}
	err := h.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, &clusterv1beta1.Placement{})
	if apierrors.IsNotFound(err) {
		fmt.Fprintf(o.ErrOut, "Warning: Placement %s/%s does not exist: the add-on is installed on no cluster until it does (`kubectl ocm placement create %s -n %s`)\n",
			ref.Namespace, ref.Name, ref.Name, ref.Namespace)
	}
}
