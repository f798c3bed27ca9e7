package config

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/featuregate"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
)

// ClusterManagersCRDName is the CRD of the ClusterManager, which the
// operator's own install (HubOperatorObjects) brings, not the operator.
const ClusterManagersCRDName = "clustermanagers.operator.open-cluster-management.io"

// HubOperatorDeployment names the Deployment of the ClusterManager operator
// in OperatorNamespace, and its ServiceAccount, ClusterRole and
// ClusterRoleBinding.
const HubOperatorDeployment = "cluster-manager"

// HubControllerDeployment names the hub controller Deployment in
// HubNamespace, which the operator renders and watches.
const HubControllerDeployment = "ocm-hub-controller"

// HubTunnelDeployment names the hub tunnel's Deployment in HubNamespace,
// and its ServiceAccount and Service (hubtunnel.ServiceName).
const HubTunnelDeployment = hubtunnel.ServiceName

// The NetworkPolicies of the hub controller's and the hub tunnel's Pods in
// HubNamespace, rendered from the ClusterManager's
// spec.networkPolicyConfiguration (see HubValues.NetworkPolicy).
const (
	// HubWebhookNetworkPolicy opens the webhook port, to the API server's
	// namespace when apiServerNamespace is set.
	HubWebhookNetworkPolicy = "ocm-hub-controller-webhook"
	// HubMetricsNetworkPolicy opens the metrics port to monitoringNamespace;
	// rendered only when it is set.
	HubMetricsNetworkPolicy = "ocm-hub-controller-metrics"
	// HubTunnelNetworkPolicy opens the tunnel's port, to the API server's
	// namespace when apiServerNamespace is set.
	HubTunnelNetworkPolicy = "ocm-hub-tunnel"
	// HubTunnelMetricsNetworkPolicy opens the tunnel's metrics port to
	// monitoringNamespace; rendered only when it is set.
	HubTunnelMetricsNetworkPolicy = "ocm-hub-tunnel-metrics"
)

// HubOperatorValues parameterise the manifests in config/hub-operator: the
// operator and the ClusterManager, what `kubectl ocm hub init` writes.
type HubOperatorValues struct {
	// Image is the ocm-controller image of the operator and of every hub
	// component (the ClusterManager's four *ImagePullSpec).
	Image string
	// ClusterManagerName names the ClusterManager. Default: cluster-manager.
	ClusterManagerName string
	// AutoApproveUsers become the ClusterManager's
	// spec.registrationConfiguration.autoApproveUsers.
	AutoApproveUsers []string
	// ConversionWebhookURL becomes the operator's --conversion-webhook-url,
	// which it passes into HubValues.ConversionWebhookURL.
	ConversionWebhookURL string
	// TLSProfile becomes the ClusterManager's spec.tlsProfile.
	TLSProfile *operatorv1.TLSProfile
	// NetworkPolicy becomes the ClusterManager's
	// spec.networkPolicyConfiguration; nil leaves the field out.
	NetworkPolicy *operatorv1.NetworkPolicyConfiguration
	// HubController becomes the ClusterManager's spec.nodePlacement and
	// spec.resourceRequirement, which place the hub controller's Pod and
	// size its container.
	HubController Scheduling
	// OperatorPod overrides the operator's Pod.
	OperatorPod
	// EnforceSharedPodSecurity makes the operator's namespace
	// open-cluster-management, which OCM's add-on managers share, enforce
	// restricted Pod Security too (the values'
	// podSecurity.enforceSharedNamespaces); it warns and audits at
	// restricted either way.
	EnforceSharedPodSecurity bool
	// LeaderElection is the operator's own leader election timings
	// (`kubectl ocm hub init`'s --operator-leader-elect-* flags).
	LeaderElection
	// HubLeaderElection becomes the ClusterManager's spec.leaderElection,
	// the hub controller's timings (`hub init`'s --leader-elect-* flags);
	// zero fields are left out.
	HubLeaderElection LeaderElection
}

// Namespace is the operator's namespace, OperatorNamespace.
func (HubOperatorValues) Namespace() string { return OperatorNamespace }

// HubOperatorObjects returns what `kubectl ocm hub init` writes: the
// ClusterManager CRD, the operator's namespace, identity and Deployment,
// and the ClusterManager.
func HubOperatorObjects(v HubOperatorValues) ([]*unstructured.Unstructured, error) {
	if err := ValidateConversionWebhookURL(v.ConversionWebhookURL); err != nil {
		return nil, err
	}
	v.Image = cmp.Or(v.Image, DefaultImage())
	v.ClusterManagerName = cmp.Or(v.ClusterManagerName, operatorv1.ClusterManagerName)
	crd, err := CRD(ClusterManagersCRDName)
	if err != nil {
		return nil, err
	}
	manifests, err := Render("hub-operator", v)
	if err != nil {
		return nil, err
	}
	if err := CheckRestricted(manifests); err != nil {
		return nil, err
	}
	return withCRDs([]*apiextensionsv1.CustomResourceDefinition{crd}, manifests)
}

// Reasons of a ClusterManager the operator cannot apply, on its Applied
// condition; each names the field.
const (
	ReasonImagePullSpecsDiffer             = "ImagePullSpecsDiffer"
	ReasonRegistrationDriverUnsupported    = "RegistrationDriverUnsupported"
	ReasonWorkDriverUnsupported            = "WorkDriverUnsupported"
	ReasonDeployModeUnsupported            = "DeployModeUnsupported"
	ReasonServerConfigurationUnsupported   = "ServerConfigurationUnsupported"
	ReasonImporterConfigurationUnsupported = "ImporterConfigurationUnsupported"
)

// OCM's importer renderers, which importerConfiguration.renderers lists in
// the order they apply, each over what the earlier ones rendered.
const (
	// ImportRendererAuto renders the Klusterlet from the hub's own
	// settings: the hub's image, a bootstrap kubeconfig for the hub's API
	// server with a token bound to the cluster, the hub's pull Secret.
	ImportRendererAuto = "render-auto"
	// ImportRendererFromConfigSecret renders it from the klusterlet chart's
	// values in Secret cluster-import-config (key values.yaml) of the
	// cluster's namespace.
	ImportRendererFromConfigSecret = "render-from-config-secret"
)

// FieldError is a field of a ClusterManager (or Klusterlet) that cannot take
// effect: Reason names the field, Message says why and how to fix it.
type FieldError struct {
	Reason  string
	Message string
}

func (e *FieldError) Error() string { return e.Message }

// HubValuesFromClusterManager returns the HubValues the operator renders for
// cm: the image of its *ImagePullSpec, its feature gates as the hub
// controller's --feature-gates, its nodePlacement and resourceRequirement as
// the hub controller's scheduling and resources, its
// networkPolicyConfiguration as the hub controller's NetworkPolicies. It
// also returns the feature gates it does not know, which are ignored. A
// field that cannot take effect is an error wrapping a *FieldError per
// field: a serverConfiguration or an importerConfiguration that sets
// anything is one (the hub runs neither server), an empty one is not.
func HubValuesFromClusterManager(cm *operatorv1.ClusterManager) (HubValues, []string, error) {
	spec := &cm.Spec
	v := HubValues{ClusterManagerName: cm.Name}
	var errs []error
	image, err := hubImage(spec)
	if err != nil {
		errs = append(errs, err)
	}
	v.Image = image
	if spec.DeployOption.Mode != "" && spec.DeployOption.Mode != operatorv1.InstallModeDefault {
		errs = append(errs, &FieldError{Reason: ReasonDeployModeUnsupported, Message: fmt.Sprintf(
			"spec.deployOption.mode %s is not supported: the hub controller runs on the hub itself; set mode Default", spec.DeployOption.Mode)})
	}
	var gates [][]operatorv1.FeatureGate
	if rc := spec.RegistrationConfiguration; rc != nil {
		gates = append(gates, rc.FeatureGates)
		for _, d := range rc.RegistrationDrivers {
			if d.AuthType != "" && d.AuthType != operatorv1.CSRAuthType {
				errs = append(errs, &FieldError{Reason: ReasonRegistrationDriverUnsupported, Message: fmt.Sprintf(
					"spec.registrationConfiguration.registrationDrivers authType %s is not supported: the hub registers clusters through certificate signing requests only; remove it or use authType csr", d.AuthType)})
			}
		}
		if ic := rc.ImporterConfiguration; ic != nil {
			for _, r := range ic.Renderers {
				if r != ImportRendererAuto && r != ImportRendererFromConfigSecret {
					errs = append(errs, &FieldError{Reason: ReasonImporterConfigurationUnsupported, Message: fmt.Sprintf(
						"spec.registrationConfiguration.importerConfiguration.renderers: renderer %q is not one of %s, %s; remove it", r, ImportRendererAuto, ImportRendererFromConfigSecret)})
				}
			}
		}

	}
	if wc := spec.WorkConfiguration; wc != nil {
		gates = append(gates, wc.FeatureGates)
		if wc.WorkDriver != "" && wc.WorkDriver != operatorv1.WorkDriverTypeKube {
			errs = append(errs, &FieldError{Reason: ReasonWorkDriverUnsupported, Message: fmt.Sprintf(
				"spec.workConfiguration.workDriver %s is not supported: ManifestWorks travel through the hub's API server only; set workDriver kube", wc.WorkDriver)})
		}
	}
	if sc := spec.ServerConfiguration; sc != nil && (sc.ImagePullSpec != "" || len(sc.FeatureGates) > 0 || len(sc.EndpointsExposure) > 0) {
		errs = append(errs, &FieldError{Reason: ReasonServerConfigurationUnsupported, Message: "spec.serverConfiguration is not supported: " +
			"agents reach the hub through its API server only, the hub runs no gRPC or HTTPS server for them; remove serverConfiguration"})
	}
	if ac := spec.AddOnManagerConfiguration; ac != nil {
		gates = append(gates, ac.FeatureGates)
	}
	if pc := spec.PlacementConfiguration; pc != nil {
		gates = append(gates, pc.FeatureGates)
	}
	set, unknown := featuregate.FromSpec(featuregate.Hub, gates...)
	v.FeatureGates = set.Flag()
	if set.Enabled(featuregate.ClusterImporter) {
		v.Importer = &ImporterValues{}
		if rc := spec.RegistrationConfiguration; rc != nil && rc.ImporterConfiguration != nil {
			v.Importer.Renderers = rc.ImporterConfiguration.Renderers
		}
	}
	v.NodeSelector = spec.NodePlacement.NodeSelector
	v.Tolerations = spec.NodePlacement.Tolerations
	v.Resources = resources(spec.ResourceRequirement)
	if np := spec.NetworkPolicyConfiguration; np != nil {
		v.NetworkPolicy = np.DeepCopy()
	}
	le, err := leaderElectionValues(spec.LeaderElection, leaderelect.Hub)
	if err != nil {
		errs = append(errs, err)
	}
	v.LeaderElection = le
	return v, unknown, errors.Join(errs...)
}

// hubImage returns the one image the ClusterManager's *ImagePullSpec name
// (the default image when none is set), or a *FieldError naming those that
// differ.
func hubImage(spec *operatorv1.ClusterManagerSpec) (string, error) {
	fields := []struct{ name, image string }{
		{"registrationImagePullSpec", spec.RegistrationImagePullSpec},
		{"workImagePullSpec", spec.WorkImagePullSpec},
		{"placementImagePullSpec", spec.PlacementImagePullSpec},
		{"addOnManagerImagePullSpec", spec.AddOnManagerImagePullSpec},
	}
	image := ""
	var named []string
	differ := false
	for _, f := range fields {
		if f.image == "" {
			continue
		}
		named = append(named, fmt.Sprintf("%s %s", f.name, f.image))
		if image != "" && f.image != image {
			differ = true
		}
		image = cmp.Or(image, f.image)
	}
	if differ {
		return "", &FieldError{Reason: ReasonImagePullSpecsDiffer, Message: fmt.Sprintf(
			"the image pull specs name different images (%s): one ocm-controller image runs every hub controller; set them to the same image", strings.Join(named, ", "))}
	}
	return cmp.Or(image, DefaultImage()), nil
}

// resources returns the hub controller container's resources for rr: nil
// (the manifest's own) for Default, none for BestEffort, rr's own for
// ResourceRequirement.
func resources(rr *operatorv1.ResourceRequirement) *corev1.ResourceRequirements {
	switch {
	case rr == nil || rr.Type == "" || rr.Type == operatorv1.ResourceQosClassDefault:
		return nil
	case rr.Type == operatorv1.ResourceQosClassResourceRequirement && rr.ResourceRequirements != nil:
		return rr.ResourceRequirements.DeepCopy()
	}
	return &corev1.ResourceRequirements{}
}
