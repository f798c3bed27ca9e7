package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/featuregate"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
)

// KlusterletOwnerLabel marks every object the Klusterlet operator applied
// with the name of the Klusterlet it applied it for; the operator finds what
// it no longer renders, and what to remove when the Klusterlet is deleted,
// by this label.
const KlusterletOwnerLabel = "operator.open-cluster-management.io/klusterlet"

// KlusterletCleanupFinalizer holds a Klusterlet until the Klusterlet
// operator has removed its agent.
const KlusterletCleanupFinalizer = "operator.open-cluster-management.io/cleanup"

// KlusterletOperatorName names the Klusterlet operator's Deployment,
// ServiceAccount, ClusterRole and ClusterRoleBinding, in
// operatorv1.OperatorNamespace.
const KlusterletOperatorName = "klusterlet"

// AgentDeployment names the agent's Deployment in Default and Singleton mode.
const AgentDeployment = "klusterlet-agent"

// AgentValuesFromKlusterlet returns the values that render the agent of k,
// with bootstrap as the bootstrap kubeconfig (the content of Secret
// bootstrap-hub-kubeconfig, which the manifests only carry through). It also
// returns the feature gates k names that the agent does not know, which are
// ignored. A field the agent cannot honor is a *FieldError. The settings
// the agent takes as flags are read by the table agentFlags into
// KlusterletFlags; the fields config/agent/30-klusterlet.yaml writes are
// read too, so that the Klusterlet the values render is k's.
func AgentValuesFromKlusterlet(k *operatorv1.Klusterlet, bootstrap []byte) (AgentValues, []string, error) {
	s := &k.Spec
	v := AgentValues{
		ClusterName:         s.ClusterName,
		Image:               s.ImagePullSpec,
		AgentNamespace:      k.AgentNamespace(),
		BootstrapKubeconfig: bootstrap,
		Mode:                string(k.Mode()),
		PriorityClassName:   s.PriorityClassName,
		TLSProfile:          s.TLSProfile,
		Scheduling: Scheduling{
			NodeSelector: s.NodePlacement.NodeSelector,
			Tolerations:  s.NodePlacement.Tolerations,
		},
	}
	if s.ClusterName == "" {
		return v, nil, &FieldError{Reason: "ClusterNameMissing", Message: "spec.clusterName" + ": " + "set it to the name this cluster registers as on the hub"}
	}
	if err := identity.ValidateClusterName(s.ClusterName); err != nil {
		return v, nil, &FieldError{Reason: "ClusterNameInvalid", Message: "spec.clusterName: " + err.Error() + "; set another name"}
	}
	if err := sameImage(s); err != nil {
		return v, nil, err
	}
	if k.Mode().IsHosted() {
		// The agent runs on the hosting cluster in the namespace named for
		// the Klusterlet; spec.namespace is the one on the managed cluster.
		v.KlusterletName, v.AgentNamespace = k.Name, k.Name
	}
	v.ReportHostingCluster = s.DeployOption.ReportHostingCluster == operatorv1.ReportHostingClusterModeEnable
	if h := s.DeployOption.Hosted; h != nil {
		v.ManagementClusterName = h.ManagementClusterName
	}
	for _, u := range s.ExternalServerURLs {
		v.ExternalServerURLs = append(v.ExternalServerURLs, u.URL)
	}
	if a := s.HubApiServerHostAlias; a != nil {
		v.HostAliases = []corev1.HostAlias{{IP: a.IP, Hostnames: []string{a.Hostname}}}
	}
	resources, err := resourcesOf(s.ResourceRequirement)
	if err != nil {
		return v, nil, err
	}
	v.Resources = resources
	if rc := s.RegistrationConfiguration; rc != nil {
		if err := checkRegistration(rc); err != nil {
			return v, nil, err
		}
		v.ClientCertExpirationSeconds = rc.ClientCertExpirationSeconds
		if rc.RegistrationDriver.AuthType == operatorv1.TokenAuthType {
			v.RegistrationAuth = rc.RegistrationDriver.AuthType
		}
		if d := rc.AddOnKubeClientRegistrationDriver; d != nil && d.AuthType != "" && d.AuthType != operatorv1.CSRAuthType {
			v.AddonKubeClientRegistrationAuth = d.AuthType
			if d.Token != nil {
				v.AddonTokenExpirationSeconds = d.Token.ExpirationSeconds
			}
		}
	}
	if wc := s.WorkConfiguration; wc != nil {
		v.HubKubeAPIQPS, v.HubKubeAPIBurst = wc.HubKubeAPIQPS, wc.HubKubeAPIBurst
		if w := wc.Workers; w != nil {
			v.ManifestWorkWorkers, v.AppliedWorkWorkers = w.ManifestWorks, w.AppliedManifestWorkFinalize
		}
	}
	le, err := leaderElectionValues(s.LeaderElection, leaderelect.Managed)
	if err != nil {
		return v, nil, err
	}
	v.LeaderElection = le
	// The agent takes the rest of the Klusterlet's settings as flags.
	gates, unknown := featuregate.FromSpec(featuregate.Agent, registrationGates(s), workGates(s))
	if n := len(bootstrapSecrets(s)); n > 1 && !gates.Enabled(featuregate.MultipleHubs) {
		return v, nil, &FieldError{Reason: "MultipleHubsDisabled", Message: "spec.registrationConfiguration.featureGates" + ": " + fmt.Sprintf(
			"MultipleHubs is disabled, but bootstrapKubeConfigs lists %d hubs; enable MultipleHubs or list one hub (type None)", n)}
	}
	v.KlusterletFlags = klusterletFlags(s)
	v.FeatureGates = gates.Flag()
	return v, unknown, nil
}

// resourcesOf returns the agent's resources that spec.resourceRequirement
// sets: none for BestEffort, the requirements for ResourceRequirement, nil
// (the templates' defaults) when unset or Default.
func resourcesOf(r *operatorv1.ResourceRequirement) (*corev1.ResourceRequirements, error) {
	switch {
	case r == nil:
		return nil, nil
	case r.Type == operatorv1.ResourceQosClassBestEffort:
		return &corev1.ResourceRequirements{}, nil
	case r.Type == operatorv1.ResourceQosClassResourceRequirement:
		if r.ResourceRequirements == nil {
			return nil, &FieldError{Reason: "ResourceRequirementMissing", Message: "spec.resourceRequirement.resourceRequirements" + ": " + "type ResourceRequirement needs resourceRequirements; set them or choose type Default"}
		}
		return r.ResourceRequirements.DeepCopy(), nil
	}
	return nil, nil
}

// sameImage checks that the component images, when set, equal imagePullSpec:
// one image runs registration and work.
func sameImage(s *operatorv1.KlusterletSpec) error {
	for field, img := range map[string]string{"registrationImagePullSpec": s.RegistrationImagePullSpec, "workImagePullSpec": s.WorkImagePullSpec} {
		if img != "" && img != s.ImagePullSpec {
			return &FieldError{Reason: "ImagePullSpecMismatch", Message: "spec." + field + ": " + fmt.Sprintf(
				"%s differs from imagePullSpec %q, but one ocm-controller image runs registration and work; remove it or set it equal to imagePullSpec", img, s.ImagePullSpec)}
		}
	}
	return nil
}

// checkRegistration refuses the settings of spec.registrationConfiguration
// that the agent cannot honor.
func checkRegistration(rc *operatorv1.RegistrationConfiguration) error {
	const path = "spec.registrationConfiguration."
	if len(rc.ClusterAnnotations) > 0 || len(rc.ClusterLabels) > 0 {
		return &FieldError{Reason: "ClusterMetadataUnsupported", Message: path + "clusterAnnotations/clusterLabels" + ": " + "the agent does not set ManagedCluster labels or annotations; remove them and label the ManagedCluster on the hub"}
	}
	switch t := rc.RegistrationDriver.AuthType; t {
	case "", operatorv1.CSRAuthType, operatorv1.TokenAuthType:
	default:
		return &FieldError{Reason: "RegistrationDriverUnsupported", Message: path + "registrationDriver.authType" + ": " + fmt.Sprintf("%q is not supported: the agent registers with certificate signing requests (csr) or ServiceAccount tokens (token); set one of them", t)}
	}
	if b := rc.BootstrapKubeConfigs; b.Type == operatorv1.LocalSecrets {
		return checkBootstrapSecrets(b.LocalSecrets)
	}
	return nil
}

// checkBootstrapSecrets refuses bootstrapKubeConfigs of type LocalSecrets
// that list no Secret, a Secret twice or the hub credential, or a hub
// connection timeout below the minimum.
func checkBootstrapSecrets(l *operatorv1.LocalSecretsConfig) error {
	const path = "spec.registrationConfiguration.bootstrapKubeConfigs.localSecretsConfig."
	if l == nil || len(l.KubeConfigSecrets) == 0 {
		return &FieldError{Reason: "BootstrapKubeConfigsMissing", Message: path + "kubeConfigSecrets" + ": " + "type LocalSecrets needs the bootstrap kubeconfig Secrets of the hubs, in order of preference; list them or set type None"}
	}
	var names []string
	for i, s := range l.KubeConfigSecrets {
		if msgs := validation.IsDNS1123Subdomain(s.Name); len(msgs) > 0 {
			return &FieldError{Reason: "BootstrapKubeConfigsInvalid", Message: fmt.Sprintf("%skubeConfigSecrets[%d].name: %q is not a Secret name (%s)", path, i, s.Name, msgs[0])}
		}
		if slices.Contains(names, s.Name) {
			return &FieldError{Reason: "BootstrapKubeConfigsInvalid", Message: fmt.Sprintf("%skubeConfigSecrets[%d].name: Secret %s is listed twice; list each hub's Secret once", path, i, s.Name)}
		}
		if s.Name == operatorv1.HubKubeConfigSecret {
			return &FieldError{Reason: "BootstrapKubeConfigsInvalid", Message: fmt.Sprintf("%skubeConfigSecrets[%d].name: %s holds the agent's hub credential, not a bootstrap kubeconfig; name another Secret", path, i, s.Name)}
		}
		names = append(names, s.Name)
	}
	if t := l.HubConnectionTimeoutSeconds; t != 0 && t < operatorv1.MinHubConnectionTimeoutSeconds {
		return &FieldError{Reason: "HubConnectionTimeoutInvalid", Message: fmt.Sprintf("%shubConnectionTimeoutSeconds: %d is below the minimum of %d", path, t, operatorv1.MinHubConnectionTimeoutSeconds)}
	}
	return nil
}

// KlusterletOperatorValues parameterise the manifests of the Klusterlet
// operator in config/klusterlet-operator.
type KlusterletOperatorValues struct {
	// Image is the ocm-controller image of the operator.
	Image string
	// LeaderElection is the operator's leader election timings (`kubectl
	// ocm join`'s --operator-leader-elect-* flags).
	LeaderElection
	// OperatorPod places, sizes and otherwise overrides the operator's Pod.
	OperatorPod
	// EnforceSharedPodSecurity passes the operator
	// --enforce-pod-security-in-shared-namespaces: the add-on agents'
	// namespace open-cluster-management-agent-addon, which OCM's add-ons
	// share, enforces restricted Pod Security too (the values'
	// podSecurity.enforceSharedNamespaces); it warns and audits at
	// restricted either way.
	EnforceSharedPodSecurity bool
}

// Namespace is the operator's namespace, open-cluster-management.
func (KlusterletOperatorValues) Namespace() string { return operatorv1.OperatorNamespace }

// KlusterletOperatorObjects returns the Klusterlet operator: the Klusterlet
// CRD, then the rendered config/klusterlet-operator manifests (namespace
// open-cluster-management, its identity and rights, its Deployment).
func KlusterletOperatorObjects(v KlusterletOperatorValues) ([]*unstructured.Unstructured, error) {
	v.Image = cmp.Or(v.Image, DefaultImage())
	crd, err := CRD(KlusterletsCRDName)
	if err != nil {
		return nil, err
	}
	manifests, err := Render("klusterlet-operator", v)
	if err != nil {
		return nil, err
	}
	if err := CheckRestricted(manifests); err != nil {
		return nil, err
	}
	return withCRDs([]*apiextensionsv1.CustomResourceDefinition{crd}, manifests)
}

// IsUserOwned reports whether obj, rendered from the agent manifests, is one
// the user (or `kubectl ocm join`) writes rather than the operator: the
// Klusterlet, its CRD, the bootstrap kubeconfig Secret and, in Hosted mode,
// the managed cluster's kubeconfig Secret.
func IsUserOwned(obj *unstructured.Unstructured) bool {
	switch obj.GetKind() {
	case "Klusterlet":
		return true
	case "CustomResourceDefinition":
		return obj.GetName() == KlusterletsCRDName
	case "Secret":
		// bootstrap-hub-kubeconfig and the standby hubs' StandbySecretName.
		return strings.HasPrefix(obj.GetName(), operatorv1.BootstrapHubKubeConfigSecret) || obj.GetName() == ManagedKubeconfigSecret
	}
	return false
}

// KlusterletInstallObjects returns what `kubectl ocm join` writes, and a
// GitOps repository holds, for the agent of v: the Klusterlet operator
// (KlusterletOperatorObjects with op), then, rendered from the agent
// manifests, the agent's namespace, the Secrets the user owns (bootstrap
// kubeconfig; in Hosted mode also the managed cluster's kubeconfig) and the
// Klusterlet. The operator renders everything else from the Klusterlet. In
// Hosted mode it also returns the CRDs that belong on the managed cluster.
func KlusterletInstallObjects(op KlusterletOperatorValues, v AgentValues, hosted bool) (objs, managed []*unstructured.Unstructured, err error) {
	if objs, err = KlusterletOperatorObjects(op); err != nil {
		return nil, nil, err
	}
	var agent []*unstructured.Unstructured
	if hosted {
		agent, managed, err = HostedAgentObjects(v)
	} else {
		agent, err = AgentObjects(v)
	}
	if err != nil {
		return nil, nil, err
	}
	for _, obj := range agent {
		if IsKlusterletInstallObject(obj) {
			objs = append(objs, obj)
		}
	}
	return objs, managed, nil
}

// IsKlusterletInstallObject reports whether obj, rendered from the agent
// manifests, is one KlusterletInstallObjects returns next to the operator:
// the agent's namespace or an object the user owns (IsUserOwned) other than
// a CRD, which the operator's objects carry. The klusterlet Helm chart holds
// the same objects.
func IsKlusterletInstallObject(obj *unstructured.Unstructured) bool {
	return obj.GetKind() != "CustomResourceDefinition" && (obj.GetKind() == "Namespace" || IsUserOwned(obj))
}
