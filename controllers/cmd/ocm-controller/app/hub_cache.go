package app

import (
	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/rollout/revision"
)

// HubCacheOptions restricts the cache of the hub manager, which runs the
// controllers of every hub domain, to what they read: the objects the hub
// creates per cluster (labeled with the cluster name, such as the
// registration grants and the add-on manager's token ServiceAccounts and
// Roles), agent CSRs, cluster leases and the revisions of
// ManifestWorkReplicaSets, instead of every namespace, RBAC object,
// ServiceAccount, lease and ControllerRevision of the hub.
func HubCacheOptions() cache.Options {
	hasCluster, err := labels.NewRequirement(clusterv1.ClusterNameLabelKey, selection.Exists, nil)
	if err != nil {
		panic(err) // constant input
	}
	byCluster := cache.ByObject{Label: labels.NewSelector().Add(*hasCluster)}
	ofSet, err := labels.NewRequirement(revision.SetLabel, selection.Exists, nil)
	if err != nil {
		panic(err) // constant input
	}
	return cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Namespace{}:                         byCluster,
		&rbacv1.ClusterRole{}:                       byCluster,
		&rbacv1.ClusterRoleBinding{}:                byCluster,
		&rbacv1.RoleBinding{}:                       byCluster,
		&rbacv1.Role{}:                              byCluster,
		&corev1.ServiceAccount{}:                    byCluster,
		&certificatesv1.CertificateSigningRequest{}: byCluster,
		&coordinationv1.Lease{}:                     {Field: fields.OneTermEqualSelector("metadata.name", clusterv1.LeaseName)},
		// The revisions of ManifestWorkReplicaSets only, not those of the
		// hub's DaemonSets and StatefulSets.
		&appsv1.ControllerRevision{}: {Label: labels.NewSelector().Add(*ofSet)},
	}}
}
