// Package manager is the hub side of the hellomanager example add-on: an
// add-on manager written the way OCM's addon-framework writes one, so that
// an add-on built with that framework is shown working on this hub, end to
// end. It reads and writes the add-on API at v1beta1 and patches each status
// as the framework's patcher does: a JSON merge patch of the status
// subresource carrying the resourceVersion it was computed from.
//
// Per ManagedClusterAddOn of its add-on (Setup):
//
//   - registration: status.supportedConfigs (alone, first), then the RBAC of
//     the agent's hub identity in the cluster's namespace, status.registrations
//     (one kubeClient registration; its subject is the framework's default
//     user and groups, kept as the agent writes it with the token driver),
//     status.namespace and RegistrationApplied;
//   - deploy: once RegistrationApplied is set, ManifestWork
//     addon-<name>-deploy-0 with the agent, then ManifestApplied,
//     status.healthCheck.mode Customized and Available from the agent
//     Deployment's ready replicas (the framework's DeploymentAvailability
//     health prober);
//   - configurations: status.configReferences[].lastObservedGeneration and
//     the spec hash of the configurations the ManagedClusterAddOn lists
//     itself, and the spec hashes of the ClusterManagementAddOn's status.
//
// It never installs its add-on: with the lifecycle annotation absent (or
// addon-manager) the hub creates the ManagedClusterAddOns and rolls the
// configurations out; with lifecycle self whoever enables the add-on does.
// The hub approves the agent's certificate requests.
package manager

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
)

// Defaults of Options.
const (
	// DefaultAddonName names the add-on.
	DefaultAddonName = "hellomanager"
	// DefaultInstallNamespace is addon-framework's default install namespace.
	DefaultInstallNamespace = "open-cluster-management-agent-addon"
	// DefaultAgentImage is the agent's image: the helloworld example's agent.
	DefaultAgentImage = "quay.io/kubectl-ocm/helloworld-addon:latest"
)

// Options configure the manager.
type Options struct {
	// AddonName is the add-on's name: its ClusterManagementAddOn and every
	// ManagedClusterAddOn of it. Default: DefaultAddonName.
	AddonName string
	// AgentName ends the default user of the agent's hub identity
	// (system:open-cluster-management:cluster:<cluster>:addon:<addon>:agent:<agent>);
	// addon-framework's examples pick five random letters at start.
	// Default: the add-on's name.
	AgentName string
	// AgentImage is the image of the agent Deployment. Default: DefaultAgentImage.
	AgentImage string
	// AgentWithoutSecurityContext renders the agent's Pod without a
	// securityContext, as OCM's addon-framework examples do: such a Pod
	// does not meet restricted Pod Security.
	AgentWithoutSecurityContext bool
}

// withDefaults fills in the defaults.
func (o Options) withDefaults() Options {
	if o.AddonName == "" {
		o.AddonName = DefaultAddonName
	}
	if o.AgentName == "" {
		o.AgentName = o.AddonName
	}
	if o.AgentImage == "" {
		o.AgentImage = DefaultAgentImage
	}
	return o
}

// Setup registers the manager's reconcilers with mgr, whose client must
// read and write the add-on API at v1beta1 (the project's scheme does).
func Setup(mgr ctrl.Manager, opts Options) error {
	opts = opts.withDefaults()
	c := mgr.GetClient()
	for _, s := range []interface{ setup(ctrl.Manager) error }{
		&registration{client: c, opts: opts},
		&deploy{client: c, opts: opts},
		&addonConfigs{client: c, opts: opts},
		&cmaConfigs{client: c, opts: opts},
	} {
		if err := s.setup(mgr); err != nil {
			return fmt.Errorf("set up %T: %w", s, err)
		}
	}
	return nil
}

// patchStatus writes the status of obj, changed from before, as
// addon-framework's patcher does: nothing when it did not change, else a
// JSON merge patch of the status subresource with obj's resourceVersion, so
// that a write made since obj was read fails with a conflict.
func patchStatus(ctx context.Context, c client.Client, before, obj client.Object, beforeStatus, status any) (bool, error) {
	if equality.Semantic.DeepEqual(beforeStatus, status) {
		return false, nil
	}
	return true, c.Status().Patch(ctx, obj, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// ownedByClusterManagementAddOn reports whether mca has an owner reference
// to the ClusterManagementAddOn of its name: addon-framework waits for it.
func ownedByClusterManagementAddOn(mca *addonv1beta1.ManagedClusterAddOn) bool {
	for _, o := range mca.OwnerReferences {
		if o.Kind == "ClusterManagementAddOn" && o.Name == mca.Name {
			return true
		}
	}
	return false
}

// setCondition sets cond on conds as addon-framework does, without an
// observed generation.
func setCondition(conds *[]metav1.Condition, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(conds, metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message})
}
