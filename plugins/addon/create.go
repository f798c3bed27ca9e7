package addon

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// defaultVersion is the --version of `addon create`, as clusteradm's.
const defaultVersion = "0.0.1"

// CreateOptions are the flags and arguments of `kubectl ocm addon create`.
type CreateOptions struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// PrintFlags holds -o: json, yaml or name print the AddOnTemplate and
	// the ClusterManagementAddOn instead of one line each.
	PrintFlags *genericclioptions.PrintFlags
	// Name is the add-on: the ClusterManagementAddOn's name.
	Name string
	// Filenames are the files and directories of the agent's manifests
	// ("-": stdin); Recursive also reads subdirectories.
	Filenames []string
	Recursive bool
	// Version makes the AddOnTemplate's name: NAME-VERSION.
	Version string
	// Placement, NAMESPACE/NAME, installs the add-on on the clusters the
	// Placement selects; empty leaves installing to `addon enable`.
	Placement string
	// HubRegistration gives the agent a hub credential (a KubeClient registration).
	HubRegistration bool
	// ClusterRoleBind is a ClusterRole bound to the agent in its cluster's
	// namespace on the hub; it implies HubRegistration.
	ClusterRoleBind string
	// Labels are set on the AddOnTemplate and the ClusterManagementAddOn.
	Labels map[string]string
	// Overwrite replaces an existing add-on of the same name.
	Overwrite bool
	// DryRun is none, client (print only) or server (validated and admitted
	// by the hub, not stored).
	DryRun string
}

// NewCreateOptions returns CreateOptions for the hub getter selects.
func NewCreateOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *CreateOptions {
	return &CreateOptions{
		IOStreams:  streams,
		getter:     getter,
		PrintFlags: genericclioptions.NewPrintFlags("created").WithTypeSetter(apis.Scheme),
		Version:    defaultVersion,
		DryRun:     cli.DryRunNone,
	}
}

// Complete records NAME.
func (o *CreateOptions) Complete(_ *cobra.Command, args []string) error {
	o.Name = cli.FirstArg(args)
	return nil
}

// Validate checks the flags; the manifests are checked in Run, once read.
func (o *CreateOptions) Validate() error {
	errs := []error{
		validateName("NAME", "add-on", o.Name, addonNameProblems),
		validateMetadata(nil, o.Labels),
		cli.ValidateDryRun(o.DryRun),
		cli.ValidateOutput(o.PrintFlags, "json", "yaml", "name"),
	}
	if len(o.Filenames) == 0 {
		errs = append(errs, errors.New("no manifests given: use -f FILE|DIR with the add-on agent's manifests (repeatable; -R to read subdirectories; - for stdin)"))
	}
	if o.Version == "" {
		errs = append(errs, errors.New("--version must not be empty: it names the AddOnTemplate NAME-VERSION"))
	} else if msgs := validation.IsDNS1123Subdomain(TemplateName(o.Name, o.Version)); o.Name != "" && len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--version %q: the AddOnTemplate name %q is invalid: %s", o.Version, TemplateName(o.Name, o.Version), strings.Join(msgs, "; ")))
	}
	if o.Placement != "" {
		_, err := placementRef(o.Placement)
		errs = append(errs, err)
	}
	if o.ClusterRoleBind != "" && strings.ContainsAny(o.ClusterRoleBind, "/%") {
		errs = append(errs, fmt.Errorf("--cluster-role-bind %q is not a ClusterRole name: it may not contain / or %%", o.ClusterRoleBind))
	}
	return errors.Join(errs...)
}

// placementRef parses --placement NAMESPACE/NAME.
func placementRef(s string) (addonv1alpha1.PlacementRef, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return addonv1alpha1.PlacementRef{}, fmt.Errorf("--placement %q: write NAMESPACE/NAME, the Placement whose clusters get the add-on", s)
	}
	var msgs []string
	msgs = append(msgs, validation.IsDNS1123Label(ns)...)
	msgs = append(msgs, validation.IsDNS1123Subdomain(name)...)
	if len(msgs) > 0 {
		return addonv1alpha1.PlacementRef{}, fmt.Errorf("--placement %q is not a valid NAMESPACE/NAME: %s", s, strings.Join(msgs, "; "))
	}
	return addonv1alpha1.PlacementRef{Namespace: ns, Name: name}, nil
}

// ValidateTemplateNamespaces checks the metadata.namespace of every manifest
// as the hub checks the embedded objects of an AddOnTemplate: it must be a
// namespace name, so a variable such as {{INSTALL_NAMESPACE}} cannot stand
// there.
func ValidateTemplateNamespaces(manifests []cli.Manifest) error {
	var errs []error
	for _, m := range manifests {
		ns := m.Object.GetNamespace()
		if msgs := validation.IsDNS1123Label(ns); ns != "" && len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s: %s: metadata.namespace %q is not a namespace name, which the hub requires of template manifests (variables cannot stand there): write the namespace itself, such as %s",
				m.Source, m.Describe(), ns, addonv1alpha1.DefaultAddonInstallNamespace))
		}
	}
	return errors.Join(errs...)
}

// TemplateName is the name of version of add-on name's AddOnTemplate.
func TemplateName(name, version string) string {
	return name + "-" + version
}

// NewAddOnTemplate returns AddOnTemplate NAME-VERSION of add-on name whose
// agent is made of manifests. With registration the agent gets a hub
// credential (a KubeClient registration) and, with clusterRole, that
// ClusterRole in its cluster's namespace on the hub.
func NewAddOnTemplate(name, version string, manifests []cli.Manifest, registration bool, clusterRole string, labels map[string]string) *addonv1alpha1.AddOnTemplate {
	t := &addonv1alpha1.AddOnTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: TemplateName(name, version), Labels: labels},
		Spec:       addonv1alpha1.AddOnTemplateSpec{AddonName: name},
	}
	for _, m := range manifests {
		t.Spec.AgentSpec.Workload.Manifests = append(t.Spec.AgentSpec.Workload.Manifests,
			workv1.Manifest{RawExtension: runtime.RawExtension{Object: m.Object.DeepCopy()}})
	}
	if !registration && clusterRole == "" {
		return t
	}
	kubeClient := &addonv1alpha1.KubeClientRegistrationConfig{}
	if clusterRole != "" {
		kubeClient.HubPermissions = []addonv1alpha1.HubPermissionConfig{{
			Type:           addonv1alpha1.HubPermissionsBindingCurrentCluster,
			CurrentCluster: &addonv1alpha1.CurrentClusterBindingConfig{ClusterRoleName: clusterRole},
		}}
	}
	t.Spec.Registration = []addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeKubeClient, KubeClient: kubeClient}}
	return t
}

// NewClusterManagementAddOn returns ClusterManagementAddOn name, managed by
// the hub's add-on manager, whose default AddOnTemplate is template and
// which also accepts AddOnDeploymentConfigs. With a placement it is
// installed on the clusters the placement selects (rolled out to all at
// once), else only where `addon enable` enables it.
func NewClusterManagementAddOn(name, template string, placement *addonv1alpha1.PlacementRef, labels map[string]string) *addonv1alpha1.ClusterManagementAddOn {
	cma := &addonv1alpha1.ClusterManagementAddOn{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{addonv1alpha1.AddonLifecycleAnnotationKey: addonv1alpha1.AddonLifecycleAddonManagerAnnotationValue},
		},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			AddOnMeta: addonv1alpha1.AddOnMeta{DisplayName: name},
			SupportedConfigs: []addonv1alpha1.ConfigMeta{
				{
					ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnTemplateResource},
					DefaultConfig:       &addonv1alpha1.ConfigReferent{Name: template},
				},
				{ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnDeploymentConfigResource}},
			},
			InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyManual},
		},
	}
	if placement != nil {
		cma.Spec.InstallStrategy = addonv1alpha1.InstallStrategy{
			Type: addonv1alpha1.InstallStrategyPlacements,
			Placements: []addonv1alpha1.PlacementStrategy{{
				PlacementRef:    *placement,
				RolloutStrategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All},
			}},
		}
	}
	return cma
}
