package config

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
)

// tlsConfigMap is the ConfigMap ocm-tls-profile in the operator's
// namespace with data.
func tlsConfigMap(data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: OperatorNamespace, Name: tlsprofile.ConfigMapName}, Data: data}
}

func TestResolveTLSProfile(t *testing.T) {
	cm := tlsConfigMap(map[string]string{tlsprofile.MinTLSVersionKey: "VersionTLS13", tlsprofile.CipherSuitesKey: "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"})
	tests := []struct {
		name    string
		spec    *operatorv1.TLSProfile
		cm      *corev1.ConfigMap
		want    string
		wantErr string
	}{
		{name: "nothing", want: ""},
		{name: "the ConfigMap", cm: cm, want: "--tls-min-version=VersionTLS13 --tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
		{
			name: "the field over the ConfigMap's key", cm: cm, spec: &operatorv1.TLSProfile{CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}},
			want: "--tls-min-version=VersionTLS13 --tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
		},
		{
			name: "an unknown suite", cm: cm, spec: &operatorv1.TLSProfile{CipherSuites: []string{"TLS_NO_SUCH_SUITE"}},
			wantErr: `spec.tlsProfile.cipherSuites of Klusterlet klusterlet: unknown cipher suite "TLS_NO_SUCH_SUITE"`,
		},
		{
			name: "a bad ConfigMap", cm: tlsConfigMap(map[string]string{tlsprofile.MinTLSVersionKey: "1.3"}),
			wantErr: `key minTLSVersion of ConfigMap open-cluster-management/ocm-tls-profile: "1.3" is not a TLS version`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ResolveTLSProfile("Klusterlet", "klusterlet", tt.spec, tt.cm)
			if tt.wantErr != "" {
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Reason != ReasonInvalidTLSProfile || !strings.Contains(fe.Message, tt.wantErr) {
					t.Fatalf("error %v, want a FieldError %s containing %q", err, ReasonInvalidTLSProfile, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(s.Args(), " "); got != tt.want {
				t.Errorf("args %q, want %q", got, tt.want)
			}
		})
	}
}

// podTemplate returns the args of the first container and the annotations
// of the pod template of the Deployment in objs.
func podTemplate(t *testing.T, objs []*unstructured.Unstructured) (string, map[string]string) {
	t.Helper()
	for _, obj := range objs {
		if obj.GetKind() == "Deployment" {
			ctrs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			args, _, _ := unstructured.NestedStringSlice(ctrs[0].(map[string]any), "args")
			ann, _, _ := unstructured.NestedStringMap(obj.Object, "spec", "template", "metadata", "annotations")
			return strings.Join(args, " "), ann
		}
	}
	t.Fatal("no Deployment rendered")
	return "", nil
}

// TestTLSRendered checks that the hub controller and the agent, in Default
// and Hosted mode, get the TLS flags and the hash of the profile the
// operator passes, and neither without one.
func TestTLSRendered(t *testing.T) {
	profile, err := ResolveTLSProfile("Klusterlet", "k", &operatorv1.TLSProfile{MinTLSVersion: "VersionTLS13", CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const flags = "--tls-min-version=VersionTLS13 --tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
	render := map[string]func(TLSValues) ([]*unstructured.Unstructured, error){
		"hub": func(tv TLSValues) ([]*unstructured.Unstructured, error) { return HubObjects(HubValues{TLSValues: tv}) },
		"agent": func(tv TLSValues) ([]*unstructured.Unstructured, error) {
			return AgentObjects(AgentValues{ClusterName: "c1", BootstrapKubeconfig: []byte("k"), TLSValues: tv})
		},
		"hosted agent": func(tv TLSValues) ([]*unstructured.Unstructured, error) {
			objs, _, err := HostedAgentObjects(AgentValues{ClusterName: "c1", BootstrapKubeconfig: []byte("k"), ManagedKubeconfig: []byte("m"), TLSValues: tv})
			return objs, err
		},
	}
	for name, r := range render {
		t.Run(name, func(t *testing.T) {
			objs, err := r(TLSValues{TLS: profile})
			if err != nil {
				t.Fatal(err)
			}
			args, ann := podTemplate(t, objs)
			if !strings.HasSuffix(args, " "+flags) {
				t.Errorf("args %q do not end with %q", args, flags)
			}
			if ann[TLSConfigHashAnnotation] != profile.Hash() {
				t.Errorf("annotations %v, want %s=%s", ann, TLSConfigHashAnnotation, profile.Hash())
			}
			objs, err = r(TLSValues{})
			if err != nil {
				t.Fatal(err)
			}
			if args, ann := podTemplate(t, objs); strings.Contains(args, "--tls-") || ann[TLSConfigHashAnnotation] != "" {
				t.Errorf("without a profile: args %q, annotations %v", args, ann)
			}
		})
	}
}

// TestTLSProfileWritten checks that the TLS profile `hub init` and `join`
// set reaches the ClusterManager and the Klusterlet they write.
func TestTLSProfileWritten(t *testing.T) {
	want := &operatorv1.TLSProfile{MinTLSVersion: "VersionTLS13", CipherSuites: []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"}}
	hub, err := HubOperatorObjects(HubOperatorValues{TLSProfile: want})
	if err != nil {
		t.Fatal(err)
	}
	agent, _, err := KlusterletInstallObjects(KlusterletOperatorValues{}, AgentValues{ClusterName: "c1", BootstrapKubeconfig: []byte("k"), TLSProfile: want}, false)
	if err != nil {
		t.Fatal(err)
	}
	hosted, _, err := KlusterletInstallObjects(KlusterletOperatorValues{}, AgentValues{ClusterName: "c1", BootstrapKubeconfig: []byte("k"), ManagedKubeconfig: []byte("m"), TLSProfile: want}, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind string
		objs []*unstructured.Unstructured
		into runtime.Object
	}{
		{"ClusterManager", hub, &operatorv1.ClusterManager{}},
		{"Klusterlet", agent, &operatorv1.Klusterlet{}},
		{"Klusterlet", hosted, &operatorv1.Klusterlet{}},
	} {
		var got *operatorv1.TLSProfile
		for _, obj := range tc.objs {
			if obj.GetKind() != tc.kind {
				continue
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, tc.into, true); err != nil {
				t.Fatalf("decode the %s: %v", tc.kind, err)
			}
			switch o := tc.into.(type) {
			case *operatorv1.ClusterManager:
				got = o.Spec.TLSProfile
			case *operatorv1.Klusterlet:
				got = o.Spec.TLSProfile
			}
		}
		if got == nil || got.MinTLSVersion != want.MinTLSVersion || strings.Join(got.CipherSuites, ",") != strings.Join(want.CipherSuites, ",") {
			t.Errorf("%s spec.tlsProfile %+v, want %+v", tc.kind, got, want)
		}
	}
}
