// Package rollout is the add-on manager's rollout controller: it follows
// each ManagedClusterAddOn of a managed add-on to its cluster. From the
// add-on's deploy ManifestWorks (addon-<name>-deploy-<i>) it sets the
// Progressing condition with OCM's reasons (WaitingForManifestApplied,
// Progressing, Completed, Failed, ConfigurationUnsupported) and, once the
// works run the desired configurations, records them as
// lastAppliedConfig. The configuration controller
// (controllers/addon/hub/config) reads both to decide which clusters a
// placement's rollout lets through next.
package rollout
