package hub

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/agenttoken"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/clusterprofile"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/clusterset"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/csr"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/hubversion"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/lease"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/managedcluster"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/managednamespace"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/registration/hub/taint"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/featuregate"
)

// ControllerName names the hub registration controller in events.
const ControllerName = "ocm-hub-controller"

// Options configure the hub registration controllers.
type Options struct {
	// ClusterManagerName is the ClusterManager the controller reports on and
	// reads autoApproveUsers from. Default: cluster-manager.
	ClusterManagerName string
	// LeaseGraceRatio multiplies a cluster's lease duration to give the time
	// after its last renewal at which its availability becomes Unknown.
	// Default: lease.DefaultGraceRatio.
	LeaseGraceRatio float64
	// AutoApprovedCSRUsers are bootstrap identities whose first-join CSRs are
	// approved automatically, in addition to the ClusterManager's list.
	AutoApprovedCSRUsers []string
	// Features are the hub feature gates (featuregate.Hub); nil means every
	// gate at its default. DefaultClusterSet off leaves the built-in sets
	// and set membership alone, ClusterProfile off exports no
	// ClusterProfiles, ManagedClusterAutoApproval off ignores the
	// ClusterManager's autoApproveUsers.
	Features *featuregate.Set
}

// enabled reports whether the hub feature gate feature is on.
func (o Options) enabled(feature string) bool {
	if o.Features == nil {
		return featuregate.Defaults(featuregate.Hub).Enabled(feature)
	}
	return o.Features.Enabled(feature)
}

// The events of the registration reconcilers.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers every hub registration reconciler with mgr.
// They read the per-cluster objects (labeled with the cluster name), agent
// CSRs and cluster leases only, to which the hub manager's cache may be
// restricted (ocm-controller's app.HubCacheOptions).
func SetupWithManager(mgr ctrl.Manager, opts Options) error {
	if opts.ClusterManagerName == "" {
		opts.ClusterManagerName = operatorv1.ClusterManagerName
	}
	c := mgr.GetClient()
	rec := mgr.GetEventRecorder(ControllerName)
	reconcilers := []interface{ SetupWithManager(ctrl.Manager) error }{
		&managedcluster.Reconciler{Client: c, APIReader: mgr.GetAPIReader(), Recorder: rec},
		&csr.Reconciler{Client: c, APIReader: mgr.GetAPIReader(), Recorder: rec, ClusterManagerName: opts.ClusterManagerName, AutoApproveUsers: opts.AutoApprovedCSRUsers,
			IgnoreClusterManagerUsers: !opts.enabled(featuregate.ManagedClusterAutoApproval)},
		&agenttoken.Reconciler{Client: c, Recorder: rec},
		&lease.Reconciler{Client: c, Recorder: rec, GraceRatio: opts.LeaseGraceRatio},
		&taint.Reconciler{Client: c, Recorder: rec},
		&clusterset.SetReconciler{Client: c, Recorder: rec, NoBuiltInSets: !opts.enabled(featuregate.DefaultClusterSet)},
		&clusterset.BindingReconciler{Client: c},
		&managednamespace.Reconciler{Client: c},
		&hubversion.Reconciler{Client: c, Name: opts.ClusterManagerName},
	}
	if opts.enabled(featuregate.DefaultClusterSet) {
		reconcilers = append(reconcilers, &clusterset.LabelReconciler{Client: c})
	}
	if opts.enabled(featuregate.ClusterProfile) {
		tunnel, err := clusterprofile.TunnelFromConfig(mgr.GetConfig())
		if err != nil {
			return err
		}
		reconcilers = append(reconcilers, &clusterprofile.Reconciler{Client: c, Tunnel: tunnel})
	}
	for _, r := range reconcilers {
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("set up %T: %w", r, err)
		}
	}
	return nil
}
