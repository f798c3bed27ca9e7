// Package klusterlet is the Klusterlet operator (`ocm-controller operator
// klusterlet`): for every Klusterlet it renders the agent from the embedded
// templates of package config (config.AgentValuesFromKlusterlet, then
// config.AgentObjects or config.HostedAgentObjects), applies it with
// server-side apply under field manager klusterlet, deletes what it applied
// before and no longer renders, and reports on the Klusterlet's status what
// runs: Applied, ReadyToApply, Available, Progressing,
// RegistrationDesiredDegraded and WorkDesiredDegraded, observedGeneration,
// generations and relatedResources. The agent itself adds only
// HubConnectionDegraded.
//
// The Klusterlet and its bootstrap kubeconfig Secret belong to the user (or
// `kubectl ocm join`); the operator never writes them, except the
// Klusterlet's finalizer and status. Deleting a Klusterlet unjoins: the
// operator removes the agent and the managed-cluster CRDs no object uses any
// more (pkg/apply.UnusedCRDs, the rule `kubectl ocm unjoin` follows), then
// the finalizer.
//
// The TLS profile the operator passes to each agent (its --tls-min-version
// and --tls-cipher-suites, with a hash in the pod template) is the
// Klusterlet's spec.tlsProfile over the ConfigMap ocm-tls-profile in the
// operator's namespace (config.ResolveTLSProfile); a bad one is refused on
// the Applied condition and changes nothing. The image pull Secret
// open-cluster-management-image-pull-credentials of the operator's
// namespace, when there is one, is copied next to the agent, whose
// Deployment references it (pullsecret.Wire). AddonCopyReconciler copies
// that ConfigMap and that Secret into every add-on namespace of the
// cluster.
//
// To stay small the operator caches only Klusterlets, the Deployments it
// rendered (by the label config.KlusterletOwnerLabel), the ConfigMaps
// ocm-tls-profile, the Secrets open-cluster-management-image-pull-credentials
// and the add-on namespaces; everything else, other Secrets included, it
// reads directly.
package klusterlet
