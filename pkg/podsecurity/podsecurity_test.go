package podsecurity

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// restrictedPod is a Pod spec that meets restricted; each case breaks it.
func restrictedPod() *corev1.PodSpec {
	return &corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot:   ptr.To(true),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Containers: []corev1.Container{{
			Name: "agent", Image: "agent",
			SecurityContext: &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr.To(false),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			},
		}},
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*corev1.PodSpec)
		reasons []string
		detail  string
	}{
		{name: "restricted pod", edit: func(*corev1.PodSpec) {}},
		{name: "seccomp on the container instead of the pod", edit: func(s *corev1.PodSpec) {
			s.SecurityContext.SeccompProfile = nil
			s.Containers[0].SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
		}},
		{name: "no seccomp profile", edit: func(s *corev1.PodSpec) { s.SecurityContext.SeccompProfile = nil },
			reasons: []string{"seccompProfile"}, detail: `container "agent" must set securityContext.seccompProfile.type`},
		{name: "privilege escalation allowed", edit: func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil },
			reasons: []string{"allowPrivilegeEscalation != false"}, detail: "securityContext.allowPrivilegeEscalation=false"},
		{name: "capabilities kept", edit: func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.Capabilities = nil },
			reasons: []string{"unrestricted capabilities"}, detail: `securityContext.capabilities.drop=["ALL"]`},
		{name: "may run as root", edit: func(s *corev1.PodSpec) { s.SecurityContext.RunAsNonRoot = nil },
			reasons: []string{"runAsNonRoot != true"}, detail: "runAsNonRoot=true"},
		{name: "host network and a hostPath volume", edit: func(s *corev1.PodSpec) {
			s.HostNetwork = true
			s.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}, reasons: []string{"host namespaces", "restricted volume types"}, detail: `volume "root" uses restricted volume type "hostPath"`},
		{name: "an init container breaks it too", edit: func(s *corev1.PodSpec) {
			s.InitContainers = []corev1.Container{{Name: "init", Image: "init"}}
		}, reasons: []string{"allowPrivilegeEscalation != false", "unrestricted capabilities"}, detail: `container "init"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := restrictedPod()
			tt.edit(spec)
			failures := Check(nil, spec)
			var reasons []string
			for _, f := range failures {
				reasons = append(reasons, f.Reason)
			}
			assert.Equal(t, tt.reasons, reasons)
			if tt.detail != "" {
				assert.Contains(t, Describe(failures), tt.detail)
				assert.True(t, strings.HasPrefix(Describe(failures), `violates PodSecurity "restricted:latest": `), Describe(failures))
			}
		})
	}
}

func TestLabels(t *testing.T) {
	want := map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest",
		"pod-security.kubernetes.io/audit": "restricted", "pod-security.kubernetes.io/audit-version": "latest",
		"pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/warn-version": "latest",
	}
	assert.Equal(t, want, Labels())
	assert.True(t, EnforcesRestricted(Labels()))

	own := map[string]string{"app.kubernetes.io/part-of": "kubectl-ocm", "pod-security.kubernetes.io/enforce": "privileged"}
	got := WithLabels(own)
	assert.Equal(t, "privileged", own["pod-security.kubernetes.io/enforce"], "WithLabels changed its argument")
	assert.Equal(t, "kubectl-ocm", got["app.kubernetes.io/part-of"])
	assert.True(t, EnforcesRestricted(got))
	assert.False(t, EnforcesRestricted(own))
	assert.False(t, EnforcesRestricted(nil))
}

func TestSharedLabels(t *testing.T) {
	warn := map[string]string{
		"pod-security.kubernetes.io/audit": "restricted", "pod-security.kubernetes.io/audit-version": "latest",
		"pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/warn-version": "latest",
	}
	assert.Equal(t, warn, SharedLabels(false))
	assert.False(t, EnforcesRestricted(SharedLabels(false)))
	assert.Equal(t, Labels(), SharedLabels(true))
	assert.True(t, HasLabels(SharedLabels(false)))
	assert.False(t, HasLabels(map[string]string{"app.kubernetes.io/part-of": "kubectl-ocm"}))

	mixed := WithLabels(map[string]string{"a": "b"})
	assert.Equal(t, Labels(), LabelsOf(mixed))
	assert.Equal(t, "b", mixed["a"], "LabelsOf changed its argument")

	assert.Equal(t, "restricted", EnforcedLevel(Labels()))
	assert.Equal(t, "baseline", EnforcedLevel(map[string]string{EnforceLabel: "baseline"}))
	assert.Equal(t, "privileged", EnforcedLevel(SharedLabels(false)), "no enforce label is Pod Security Admission's default")
}

// namespace returns a Namespace object with these annotations and the
// managed fields of one field manager that set labels.
func namespace(annotations map[string]string, manager string, labels ...string) *metav1.ObjectMeta {
	ns := &metav1.ObjectMeta{Name: "open-cluster-management", Annotations: annotations}
	if manager != "" {
		fields := map[string]any{}
		for _, l := range labels {
			fields["f:"+l] = map[string]any{}
		}
		raw, _ := json.Marshal(map[string]any{"f:metadata": map[string]any{"f:labels": fields}})
		ns.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationApply,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(raw))}}
	}
	return ns
}

func TestOwns(t *testing.T) {
	hub := map[string]string{SetByAnnotation: SetByHub}
	klusterlet := map[string]string{SetByAnnotation: SetByKlusterlet}
	tests := []struct {
		name          string
		existing      *metav1.ObjectMeta
		desired       map[string]string
		legacyManager string
		want          bool
	}{
		{name: "created by the same part", existing: namespace(hub, ""), desired: hub, want: true},
		{name: "created by the hub, applied by the Klusterlet's install (a cluster that is both)", existing: namespace(hub, ""), desired: klusterlet},
		{name: "created by someone else", existing: namespace(nil, ""), desired: hub},
		{name: "created by someone else who wrote the annotation's value of another part", existing: namespace(map[string]string{SetByAnnotation: "admin"}, ""), desired: hub},
		{name: "labeled by this field manager before the annotation was recorded",
			existing: namespace(nil, "kubectl-ocm", "pod-security.kubernetes.io/enforce", "app.kubernetes.io/part-of"), desired: hub, legacyManager: "kubectl-ocm", want: true},
		{name: "labeled by another field manager", existing: namespace(nil, "admin", "pod-security.kubernetes.io/enforce"), desired: hub, legacyManager: "kubectl-ocm"},
		{name: "other labels by this field manager", existing: namespace(nil, "kubectl-ocm", "app.kubernetes.io/part-of"), desired: hub, legacyManager: "kubectl-ocm"},
		{name: "a recorded owner is not overruled by the managed fields",
			existing: namespace(klusterlet, "kubectl-ocm", "pod-security.kubernetes.io/enforce"), desired: hub, legacyManager: "kubectl-ocm"},
		{name: "a namespace not the product's own (no annotation) is applied as it is", existing: namespace(nil, ""), desired: nil, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			legacy := tt.legacyManager != "" && SetLabelsAs(tt.existing, tt.legacyManager)
			assert.Equal(t, tt.want, Owns(tt.existing, &metav1.ObjectMeta{Annotations: tt.desired}, legacy))
		})
	}
}

func TestPodTemplate(t *testing.T) {
	container := map[string]any{"name": "c", "image": "i"}
	podSpec := map[string]any{"containers": []any{container}}
	template := map[string]any{"metadata": map[string]any{"labels": map[string]any{"a": "b"}}, "spec": podSpec}
	tests := []struct {
		name   string
		obj    map[string]any
		ok     bool
		errMsg string
	}{
		{name: "Deployment", ok: true, obj: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"template": template}}},
		{name: "DaemonSet", ok: true, obj: map[string]any{"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": map[string]any{"template": template}}},
		{name: "Job", ok: true, obj: map[string]any{"apiVersion": "batch/v1", "kind": "Job", "spec": map[string]any{"template": template}}},
		{name: "CronJob", ok: true, obj: map[string]any{"apiVersion": "batch/v1", "kind": "CronJob",
			"spec": map[string]any{"jobTemplate": map[string]any{"spec": map[string]any{"template": template}}}}},
		{name: "Pod", ok: true, obj: map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": template["metadata"], "spec": podSpec}},
		{name: "ConfigMap", obj: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}},
		{name: "a Deployment of another group", obj: map[string]any{"apiVersion": "example.com/v1", "kind": "Deployment"}},
		{name: "template not an object", ok: true, errMsg: "spec.template is not an object",
			obj: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "d"}, "spec": map[string]any{"template": "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, ok, err := PodTemplate(&unstructured.Unstructured{Object: tt.obj})
			assert.Equal(t, tt.ok, ok)
			if tt.errMsg != "" {
				require.ErrorContains(t, err, tt.errMsg)
				return
			}
			require.NoError(t, err)
			if !ok {
				assert.Nil(t, tmpl)
				return
			}
			require.Len(t, tmpl.Spec.Containers, 1)
			assert.Equal(t, "c", tmpl.Spec.Containers[0].Name)
			assert.Equal(t, "b", tmpl.Labels["a"])
		})
	}
}
