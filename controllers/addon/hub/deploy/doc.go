// Package deploy deploys template add-ons: for each ManagedClusterAddOn of an
// add-on the hub's add-on manager manages whose desired configurations
// (status.configReferences[].desiredConfig) include an AddOnTemplate, it
// renders the template with controllers/addon/hub/template and writes the
// result.
//
//   - ManifestWorks addon-<name>-deploy-<i> in the cluster's namespace,
//     controlled by the ManagedClusterAddOn, labeled with the add-on and
//     template names and annotated with the spec hashes of the configurations
//     rendered from. Works are written only from configurations whose current
//     spec hash equals the desired one; until then the existing works stay as
//     they are (the rollout has not reached the cluster).
//   - The RoleBindings of the template's hub permissions, and the
//     ManagedClusterAddOn's status.registrations, status.namespace,
//     status.healthCheck, status.relatedObjects and its ManifestApplied and
//     RegistrationApplied conditions.
//   - The PodSecurity condition: False (ViolatesRestricted) with a Warning
//     event when a Pod template of the agent, in a namespace that enforces
//     Pod Security level restricted on the managed cluster, fails it, naming
//     the object, its containers, the failed checks and the fix; the works
//     are written all the same.
//   - Pre-delete hooks: while the template has hook manifests the
//     ManagedClusterAddOn holds the finalizer
//     addon.open-cluster-management.io/addon-pre-delete; once it is deleted
//     the hook work addon-<name>-pre-delete runs, and the finalizer goes when
//     its Jobs and Pods completed (HookManifestCompleted).
//
// docs/design/addons.md fixes which fields each add-on controller writes.
package deploy
