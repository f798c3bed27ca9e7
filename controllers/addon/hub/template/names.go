package template

import (
	"slices"
	"strconv"
	"strings"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// Names of the ManifestWorks of a template add-on, in its cluster's namespace.

// DeployWorkNamePrefix returns the prefix of the names of the deploy works
// of addon: addon-<addon>-deploy-.
func DeployWorkNamePrefix(addon string) string { return "addon-" + addon + "-deploy-" }

// DeployWorkName returns the name of deploy work i of addon: addon-<addon>-deploy-<i>.
func DeployWorkName(addon string, i int) string {
	return DeployWorkNamePrefix(addon) + strconv.Itoa(i)
}

// DeployWorkIndex returns i when name is DeployWorkName(addon, i).
func DeployWorkIndex(addon, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, DeployWorkNamePrefix(addon))
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	return i, err == nil && i >= 0 && strconv.Itoa(i) == rest
}

// SelectDeployWorks returns the deploy works of addon among works, in
// index order.
func SelectDeployWorks(addon string, works []*workv1.ManifestWork) []*workv1.ManifestWork {
	var out []*workv1.ManifestWork
	for _, w := range works {
		if _, ok := DeployWorkIndex(addon, w.Name); ok {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b *workv1.ManifestWork) int {
		i, _ := DeployWorkIndex(addon, a.Name)
		j, _ := DeployWorkIndex(addon, b.Name)
		return i - j
	})
	return out
}

// HostingDeployWorkNamePrefix returns the prefix of the names of the deploy
// works, in the hosting cluster's namespace, of addon on cluster in Hosted
// mode: addon-<addon>-deploy-hosting-<cluster>-.
func HostingDeployWorkNamePrefix(addon, cluster string) string {
	return "addon-" + addon + "-deploy-hosting-" + cluster + "-"
}

// HostingDeployWorkName returns the name of hosting deploy work i of addon
// on cluster: addon-<addon>-deploy-hosting-<cluster>-<i>.
func HostingDeployWorkName(addon, cluster string, i int) string {
	return HostingDeployWorkNamePrefix(addon, cluster) + strconv.Itoa(i)
}

// HostingDeployWorkIndex returns i when name is
// HostingDeployWorkName(addon, cluster, i).
func HostingDeployWorkIndex(addon, cluster, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, HostingDeployWorkNamePrefix(addon, cluster))
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	return i, err == nil && i >= 0 && strconv.Itoa(i) == rest
}

// WorkAddon returns the ManagedClusterAddOn a work of an add-on, in
// namespace with labels, deploys: the add-on of its label
// open-cluster-management.io/addon-name, in its namespace or, for a
// hosting work, in the namespace its label
// open-cluster-management.io/addon-namespace names.
func WorkAddon(namespace string, labels map[string]string) (cluster, addon string) {
	cluster = namespace
	if owner := labels[addonv1alpha1.AddonNamespaceLabelKey]; owner != "" {
		cluster = owner
	}
	return cluster, labels[addonv1alpha1.AddonLabelKey]
}

// HostingCluster returns the hosting cluster of mca: its annotation
// addon.open-cluster-management.io/hosting-cluster-name, empty in Default
// mode.
func HostingCluster(mca *addonv1alpha1.ManagedClusterAddOn) string {
	return mca.Annotations[addonv1alpha1.HostingClusterNameAnnotationKey]
}

// HostingWorkLabels returns the labels of the hosting works of addon on
// cluster, in its hosting cluster's namespace: the add-on's name and its
// ManagedClusterAddOn's namespace, as OCM's add-on framework labels them.
func HostingWorkLabels(addon, cluster string) map[string]string {
	return map[string]string{addonv1alpha1.AddonLabelKey: addon, addonv1alpha1.AddonNamespaceLabelKey: cluster}
}

// PreDeleteHookWorkName returns the name of the pre-delete hook work of
// addon: addon-<addon>-pre-delete.
func PreDeleteHookWorkName(addon string) string { return "addon-" + addon + "-pre-delete" }

// HubKubeconfigSecretName returns the Secret holding the hub kubeconfig of
// addon's agent on the managed cluster: <addon>-hub-kubeconfig.
func HubKubeconfigSecretName(addon string) string { return addon + "-hub-kubeconfig" }
