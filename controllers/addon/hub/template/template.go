package template

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// Errors of bad input. Render and the other functions of the package wrap
// them with the place and the cause; test them with errors.Is.
var (
	// ErrInvalidManifest: a manifest of the template is not a Kubernetes
	// object once rendered (no apiVersion, kind or metadata.name, a field of
	// the wrong type in a Deployment or DaemonSet), or two manifests name the
	// same object.
	ErrInvalidManifest = errors.New("invalid manifest")
	// ErrManifestTooLarge: one rendered manifest alone is larger than a
	// ManifestWork may hold.
	ErrManifestTooLarge = errors.New("manifest too large")
	// ErrInvalidHubPermission: a hub permission of the template's
	// registrations lacks the settings of its type, or two of them would be
	// bound by RoleBindings of the same name.
	ErrInvalidHubPermission = errors.New("invalid hub permission")
)

// Input is what the agent of one add-on on one cluster is rendered from.
type Input struct {
	// Cluster is the managed cluster's name.
	Cluster string
	// AddonName is the add-on's name (of its ClusterManagementAddOn and
	// ManagedClusterAddOn).
	AddonName string
	// InstallNamespace is the ManagedClusterAddOn's spec.installNamespace;
	// empty when unset.
	InstallNamespace string
	// Template is the AddOnTemplate.
	Template *addonv1alpha1.AddOnTemplate
	// DeploymentConfigs are the AddOnDeploymentConfigs of the add-on on the
	// cluster, in the order of its configurations: where two set the same
	// field, the later one wins.
	DeploymentConfigs []*addonv1alpha1.AddOnDeploymentConfig
	// ClusterRegistries are the image mirrors of the ManagedCluster's
	// annotation open-cluster-management.io/image-registries
	// (ParseClusterImageRegistries); the AddOnDeploymentConfigs'
	// registries win over them for an image both rewrite.
	ClusterRegistries []addonv1alpha1.ImageMirror
	// HostingCluster is the ManagedClusterAddOn's annotation
	// addon.open-cluster-management.io/hosting-cluster-name: the add-on is
	// installed in Hosted mode, its manifests placed by their annotation
	// addon.open-cluster-management.io/hosted-manifest-location. Empty is
	// Default mode: every manifest goes to the managed cluster.
	HostingCluster string
	// AddonNamespaceEnforced is whether the managed cluster's add-on agents'
	// namespace (addonv1alpha1.DefaultAddonInstallNamespace) enforces
	// restricted Pod Security, as its agent reports
	// (podsecurity.AddonNamespaceClaim); it warns and audits at restricted
	// by default, which refuses no Pod.
	AddonNamespaceEnforced bool
}

// Agent is the rendered agent of one add-on on one cluster.
type Agent struct {
	// InstallNamespace is the namespace the agent is installed in: the
	// AddOnDeploymentConfig's agentInstallNamespace, else the
	// ManagedClusterAddOn's spec.installNamespace, else
	// open-cluster-management-agent-addon.
	InstallNamespace string
	// Manifests are the manifests to deploy on the managed cluster, in the
	// template's order.
	Manifests []workv1.Manifest
	// HostingManifests are, in Hosted mode, the manifests to deploy on the
	// hosting cluster (location hosting), in the template's order, with
	// their manifest configs and delete option made as those of Manifests.
	HostingManifests       []workv1.Manifest
	HostingManifestConfigs []workv1.ManifestConfigOption
	HostingDeleteOption    *workv1.DeleteOption
	// ManifestConfigs are the manifest configs of the deploy works: status
	// feedback of every Deployment (for health) merged with the template's
	// own manifestConfigs.
	ManifestConfigs []workv1.ManifestConfigOption
	// DeleteOption orphans the manifests annotated
	// addon.open-cluster-management.io/deletion-orphan; nil when none is.
	DeleteOption *workv1.DeleteOption
	// HookManifests are the pre-delete hook Jobs and Pods, labeled or
	// annotated addon-pre-delete; empty when the template has none.
	HookManifests []workv1.Manifest
	// HookManifestConfigs ask for the status feedback that tells when each
	// hook Job or Pod completed.
	HookManifestConfigs []workv1.ManifestConfigOption
	// PodSecurityChecked lists the namespaces, known to enforce Pod
	// Security level restricted on the managed cluster, that hold Pod
	// templates of the agent (its workload or hook manifests): those the
	// hub checked. Empty when no Pod template lands in such a namespace.
	PodSecurityChecked []string
	// PodSecurityViolations are the Pod templates in those namespaces that
	// fail the level; the managed cluster refuses their Pods.
	PodSecurityViolations []PodSecurityViolation
	// UnknownVariables lists, sorted, the {{NAME}} placeholders that no
	// variable defines; they were rendered as empty strings, as OCM does.
	UnknownVariables []string
}

// Render renders in.Template for one cluster. An error wraps
// ErrInvalidManifest when a manifest is not a valid object once rendered.
func Render(in Input) (*Agent, error) {
	cfg := mergeConfigs(in.DeploymentConfigs)
	agent := &Agent{InstallNamespace: installNamespace(cfg, in.InstallNamespace)}
	vars := newVariables(in, cfg, agent.InstallNamespace)
	d := decorator{in: in, cfg: cfg, vars: vars, namespace: agent.InstallNamespace}

	var objs []*unstructured.Unstructured
	for i, m := range in.Template.Spec.AgentSpec.Workload.Manifests {
		obj, err := renderManifest(m.Raw, vars)
		if err != nil {
			return nil, fmt.Errorf("%w: spec.agentSpec.workload.manifests[%d]: %w", ErrInvalidManifest, i, err)
		}
		if obj, err = d.decorate(obj); err != nil {
			return nil, fmt.Errorf("%w: spec.agentSpec.workload.manifests[%d] (%s %s): %w",
				ErrInvalidManifest, i, obj.GetKind(), obj.GetName(), err)
		}
		objs = append(objs, obj)
	}
	objs = append(objs, d.injected()...)
	if err := checkDuplicates(objs); err != nil {
		return nil, err
	}
	agent.UnknownVariables = vars.unknownNames()
	managed, hosting, err := place(objs, in.HostingCluster != "")
	if err != nil {
		return nil, err
	}
	agent.PodSecurityChecked, agent.PodSecurityViolations = podSecurity(managed, in.AddonNamespaceEnforced)
	userConfigs := in.Template.Spec.AgentSpec.ManifestConfigs
	if err := agent.sort(managed, userConfigs); err != nil {
		return nil, err
	}
	if len(hosting) > 0 {
		grant, err := hostedAgentGrant(in.Cluster, in.AddonName, agent.InstallNamespace)
		if err != nil {
			return nil, err
		}
		hosting = append(hosting, grant...)
		h := &Agent{}
		if err := h.sort(hosting, userConfigs); err != nil {
			return nil, err
		}
		agent.HostingManifests, agent.HostingManifestConfigs, agent.HostingDeleteOption = h.Manifests, h.ManifestConfigs, h.DeleteOption
	}
	return agent, nil
}

// place checks each object's annotation
// addon.open-cluster-management.io/hosted-manifest-location and, in Hosted
// mode, sets aside those located on the hosting cluster and drops those
// located nowhere, as OCM's add-on framework does. It returns the objects
// for the managed cluster (in Default mode all of them) and those for the
// hosting cluster.
func place(objs []*unstructured.Unstructured, hosted bool) (managed, hosting []*unstructured.Unstructured, err error) {
	for _, obj := range objs {
		loc := obj.GetAnnotations()[addonv1alpha1.HostedManifestLocationAnnotationKey]
		switch loc {
		case "", addonv1alpha1.HostedManifestLocationManagedValue, addonv1alpha1.HostedManifestLocationHostingValue, addonv1alpha1.HostedManifestLocationNoneValue:
		default:
			return nil, nil, fmt.Errorf("%w: %s %s: annotation %s is %q; use %s, %s or %s", ErrInvalidManifest, obj.GetKind(), obj.GetName(),
				addonv1alpha1.HostedManifestLocationAnnotationKey, loc, addonv1alpha1.HostedManifestLocationManagedValue,
				addonv1alpha1.HostedManifestLocationHostingValue, addonv1alpha1.HostedManifestLocationNoneValue)
		}
		switch {
		case !hosted || loc == "" || loc == addonv1alpha1.HostedManifestLocationManagedValue:
			managed = append(managed, obj)
		case loc == addonv1alpha1.HostedManifestLocationHostingValue:
			if _, ok := hookIdentifier(obj); ok {
				return nil, nil, fmt.Errorf("%w: %s %s is a pre-delete hook located on the hosting cluster; hooks run on the managed cluster only: remove its annotation %s",
					ErrInvalidManifest, obj.GetKind(), obj.GetName(), addonv1alpha1.HostedManifestLocationAnnotationKey)
			}
			hosting = append(hosting, obj)
		}
	}
	return managed, hosting, nil
}

// renderManifest substitutes the variables in every string of a manifest
// and checks that the result is an object with apiVersion, kind and name.
func renderManifest(raw []byte, vars *variables) (*unstructured.Unstructured, error) {
	var content any
	if err := json.Unmarshal(raw, &content); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	m, ok := vars.substitute(content).(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	obj := &unstructured.Unstructured{Object: m}
	switch {
	case obj.GetAPIVersion() == "":
		return nil, errors.New("apiVersion is empty")
	case obj.GetKind() == "":
		return nil, errors.New("kind is empty")
	case obj.GetName() == "":
		return nil, fmt.Errorf("%s has an empty metadata.name once rendered", obj.GetKind())
	}
	return obj, nil
}

// checkDuplicates refuses two manifests that name the same object, which
// the hub's admission refuses in one ManifestWork.
func checkDuplicates(objs []*unstructured.Unstructured) error {
	seen := map[string]int{}
	for i, obj := range objs {
		key := workv1.ManifestKey(obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName())
		if j, ok := seen[key]; ok {
			return fmt.Errorf("%w: manifests %d and %d are the same object (%s) once rendered", ErrInvalidManifest, j, i, key)
		}
		seen[key] = i
	}
	return nil
}

// sort puts each rendered object among the deployed manifests or the hook
// manifests and builds the manifest configs and delete option of each.
func (a *Agent) sort(objs []*unstructured.Unstructured, userConfigs []workv1.ManifestConfigOption) error {
	var generated []workv1.ManifestConfigOption
	var orphans []workv1.OrphaningRule
	for _, obj := range objs {
		raw, err := obj.MarshalJSON()
		if err != nil {
			return fmt.Errorf("%w: encode %s %s: %w", ErrInvalidManifest, obj.GetKind(), obj.GetName(), err)
		}
		m := workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
		if id, ok := hookIdentifier(obj); ok {
			a.HookManifests = append(a.HookManifests, m)
			a.HookManifestConfigs = append(a.HookManifestConfigs, wellKnownStatus(id))
			continue
		}
		a.Manifests = append(a.Manifests, m)
		if id, ok := deploymentIdentifier(obj); ok {
			generated = append(generated, wellKnownStatus(id))
		}
		if _, ok := obj.GetAnnotations()[addonv1alpha1.DeletionOrphanAnnotationKey]; ok {
			orphans = append(orphans, workv1.OrphaningRule(identifier(obj)))
		}
	}
	a.ManifestConfigs = mergeManifestConfigs(generated, userConfigs)
	if len(orphans) > 0 {
		a.DeleteOption = &workv1.DeleteOption{
			PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
			SelectivelyOrphan: &workv1.SelectivelyOrphan{OrphaningRules: orphans},
		}
	}
	return nil
}

// DeployWorks returns the specs of the deploy works: the manifests in the
// template's order, a new work begun whenever the next manifest would take
// the total size of a work's manifests over limit bytes. Each spec carries
// the manifest configs and delete option (rules for objects a work does not
// hold are ignored by the agent). An error wraps ErrManifestTooLarge when a
// single manifest is larger than limit.
func (a *Agent) DeployWorks(limit int) ([]workv1.ManifestWorkSpec, error) {
	return split(a.Manifests, a.ManifestConfigs, a.DeleteOption, limit)
}

// HostingDeployWorks returns the specs of the deploy works on the hosting
// cluster, split as DeployWorks splits; none in Default mode or when no
// manifest is located there.
func (a *Agent) HostingDeployWorks(limit int) ([]workv1.ManifestWorkSpec, error) {
	return split(a.HostingManifests, a.HostingManifestConfigs, a.HostingDeleteOption, limit)
}

// split puts manifests into works of at most limit bytes of manifests, each
// with configs and del.
func split(manifests []workv1.Manifest, configs []workv1.ManifestConfigOption, del *workv1.DeleteOption, limit int) ([]workv1.ManifestWorkSpec, error) {
	var specs []workv1.ManifestWorkSpec
	size := 0
	for i, m := range manifests {
		n := len(m.Raw)
		if n > limit {
			return nil, fmt.Errorf("%w: manifest %d is %d bytes once rendered, over the %d-byte limit of a ManifestWork",
				ErrManifestTooLarge, i, n, limit)
		}
		if len(specs) == 0 || size+n > limit {
			specs = append(specs, workv1.ManifestWorkSpec{
				ManifestConfigs: cloneConfigs(configs),
				DeleteOption:    del.DeepCopy(),
			})
			size = 0
		}
		last := &specs[len(specs)-1]
		last.Workload.Manifests = append(last.Workload.Manifests, m)
		size += n
	}
	return specs, nil
}

// HookWork returns the spec of the pre-delete hook work, or nil when the
// template has no hook manifest.
func (a *Agent) HookWork() *workv1.ManifestWorkSpec {
	if len(a.HookManifests) == 0 {
		return nil
	}
	return &workv1.ManifestWorkSpec{
		Workload:        workv1.ManifestsTemplate{Manifests: slices.Clone(a.HookManifests)},
		ManifestConfigs: cloneConfigs(a.HookManifestConfigs),
	}
}
