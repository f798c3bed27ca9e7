package config

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
)

// klusterlet returns a Klusterlet of cluster1 changed by edit.
func klusterlet(edit func(s *operatorv1.KlusterletSpec)) *operatorv1.Klusterlet {
	k := &operatorv1.Klusterlet{ObjectMeta: metav1.ObjectMeta{Name: operatorv1.KlusterletName},
		Spec: operatorv1.KlusterletSpec{ClusterName: "cluster1", ImagePullSpec: "example.com/ocm-controller:v1"}}
	if edit != nil {
		edit(&k.Spec)
	}
	return k
}

func TestAgentValuesFromKlusterlet(t *testing.T) {
	tests := []struct {
		name        string
		k           *operatorv1.Klusterlet
		want        func(v *AgentValues) // edits the values of the plain Klusterlet
		wantArgs    []string             // the agent container's rendered flags
		wantUnknown []string
		wantReason  string
	}{
		{name: "defaults", k: klusterlet(nil), wantArgs: []string{"--cluster-name=cluster1"}},
		{name: "namespace and mode", k: klusterlet(func(s *operatorv1.KlusterletSpec) {
			s.Namespace, s.DeployOption.Mode = "open-cluster-management-other", operatorv1.InstallModeSingleton
		}), want: func(v *AgentValues) { v.AgentNamespace, v.Mode = "open-cluster-management-other", "Singleton" }},
		{name: "feature gates of both sections", k: klusterlet(func(s *operatorv1.KlusterletSpec) {
			s.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{FeatureGates: []operatorv1.FeatureGate{
				{Feature: "ClusterClaim", Mode: operatorv1.FeatureGateModeTypeDisable}, {Feature: "NoSuchGate", Mode: operatorv1.FeatureGateModeTypeEnable}}}
			s.WorkConfiguration = &operatorv1.WorkAgentConfiguration{FeatureGates: []operatorv1.FeatureGate{{Feature: "AddonManagement", Mode: operatorv1.FeatureGateModeTypeDisable}}}
		}), want: func(v *AgentValues) { v.FeatureGates = "AddonManagement=false,ClusterClaim=false" },
			wantArgs: []string{"--feature-gates=AddonManagement=false,ClusterClaim=false"}, wantUnknown: []string{"NoSuchGate"}},
		{name: "work configuration", k: klusterlet(func(s *operatorv1.KlusterletSpec) {
			s.WorkConfiguration = &operatorv1.WorkAgentConfiguration{HubKubeAPIQPS: 20, HubKubeAPIBurst: 40, KubeAPIQPS: 30, KubeAPIBurst: 60,
				StatusSyncInterval: &metav1.Duration{Duration: 5 * time.Second}, AppliedManifestWorkEvictionGracePeriod: &metav1.Duration{Duration: time.Hour}}
		}), want: func(v *AgentValues) { v.HubKubeAPIQPS, v.HubKubeAPIBurst = 20, 40 }, wantArgs: []string{"--hub-kube-api-qps=20", "--hub-kube-api-burst=40", "--work-kube-api-qps=30", "--work-kube-api-burst=60",
			"--status-sync-interval=5s", "--appliedmanifestwork-eviction-grace-period=1h0m0s"}},
		{name: "workers", k: klusterlet(func(s *operatorv1.KlusterletSpec) {
			s.WorkConfiguration = &operatorv1.WorkAgentConfiguration{Workers: &operatorv1.WorkAgentWorkers{ManifestWorks: 3, AppliedManifestWorkFinalize: 5}}
		}), want: func(v *AgentValues) { v.ManifestWorkWorkers, v.AppliedWorkWorkers = 3, 5 },
			wantArgs: []string{"--manifestwork-agent-workers=3", "--appliedmanifestwork-finalize-controller-workers=5"}},
		{name: "registration configuration", k: klusterlet(func(s *operatorv1.KlusterletSpec) {
			s.ExternalServerURLs = []operatorv1.ServerURL{{URL: "https://a:6443"}, {URL: "https://b:6443"}}
			s.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{ClientCertExpirationSeconds: 3600,
				RegistrationDriver: operatorv1.RegistrationDriver{AuthType: "csr"},
				BootstrapKubeConfigs: operatorv1.BootstrapKubeConfigs{Type: operatorv1.LocalSecrets,
					LocalSecrets: &operatorv1.LocalSecretsConfig{KubeConfigSecrets: []operatorv1.KubeConfigSecret{{Name: "bootstrap-a"}}}},
				AddOnKubeClientRegistrationDriver: &operatorv1.AddOnRegistrationDriver{AuthType: "token", Token: &operatorv1.TokenConfig{ExpirationSeconds: 7200}}}
		}), want: func(v *AgentValues) {
			v.ExternalServerURLs, v.ClientCertExpirationSeconds = []string{"https://a:6443", "https://b:6443"}, 3600
			v.AddonKubeClientRegistrationAuth, v.AddonTokenExpirationSeconds = "token", 7200
		}, wantArgs: []string{"--client-cert-expiration-seconds=3600", "--spoke-external-server-urls=https://a:6443,https://b:6443", "--bootstrap-kubeconfig-secret=bootstrap-a"}},
		{name: "token registration driver", k: klusterlet(func(s *operatorv1.KlusterletSpec) {
			s.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{RegistrationDriver: operatorv1.RegistrationDriver{AuthType: "token"}}
		}), want: func(v *AgentValues) { v.RegistrationAuth = "token" }, wantArgs: []string{"--registration-auth=token"}},
		{name: "placement and resources", k: klusterlet(func(s *operatorv1.KlusterletSpec) {
			s.NodePlacement = operatorv1.NodePlacement{NodeSelector: map[string]string{"role": "infra"}}
			s.ResourceRequirement = &operatorv1.ResourceRequirement{Type: operatorv1.ResourceQosClassResourceRequirement,
				ResourceRequirements: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}}
		}), want: func(v *AgentValues) {
			v.NodeSelector = map[string]string{"role": "infra"}
			v.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}
		}},
		{name: "hosted", k: func() *operatorv1.Klusterlet {
			k := klusterlet(func(s *operatorv1.KlusterletSpec) { s.DeployOption.Mode = operatorv1.InstallModeHosted })
			k.Name = "klusterlet-cluster1"
			return k
		}(), want: func(v *AgentValues) {
			v.Mode, v.KlusterletName, v.AgentNamespace = "Hosted", "klusterlet-cluster1", "klusterlet-cluster1"
		},
			wantArgs: []string{"--klusterlet-name=klusterlet-cluster1", "--managed-kubeconfig-secret=external-managed-kubeconfig"}},
		{name: "hosted, reporting its hosting cluster", k: func() *operatorv1.Klusterlet {
			k := klusterlet(func(s *operatorv1.KlusterletSpec) {
				s.DeployOption = operatorv1.KlusterletDeployOption{Mode: operatorv1.InstallModeHosted, ReportHostingCluster: operatorv1.ReportHostingClusterModeEnable,
					Hosted: &operatorv1.KlusterletHostedConfiguration{ManagementClusterName: "hosting1"}}
			})
			k.Name = "klusterlet-cluster1"
			return k
		}(), want: func(v *AgentValues) {
			v.Mode, v.KlusterletName, v.AgentNamespace = "Hosted", "klusterlet-cluster1", "klusterlet-cluster1"
			v.ReportHostingCluster, v.ManagementClusterName = true, "hosting1"
		},
			wantArgs: []string{"--klusterlet-name=klusterlet-cluster1", "--managed-kubeconfig-secret=external-managed-kubeconfig"}},
		{name: "hosted with workers and leader election", k: func() *operatorv1.Klusterlet {
			k := klusterlet(func(s *operatorv1.KlusterletSpec) {
				s.DeployOption.Mode = operatorv1.InstallModeHosted
				s.WorkConfiguration = &operatorv1.WorkAgentConfiguration{Workers: &operatorv1.WorkAgentWorkers{ManifestWorks: 7}}
				s.LeaderElection = &operatorv1.LeaderElectionConfiguration{RetryPeriod: &metav1.Duration{Duration: time.Second}}
			})
			k.Name = "klusterlet-cluster1"
			return k
		}(), want: func(v *AgentValues) {
			v.Mode, v.KlusterletName, v.AgentNamespace = "Hosted", "klusterlet-cluster1", "klusterlet-cluster1"
			v.ManifestWorkWorkers, v.RetryPeriod = 7, time.Second
		}, wantArgs: []string{"--manifestwork-agent-workers=7", "--leader-elect-retry-period=1s"}},
		{name: "no cluster name", k: klusterlet(func(s *operatorv1.KlusterletSpec) { s.ClusterName = "" }), wantReason: "ClusterNameMissing"},
		{name: "cluster name not a DNS label", k: klusterlet(func(s *operatorv1.KlusterletSpec) { s.ClusterName = "Cluster_1" }), wantReason: "ClusterNameInvalid"},
		{name: "reserved cluster name", k: klusterlet(func(s *operatorv1.KlusterletSpec) { s.ClusterName = "kube-system" }), wantReason: "ClusterNameInvalid"},
		{name: "shared role's name", k: klusterlet(func(s *operatorv1.KlusterletSpec) { s.ClusterName = "registration" }), wantReason: "ClusterNameInvalid"},
		{name: "two images", k: klusterlet(func(s *operatorv1.KlusterletSpec) { s.WorkImagePullSpec = "example.com/work:v1" }), wantReason: "ImagePullSpecMismatch"},
		{name: "aws registration", k: klusterlet(func(s *operatorv1.KlusterletSpec) {
			s.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{RegistrationDriver: operatorv1.RegistrationDriver{AuthType: "awsirsa"}}
		}), wantReason: "RegistrationDriverUnsupported"},
		{name: "standby hubs", k: klusterlet(func(s *operatorv1.KlusterletSpec) {
			s.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{BootstrapKubeConfigs: operatorv1.BootstrapKubeConfigs{Type: operatorv1.LocalSecrets,
				LocalSecrets: &operatorv1.LocalSecretsConfig{KubeConfigSecrets: []operatorv1.KubeConfigSecret{{Name: "bootstrap-hub-kubeconfig"}, {Name: "hub-b"}}, HubConnectionTimeoutSeconds: 180}}}
		}), wantArgs: []string{"--bootstrap-kubeconfig-secret=bootstrap-hub-kubeconfig", "--bootstrap-kubeconfig-secret=hub-b", "--hub-connection-timeout=180s"}},
		{name: "standby hubs with MultipleHubs enabled as in OCM", k: klusterlet(func(s *operatorv1.KlusterletSpec) {
			s.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{
				FeatureGates: []operatorv1.FeatureGate{{Feature: "MultipleHubs", Mode: operatorv1.FeatureGateModeTypeEnable}},
				BootstrapKubeConfigs: operatorv1.BootstrapKubeConfigs{Type: operatorv1.LocalSecrets,
					LocalSecrets: &operatorv1.LocalSecretsConfig{KubeConfigSecrets: []operatorv1.KubeConfigSecret{{Name: "a"}, {Name: "b"}}}}}
		}), wantArgs: []string{"--bootstrap-kubeconfig-secret=a", "--bootstrap-kubeconfig-secret=b"}},
		{name: "standby hubs with MultipleHubs disabled", k: klusterlet(func(s *operatorv1.KlusterletSpec) {
			s.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{
				FeatureGates: []operatorv1.FeatureGate{{Feature: "MultipleHubs", Mode: operatorv1.FeatureGateModeTypeDisable}},
				BootstrapKubeConfigs: operatorv1.BootstrapKubeConfigs{Type: operatorv1.LocalSecrets,
					LocalSecrets: &operatorv1.LocalSecretsConfig{KubeConfigSecrets: []operatorv1.KubeConfigSecret{{Name: "a"}, {Name: "b"}}}}}
		}), wantReason: "MultipleHubsDisabled"},
		{name: "a bootstrap Secret listed twice", k: klusterlet(func(s *operatorv1.KlusterletSpec) {
			s.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{BootstrapKubeConfigs: operatorv1.BootstrapKubeConfigs{Type: operatorv1.LocalSecrets,
				LocalSecrets: &operatorv1.LocalSecretsConfig{KubeConfigSecrets: []operatorv1.KubeConfigSecret{{Name: "a"}, {Name: "a"}}}}}
		}), wantReason: "BootstrapKubeConfigsInvalid"},
		{name: "the hub credential as a bootstrap Secret", k: klusterlet(func(s *operatorv1.KlusterletSpec) {
			s.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{BootstrapKubeConfigs: operatorv1.BootstrapKubeConfigs{Type: operatorv1.LocalSecrets,
				LocalSecrets: &operatorv1.LocalSecretsConfig{KubeConfigSecrets: []operatorv1.KubeConfigSecret{{Name: "a"}, {Name: "hub-kubeconfig-secret"}}}}}
		}), wantReason: "BootstrapKubeConfigsInvalid"},
		{name: "LocalSecrets without Secrets", k: klusterlet(func(s *operatorv1.KlusterletSpec) {
			s.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{BootstrapKubeConfigs: operatorv1.BootstrapKubeConfigs{Type: operatorv1.LocalSecrets}}
		}), wantReason: "BootstrapKubeConfigsMissing"},
		{name: "hub connection timeout below the minimum", k: klusterlet(func(s *operatorv1.KlusterletSpec) {
			s.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{BootstrapKubeConfigs: operatorv1.BootstrapKubeConfigs{Type: operatorv1.LocalSecrets,
				LocalSecrets: &operatorv1.LocalSecretsConfig{KubeConfigSecrets: []operatorv1.KubeConfigSecret{{Name: "a"}, {Name: "b"}}, HubConnectionTimeoutSeconds: 60}}}
		}), wantReason: "HubConnectionTimeoutInvalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, unknown, err := AgentValuesFromKlusterlet(tt.k, []byte("kubeconfig"))
			if tt.wantReason != "" {
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Reason != tt.wantReason || !strings.HasPrefix(fe.Error(), "spec.") {
					t.Fatalf("err = %v, want a FieldError with reason %s naming the field", err, tt.wantReason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := AgentValues{ClusterName: "cluster1", Image: "example.com/ocm-controller:v1", AgentNamespace: AgentNamespace,
				BootstrapKubeconfig: []byte("kubeconfig"), Mode: "Default"}
			if tt.want != nil {
				tt.want(&want)
			}
			args := agentArgs(t, got)
			got.KlusterletFlags = nil // checked in args
			if diff := cmpValues(got, want); diff != "" {
				t.Errorf("values differ: %s", diff)
			}
			if strings.Join(unknown, ",") != strings.Join(tt.wantUnknown, ",") {
				t.Errorf("unknown gates %v, want %v", unknown, tt.wantUnknown)
			}
			for _, a := range tt.wantArgs {
				if !strings.Contains(args, a) {
					t.Errorf("agent args %q lack %q", args, a)
				}
			}
		})
	}
}

// cmpValues compares values as rendered YAML would, naming the difference.
func cmpValues(got, want AgentValues) string {
	g, _ := toYaml(got)
	w, _ := toYaml(want)
	if g != w {
		return "got\n" + g + "\nwant\n" + w
	}
	return ""
}

// agentArgs renders v and returns the agent container's args, space-joined.
func agentArgs(t *testing.T, v AgentValues) string {
	t.Helper()
	var objs []*unstructured.Unstructured
	var err error
	if v.Mode == "Hosted" {
		objs, _, err = HostedAgentObjects(v)
	} else {
		objs, err = AgentObjects(v)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if obj.GetKind() == "Deployment" {
			ctrs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			args, _, _ := unstructured.NestedStringSlice(ctrs[0].(map[string]any), "args")
			return strings.Join(args, " ")
		}
	}
	t.Fatal("no agent Deployment rendered")
	return ""
}

func TestKlusterletInstallObjects(t *testing.T) {
	objs, _, err := KlusterletInstallObjects(KlusterletOperatorValues{Image: "example.com/ocm-controller:v1"},
		AgentValues{ClusterName: "cluster1", BootstrapKubeconfig: []byte("kubeconfig")}, false)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, obj := range objs {
		got = append(got, obj.GetKind()+" "+obj.GetName())
		if obj.GetLabels()[apply.PartOfLabelKey] != apply.PartOfLabelValue {
			t.Errorf("%s %s lacks the part-of label", obj.GetKind(), obj.GetName())
		}
	}
	want := "CustomResourceDefinition klusterlets.operator.open-cluster-management.io, Namespace open-cluster-management, ServiceAccount klusterlet, " +
		"ClusterRole open-cluster-management:klusterlet, ClusterRoleBinding open-cluster-management:klusterlet, Deployment klusterlet, " +
		"Namespace open-cluster-management-agent, Secret bootstrap-hub-kubeconfig, Klusterlet klusterlet"
	if strings.Join(got, ", ") != want {
		t.Errorf("objects:\n%s\nwant\n%s", strings.Join(got, ", "), want)
	}
}

// TestKlusterletSchedulingRoundTrip checks that the Pod placement and
// resources of the agent values reach the written Klusterlet's nodePlacement
// and resourceRequirement, from which the operator renders the agent with
// the same values.
func TestKlusterletSchedulingRoundTrip(t *testing.T) {
	for _, s := range []Scheduling{{}, {
		NodeSelector: map[string]string{"node-role.kubernetes.io/control-plane": ""},
		Tolerations:  []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		Resources: &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		},
	}} {
		objs, _, err := KlusterletInstallObjects(KlusterletOperatorValues{},
			AgentValues{ClusterName: "cluster1", BootstrapKubeconfig: []byte("kubeconfig"), Scheduling: s}, false)
		if err != nil {
			t.Fatal(err)
		}
		k := &operatorv1.Klusterlet{}
		for _, obj := range objs {
			if obj.GetKind() == "Klusterlet" {
				if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, k, true); err != nil {
					t.Fatalf("decode the Klusterlet: %v", err)
				}
			}
		}
		v, _, err := AgentValuesFromKlusterlet(k, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !equality.Semantic.DeepEqual(v.Scheduling, s) {
			t.Errorf("scheduling %+v came back from the Klusterlet as %+v", s, v.Scheduling)
		}
	}
}
