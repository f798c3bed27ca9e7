// Package template renders the agent of a template add-on for one cluster,
// as OCM's add-on manager does for an AddOnTemplate: it substitutes the
// variables ({{CLUSTER_NAME}}, {{INSTALL_NAMESPACE}}, {{HUB_KUBECONFIG}},
// {{ADDON_NAME}} and the AddOnDeploymentConfig's customizedVariables) in
// the template's manifests, applies the AddOnDeploymentConfig to the
// Deployments and DaemonSets (node placement, image mirrors, proxy,
// resource requirements, install namespace), separates the pre-delete hook
// manifests, and splits what is deployed into ManifestWork specs that stay
// under the size limit of a ManifestWork.
//
// It also turns the template's registrations into the MCA's
// status.registrations and the RoleBindings of their hub permissions.
//
// The package is pure: it reads nothing and writes nothing. The hub's deploy
// controller (controllers/addon/hub/deploy) gives it the objects and writes
// what it returns. Bad input is reported with the errors of this package
// (ErrInvalidManifest, ErrManifestTooLarge, ErrInvalidHubPermission),
// wrapped with the place and cause.
package template
