package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// TestHubValuesFromClusterManager checks what the operator renders for a
// ClusterManager, and the fields it rejects.
func TestHubValuesFromClusterManager(t *testing.T) {
	image := "registry.example.com/ocm-controller:v1"
	limits := &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	disable := func(feature string) operatorv1.FeatureGate {
		return operatorv1.FeatureGate{Feature: feature, Mode: operatorv1.FeatureGateModeTypeDisable}
	}
	tests := []struct {
		name        string
		spec        operatorv1.ClusterManagerSpec
		want        HubValues
		wantUnknown []string
		wantReasons []string
	}{{
		name: "empty spec: the default image and nothing else",
		want: HubValues{ClusterManagerName: "cm", Image: DefaultImage()},
	}, {
		name: "one image in every field",
		spec: operatorv1.ClusterManagerSpec{RegistrationImagePullSpec: image, WorkImagePullSpec: image, PlacementImagePullSpec: image, AddOnManagerImagePullSpec: image},
		want: HubValues{ClusterManagerName: "cm", Image: image},
	}, {
		name: "one image in some fields",
		spec: operatorv1.ClusterManagerSpec{PlacementImagePullSpec: image},
		want: HubValues{ClusterManagerName: "cm", Image: image},
	}, {
		name:        "different images",
		spec:        operatorv1.ClusterManagerSpec{RegistrationImagePullSpec: image, WorkImagePullSpec: "other:v2"},
		want:        HubValues{ClusterManagerName: "cm"},
		wantReasons: []string{ReasonImagePullSpecsDiffer},
	}, {
		name: "feature gates of every section, unknown ones returned",
		spec: operatorv1.ClusterManagerSpec{
			RegistrationConfiguration: &operatorv1.RegistrationHubConfiguration{FeatureGates: []operatorv1.FeatureGate{disable("ManagedClusterAutoApproval"), {Feature: "Foo", Mode: operatorv1.FeatureGateModeTypeEnable}}},
			WorkConfiguration:         &operatorv1.WorkConfiguration{WorkDriver: operatorv1.WorkDriverTypeKube, FeatureGates: []operatorv1.FeatureGate{disable("ManifestWorkReplicaSet")}},
			AddOnManagerConfiguration: &operatorv1.AddOnManagerConfiguration{FeatureGates: []operatorv1.FeatureGate{disable("AddonManagement")}},
			PlacementConfiguration:    &operatorv1.PlacementConfiguration{FeatureGates: []operatorv1.FeatureGate{{Feature: "SIGPlacementDecision", Mode: operatorv1.FeatureGateModeTypeEnable}}},
		},
		want:        HubValues{ClusterManagerName: "cm", Image: DefaultImage(), FeatureGates: "AddonManagement=false,ManagedClusterAutoApproval=false,ManifestWorkReplicaSet=false,SIGPlacementDecision=true"},
		wantUnknown: []string{"Foo"},
	}, {
		name: "node placement and resources",
		spec: operatorv1.ClusterManagerSpec{
			NodePlacement:       operatorv1.NodePlacement{NodeSelector: map[string]string{"a": "b"}, Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}},
			ResourceRequirement: &operatorv1.ResourceRequirement{Type: operatorv1.ResourceQosClassResourceRequirement, ResourceRequirements: limits},
		},
		want: HubValues{ClusterManagerName: "cm", Image: DefaultImage(), Scheduling: Scheduling{
			NodeSelector: map[string]string{"a": "b"}, Tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}, Resources: limits}},
	}, {
		name: "best effort: no resources",
		spec: operatorv1.ClusterManagerSpec{ResourceRequirement: &operatorv1.ResourceRequirement{Type: operatorv1.ResourceQosClassBestEffort}},
		want: HubValues{ClusterManagerName: "cm", Image: DefaultImage(), Scheduling: Scheduling{Resources: &corev1.ResourceRequirements{}}},
	}, {
		name: "default resources",
		spec: operatorv1.ClusterManagerSpec{ResourceRequirement: &operatorv1.ResourceRequirement{Type: operatorv1.ResourceQosClassDefault}},
		want: HubValues{ClusterManagerName: "cm", Image: DefaultImage()},
	}, {
		name: "csr registration driver",
		spec: operatorv1.ClusterManagerSpec{RegistrationConfiguration: &operatorv1.RegistrationHubConfiguration{RegistrationDrivers: []operatorv1.RegistrationDriverHub{{AuthType: operatorv1.CSRAuthType}}}},
		want: HubValues{ClusterManagerName: "cm", Image: DefaultImage()},
	}, {
		name: "rejected: awsirsa driver, mqtt work driver, Hosted mode",
		spec: operatorv1.ClusterManagerSpec{
			RegistrationConfiguration: &operatorv1.RegistrationHubConfiguration{RegistrationDrivers: []operatorv1.RegistrationDriverHub{{AuthType: operatorv1.AwsIrsaAuthType}}},
			WorkConfiguration:         &operatorv1.WorkConfiguration{WorkDriver: operatorv1.WorkDriverTypeMqtt},
			DeployOption:              operatorv1.ClusterManagerDeployOption{Mode: operatorv1.InstallModeHosted},
		},
		want:        HubValues{ClusterManagerName: "cm", Image: DefaultImage()},
		wantReasons: []string{ReasonDeployModeUnsupported, ReasonRegistrationDriverUnsupported, ReasonWorkDriverUnsupported},
	}, {
		name: "empty serverConfiguration and importerConfiguration",
		spec: operatorv1.ClusterManagerSpec{
			RegistrationConfiguration: &operatorv1.RegistrationHubConfiguration{ImporterConfiguration: &operatorv1.ImporterConfiguration{Renderers: []string{}}},
			ServerConfiguration:       &operatorv1.ServerConfiguration{FeatureGates: []operatorv1.FeatureGate{}},
		},
		want: HubValues{ClusterManagerName: "cm", Image: DefaultImage()},
	}, {
		name: "rejected: serverConfiguration, importerConfiguration",
		spec: operatorv1.ClusterManagerSpec{
			RegistrationConfiguration: &operatorv1.RegistrationHubConfiguration{ImporterConfiguration: &operatorv1.ImporterConfiguration{Renderers: []string{"render-auto", "render-from-cluster-api"}}},
			ServerConfiguration:       &operatorv1.ServerConfiguration{EndpointsExposure: []operatorv1.EndpointExposure{{Protocol: "grpc"}}},
		},
		want:        HubValues{ClusterManagerName: "cm", Image: DefaultImage()},
		wantReasons: []string{ReasonImporterConfigurationUnsupported, ReasonServerConfigurationUnsupported},
	}, {
		name: "the cluster importer",
		spec: operatorv1.ClusterManagerSpec{
			RegistrationConfiguration: &operatorv1.RegistrationHubConfiguration{
				FeatureGates:          []operatorv1.FeatureGate{{Feature: "ClusterImporter", Mode: operatorv1.FeatureGateModeTypeEnable}},
				ImporterConfiguration: &operatorv1.ImporterConfiguration{Renderers: []string{"render-auto", "render-from-config-secret"}},
			},
		},
		want: HubValues{ClusterManagerName: "cm", Image: DefaultImage(), Importer: &ImporterValues{Renderers: []string{"render-auto", "render-from-config-secret"}},
			FeatureGates: "ClusterImporter=true"},
	}, {
		name: "networkPolicyConfiguration",
		spec: operatorv1.ClusterManagerSpec{NetworkPolicyConfiguration: &operatorv1.NetworkPolicyConfiguration{APIServerNamespace: "kube-system", MonitoringNamespace: "monitoring"}},
		want: HubValues{ClusterManagerName: "cm", Image: DefaultImage(),
			NetworkPolicy: &operatorv1.NetworkPolicyConfiguration{APIServerNamespace: "kube-system", MonitoringNamespace: "monitoring"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cm := &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Spec: tt.spec}
			got, unknown, err := HubValuesFromClusterManager(cm)
			var reasons []string
			for _, e := range unwrap(err) {
				var fe *FieldError
				if !errors.As(e, &fe) {
					t.Fatalf("error %v is not a *FieldError", e)
				}
				if !strings.Contains(fe.Message, "spec.") && !strings.Contains(fe.Message, "ImagePullSpec") {
					t.Errorf("message %q names no field", fe.Message)
				}
				reasons = append(reasons, fe.Reason)
			}
			if !reflect.DeepEqual(reasons, tt.wantReasons) {
				t.Errorf("reasons = %v, want %v (%v)", reasons, tt.wantReasons, err)
			}
			if !reflect.DeepEqual(unknown, tt.wantUnknown) {
				t.Errorf("unknown = %v, want %v", unknown, tt.wantUnknown)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("values = %+v\nwant     %+v", got, tt.want)
			}
		})
	}
}

// unwrap returns the errors errors.Join joined in err.
func unwrap(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// TestHubOperatorObjects checks what `hub init` writes: the ClusterManager
// CRD, the operator and the ClusterManager, nothing the operator renders.
func TestHubOperatorObjects(t *testing.T) {
	objs, err := HubOperatorObjects(HubOperatorValues{Image: "example.com/ocm-controller:v1", AutoApproveUsers: []string{"alice"}, ConversionWebhookURL: "https://127.0.0.1:9443/convert"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+" "+o.GetName())
	}
	want := []string{"CustomResourceDefinition " + ClusterManagersCRDName, "Namespace open-cluster-management", "ServiceAccount cluster-manager",
		"ClusterRole cluster-manager", "ClusterRoleBinding cluster-manager", "Deployment cluster-manager", "ClusterManager cluster-manager"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("objects = %v, want %v", got, want)
	}
	if _, err := HubOperatorObjects(HubOperatorValues{ConversionWebhookURL: "http://x"}); err == nil {
		t.Error("an http conversion webhook URL was accepted")
	}
}

// TestHubOperatorNetworkPolicy checks the ClusterManager's
// spec.networkPolicyConfiguration that HubOperatorValues.NetworkPolicy
// writes: absent when nil, {} when set and empty, and each namespace given.
func TestHubOperatorNetworkPolicy(t *testing.T) {
	for _, tt := range []struct {
		name string
		np   *operatorv1.NetworkPolicyConfiguration
		want any // the field as written, nil when absent
	}{
		{name: "unset", np: nil, want: nil},
		{name: "empty", np: &operatorv1.NetworkPolicyConfiguration{}, want: map[string]any{}},
		{name: "monitoringNamespace", np: &operatorv1.NetworkPolicyConfiguration{MonitoringNamespace: "monitoring"},
			want: map[string]any{"monitoringNamespace": "monitoring"}},
		{name: "apiServerNamespace", np: &operatorv1.NetworkPolicyConfiguration{APIServerNamespace: "kube-system"},
			want: map[string]any{"apiServerNamespace": "kube-system"}},
		{name: "both", np: &operatorv1.NetworkPolicyConfiguration{MonitoringNamespace: "monitoring", APIServerNamespace: "kube-system"},
			want: map[string]any{"monitoringNamespace": "monitoring", "apiServerNamespace": "kube-system"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := HubOperatorObjects(HubOperatorValues{NetworkPolicy: tt.np})
			if err != nil {
				t.Fatal(err)
			}
			var cm *unstructured.Unstructured
			for _, o := range objs {
				if o.GetKind() == "ClusterManager" {
					cm = o
				}
				if o.GetKind() == "NetworkPolicy" {
					t.Errorf("hub init writes NetworkPolicy %s, which the operator renders", o.GetName())
				}
			}
			if cm == nil {
				t.Fatal("no ClusterManager")
			}
			got, found, err := unstructured.NestedFieldNoCopy(cm.Object, "spec", "networkPolicyConfiguration")
			if err != nil {
				t.Fatal(err)
			}
			if !found {
				got = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("spec.networkPolicyConfiguration %#v, want %#v", got, tt.want)
			}
			var typed operatorv1.ClusterManager
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(cm.Object, &typed, true); err != nil {
				t.Fatalf("decode the ClusterManager: %v", err)
			}
			if !reflect.DeepEqual(typed.Spec.NetworkPolicyConfiguration, tt.np) {
				t.Errorf("decoded spec.networkPolicyConfiguration %+v, want %+v", typed.Spec.NetworkPolicyConfiguration, tt.np)
			}
		})
	}
}

// TestHubObjectsImporter shows that the cluster importer, its identity and
// its admission policy are rendered with the feature gate only.
func TestHubObjectsImporter(t *testing.T) {
	names := func(v HubValues) map[string]bool {
		objs, err := HubObjects(v)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, o := range objs {
			out[o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName()] = true
		}
		return out
	}
	want := []string{
		"Deployment open-cluster-management-hub/ocm-importer",
		"ServiceAccount open-cluster-management-hub/ocm-importer",
		"ClusterRoleBinding /open-cluster-management:importer",
		"RoleBinding kube-public/open-cluster-management:importer",
		"RoleBinding open-cluster-management-cluster-bootstrap/open-cluster-management:importer",
		"RoleBinding open-cluster-management-hub/open-cluster-management:importer",
		"ValidatingAdmissionPolicy /importer.open-cluster-management.io",
		"ValidatingAdmissionPolicyBinding /importer.open-cluster-management.io",
	}
	with, without := names(HubValues{Importer: &ImporterValues{}}), names(HubValues{})
	for _, n := range want {
		if !with[n] {
			t.Errorf("with the importer: %s is not rendered", n)
		}
		if without[n] {
			t.Errorf("without the importer: %s is rendered", n)
		}
	}
}

// TestHubObjectsImporterRenderers shows that the importer is passed the
// renderers of importerConfiguration in their order, and none by default.
func TestHubObjectsImporterRenderers(t *testing.T) {
	args := func(v HubValues) string {
		objs, err := HubObjects(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if o.GetKind() == "Deployment" && o.GetName() == "ocm-importer" {
				containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
				a, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
				return strings.Join(a, " ")
			}
		}
		t.Fatal("no importer Deployment")
		return ""
	}
	got := args(HubValues{Importer: &ImporterValues{Renderers: []string{ImportRendererFromConfigSecret, ImportRendererAuto}}})
	if !strings.Contains(got, "--import-renderers=render-from-config-secret,render-auto") {
		t.Errorf("importer args %q lack the renderers in order", got)
	}
	if got := args(HubValues{Importer: &ImporterValues{}}); strings.Contains(got, "--import-renderers") {
		t.Errorf("importer args %q name renderers none were given", got)
	}
}
