package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// fakeObjects is an objectSource over fixed Secrets and ConfigMaps, keyed
// "namespace/name".
type fakeObjects struct {
	secrets, configMaps map[string]map[string][]byte
}

func (f fakeObjects) secretData(_ context.Context, namespace, name string) (map[string][]byte, error) {
	if d, ok := f.secrets[namespace+"/"+name]; ok {
		return d, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func (f fakeObjects) configMapData(_ context.Context, namespace, name string) (map[string][]byte, error) {
	if d, ok := f.configMaps[namespace+"/"+name]; ok {
		return d, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func TestImageName(t *testing.T) {
	tests := []struct{ image, want string }{
		{"ocm-controller", "ocm-controller"},
		{"ocm-controller:v1", "ocm-controller"},
		{"quay.io/x/ocm-controller:v1", "ocm-controller"},
		{"localhost:5000/ocm-controller", "ocm-controller"},
		{"localhost:5000/a/b/ocm-controller:latest@sha256:abcd", "ocm-controller"},
		{"example.com/whoami@sha256:0123", "whoami"},
		{"quay.io/kubectl-ocm/ocm-controller:v0.1.0-3-gabc1234-dirty", "ocm-controller"},
		{"registry.example.com:5000/mirror/ocm-controller:v0.0.0-dev", "ocm-controller"},
	}
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			assert.Equal(t, tt.want, imageName(tt.image))
		})
	}
}

func TestRunnerBinaryFor(t *testing.T) {
	r := New(Options{Binaries: map[string]string{
		"ocm-controller":          "/bin/ocm-controller",
		"quay.io/x/other:ignored": "/bin/other",
	}})
	tests := []struct {
		name, image, want, wantErr string
	}{
		{name: "by name", image: "quay.io/open-cluster-management/ocm-controller:v1", want: "/bin/ocm-controller"},
		{name: "key given as full image", image: "other", want: "/bin/other"},
		{name: "unmapped", image: "example.com/nope:v2", wantErr: `image "example.com/nope:v2" maps to no local binary; known images: ocm-controller, other`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.binaryFor(tt.image)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestExpandVars(t *testing.T) {
	vars := map[string]string{"A": "x", "B": "y"}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"$(A)", "x"},
		{"--a=$(A)-$(B)", "--a=x-y"},
		{"$(UNDEFINED)", "$(UNDEFINED)"},
		{"$$(A)", "$(A)"},
		{"cost $5", "cost $5"},
		{"$(A", "$(A"},
		{"end$", "end$"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, expandVars(tt.in, lookup))
		})
	}
}

func TestResolveEnv(t *testing.T) {
	src := fakeObjects{
		secrets:    map[string]map[string][]byte{"ns/creds": {"password": []byte("s3cret")}},
		configMaps: map[string]map[string][]byte{"ns/settings": {"level": []byte("2"), "mode": []byte("fast")}},
	}
	pod := podFields{namespace: "ns", name: "agent-local", serviceAccount: "agent-sa",
		labels: map[string]string{"app": "agent"}, annotations: map[string]string{"note": "hi"}}
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	secretKey := func(name, key string, optional bool) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: ptr.To(optional)}}
	}
	tests := []struct {
		name    string
		ctr     corev1.Container
		want    []envVar
		wantErr string
	}{
		{
			name: "literal values and expansion",
			ctr: corev1.Container{Env: []corev1.EnvVar{
				{Name: "A", Value: "one"}, {Name: "B", Value: "$(A)-two"}, {Name: "A", Value: "three"},
			}},
			want: []envVar{{"A", "three"}, {"B", "one-two"}},
		},
		{
			name: "field references",
			ctr: corev1.Container{Env: []corev1.EnvVar{
				{Name: "NS", ValueFrom: field("metadata.namespace")},
				{Name: "POD", ValueFrom: field("metadata.name")},
				{Name: "SA", ValueFrom: field("spec.serviceAccountName")},
				{Name: "IP", ValueFrom: field("status.podIP")},
				{Name: "APP", ValueFrom: field("metadata.labels['app']")},
				{Name: "NOTE", ValueFrom: field("metadata.annotations['note']")},
			}},
			want: []envVar{{"NS", "ns"}, {"POD", "agent-local"}, {"SA", "agent-sa"}, {"IP", "127.0.0.1"}, {"APP", "agent"}, {"NOTE", "hi"}},
		},
		{
			name: "secret and configMap keys, envFrom with prefix",
			ctr: corev1.Container{
				EnvFrom: []corev1.EnvFromSource{{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}},
				Env: []corev1.EnvVar{
					{Name: "PASSWORD", ValueFrom: secretKey("creds", "password", false)},
					{Name: "MAYBE", ValueFrom: secretKey("absent", "x", true)},
					{Name: "LEVEL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "level"}}},
				},
			},
			want: []envVar{{"CFG_level", "2"}, {"CFG_mode", "fast"}, {"PASSWORD", "s3cret"}, {"LEVEL", "2"}},
		},
		{
			name:    "missing required secret",
			ctr:     corev1.Container{Env: []corev1.EnvVar{{Name: "P", ValueFrom: secretKey("absent", "x", false)}}},
			wantErr: "env P: Secret ns/absent not found",
		},
		{
			name:    "missing required key",
			ctr:     corev1.Container{Env: []corev1.EnvVar{{Name: "P", ValueFrom: secretKey("creds", "user", false)}}},
			wantErr: `env P: key "user" not found in Secret ns/creds`,
		},
		{
			name:    "unsupported field",
			ctr:     corev1.Container{Env: []corev1.EnvVar{{Name: "U", ValueFrom: field("metadata.uid")}}},
			wantErr: `env U: fieldRef "metadata.uid" is not supported`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveEnv(context.Background(), src, pod, &tt.ctr)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestRewritePaths(t *testing.T) {
	mounts := []pathMapping{
		{from: "/spoke/hub-kubeconfig", to: "/tmp/p/volumes/hub"},
		{from: "/spoke/hub-kubeconfig/nested/", to: "/tmp/p/volumes/nested"},
		{from: "/etc/foo", to: "/tmp/p/volumes/foo"},
	}
	tests := []struct{ in, want string }{
		{"--kubeconfig=/spoke/hub-kubeconfig/kubeconfig", "--kubeconfig=/tmp/p/volumes/hub/kubeconfig"},
		{"/spoke/hub-kubeconfig", "/tmp/p/volumes/hub"},
		{"/spoke/hub-kubeconfig/nested/file", "/tmp/p/volumes/nested/file"},
		{"a=/etc/foo,b=/etc/foo/x:/etc/foo", "a=/tmp/p/volumes/foo,b=/tmp/p/volumes/foo/x:/tmp/p/volumes/foo"},
		{"/etc/foobar", "/etc/foobar"},
		{"/x/etc/foo", "/x/etc/foo"},
		{"no paths", "no paths"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, rewritePaths(tt.in, mounts))
		})
	}
}

func TestRewriteBindAddresses(t *testing.T) {
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{name: "equals form", in: []string{"--metrics-bind-address=:8443", "--x=1"}, want: []string{"--metrics-bind-address=127.0.0.1:40001", "--x=1"}},
		{name: "separate value", in: []string{"--health-probe-bind-address", "0.0.0.0:8000", "hub"}, want: []string{"--health-probe-bind-address", "127.0.0.1:40001", "hub"}},
		{name: "disabled stays", in: []string{"--metrics-bind-address=0", "--health-probe-bind-address", "0"}, want: []string{"--metrics-bind-address=0", "--health-probe-bind-address", "0"}},
		{name: "single dash and two flags", in: []string{"-metrics-bind-address=:1", "--pprof-bind-address=:2"}, want: []string{"-metrics-bind-address=127.0.0.1:40001", "--pprof-bind-address=127.0.0.1:40002"}},
		{name: "other flags untouched", in: []string{"--bind-address=0.0.0.0", "--address-bind=:1"}, want: []string{"--bind-address=0.0.0.0", "--address-bind=:1"}},
		{name: "explicit loopback port stays", in: []string{"--webhook-bind-address=127.0.0.1:9555", "--metrics-bind-address=127.0.0.1:0"}, want: []string{"--webhook-bind-address=127.0.0.1:9555", "--metrics-bind-address=127.0.0.1:40001"}},
		{name: "flag without value at the end", in: []string{"--metrics-bind-address"}, want: []string{"--metrics-bind-address"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := 40000
			got, err := rewriteBindAddresses(tt.in, func() (int, error) { next++; return next, nil })
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestBuildLaunch(t *testing.T) {
	base := launchInput{
		binary: "/bin/ocm-controller", kubeconfig: "/p/kubeconfig", home: "/p/home",
		mounts:   []pathMapping{{from: "/spoke/hub-kubeconfig", to: "/p/volumes/hub"}, {from: inClusterServiceAccountDir, to: "/p/serviceaccount"}},
		freePort: func() (int, error) { return 40000, nil },
	}
	tests := []struct {
		name     string
		ctr      corev1.Container
		env      []envVar
		wantArgs []string
		wantEnv  []string
	}{
		{
			name: "command replaces the entrypoint; args follow",
			ctr: corev1.Container{Command: []string{"/ocm-controller", "agent"},
				Args: []string{"--hub-kubeconfig=/spoke/hub-kubeconfig/kubeconfig", "--cluster-name=$(CLUSTER)", "--metrics-bind-address=:8080"}},
			env:      []envVar{{"CLUSTER", "c1"}},
			wantArgs: []string{"agent", "--hub-kubeconfig=/p/volumes/hub/kubeconfig", "--cluster-name=c1", "--metrics-bind-address=127.0.0.1:40000"},
			wantEnv:  []string{"CLUSTER=c1", "KUBECONFIG=/p/kubeconfig", "HOME=/p/home"},
		},
		{
			name:     "args only; in-cluster env dropped; paths in env rewritten",
			ctr:      corev1.Container{Args: []string{"hub"}},
			env:      []envVar{{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"KUBERNETES_PORT_443_TCP", "x"}, {"TOKEN", inClusterServiceAccountDir + "/token"}},
			wantArgs: []string{"hub"},
			wantEnv:  []string{"TOKEN=/p/serviceaccount/token", "KUBECONFIG=/p/kubeconfig", "HOME=/p/home"},
		},
		{
			name:     "the container's own KUBECONFIG and HOME win",
			ctr:      corev1.Container{},
			env:      []envVar{{"KUBECONFIG", "/spoke/hub-kubeconfig/kubeconfig"}, {"HOME", "/root"}},
			wantArgs: nil,
			wantEnv:  []string{"KUBECONFIG=/p/volumes/hub/kubeconfig", "HOME=/root"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base
			in.container, in.env = &tt.ctr, tt.env
			got, err := buildLaunch(in)
			require.NoError(t, err)
			assert.Equal(t, "/bin/ocm-controller", got.binary)
			assert.Equal(t, tt.wantArgs, got.args)
			assert.Equal(t, tt.wantEnv, got.env)
		})
	}
}

func TestProjectVolume(t *testing.T) {
	data := map[string][]byte{"a": []byte("A"), "b": []byte("B")}
	tests := []struct {
		name        string
		data        map[string][]byte
		exists      bool
		items       []corev1.KeyToPath
		defaultMode *int32
		optional    bool
		want        map[string]volumeFile
		wantErr     string
	}{
		{name: "all keys", data: data, exists: true,
			want: map[string]volumeFile{"a": {[]byte("A"), 0o644}, "b": {[]byte("B"), 0o644}}},
		{name: "items with modes", data: data, exists: true, defaultMode: ptr.To[int32](0o600),
			items: []corev1.KeyToPath{{Key: "a", Path: "dir/a.txt"}, {Key: "b", Path: "b", Mode: ptr.To[int32](0o400)}},
			want:  map[string]volumeFile{"dir/a.txt": {[]byte("A"), 0o600}, "b": {[]byte("B"), 0o400}}},
		{name: "missing optional object", exists: false, optional: true, want: map[string]volumeFile{}},
		{name: "missing required object", exists: false, wantErr: "not found"},
		{name: "missing required key", data: data, exists: true, items: []corev1.KeyToPath{{Key: "c", Path: "c"}}, wantErr: `key "c" not found`},
		{name: "missing optional key", data: data, exists: true, optional: true, items: []corev1.KeyToPath{{Key: "c", Path: "c"}}, want: map[string]volumeFile{}},
		{name: "path escaping the volume", data: data, exists: true, items: []corev1.KeyToPath{{Key: "a", Path: "../a"}}, wantErr: "not a relative path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := projectVolume(tt.data, tt.exists, tt.items, tt.defaultMode, tt.optional)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestWriteVolume(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vol")
	require.NoError(t, writeVolume(dir, map[string]volumeFile{"a": {[]byte("1"), 0o644}, "sub/b": {[]byte("2"), 0o600}}))
	require.NoError(t, writeVolume(dir, map[string]volumeFile{"a": {[]byte("changed"), 0o644}, "c": {[]byte("3"), 0o644}}))
	got := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			got[rel] = string(b)
		}
		return err
	}))
	assert.Equal(t, map[string]string{"a": "changed", "c": "3"}, got)
}

func TestNextBackoff(t *testing.T) {
	var got []time.Duration
	var b time.Duration
	for range 7 {
		b = nextBackoff(b)
		got = append(got, b)
	}
	s := time.Second
	assert.Equal(t, []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s, 30 * s}, got)
}

func TestPodTemplateHash(t *testing.T) {
	a := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Args: []string{"--x=1"}}}}}
	b := *a.DeepCopy()
	assert.Equal(t, podTemplateHash(&a), podTemplateHash(&b))
	b.Spec.Containers[0].Args[0] = "--x=2"
	assert.NotEqual(t, podTemplateHash(&a), podTemplateHash(&b))
}

func TestDeploymentStatus(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	earlier := metav1.NewTime(now.Add(-time.Hour))
	dep := func(replicas int32, conds ...appsv1.DeploymentCondition) *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Generation: 3},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas)},
			Status:     appsv1.DeploymentStatus{Conditions: conds},
		}
	}
	cond := func(typ appsv1.DeploymentConditionType, status corev1.ConditionStatus, reason string) appsv1.DeploymentCondition {
		return appsv1.DeploymentCondition{Type: typ, Status: status, Reason: reason}
	}
	tests := []struct {
		name                          string
		dep                           *appsv1.Deployment
		obs                           runnerObservation
		wantReplicas, wantAvailable   int32
		wantUnavailable               int32
		wantAvailableCond             corev1.ConditionStatus
		wantProgressing               appsv1.DeploymentCondition
		wantProgressingMsg            string
		wantAvailableTransitionKeptAt *metav1.Time
	}{
		{
			name: "running", dep: dep(1), obs: runnerObservation{desired: true, pid: 42, binary: "/bin/x", logPath: "/l/x.log"},
			wantReplicas: 1, wantAvailable: 1, wantAvailableCond: corev1.ConditionTrue,
			wantProgressing:    cond(appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable"),
			wantProgressingMsg: "process 42 runs /bin/x; log /l/x.log",
		},
		{
			name: "unmapped image", dep: dep(1),
			obs:          runnerObservation{desired: true, reason: ReasonImageNotMapped, message: `image "x" maps to no local binary`},
			wantReplicas: 1, wantUnavailable: 1, wantAvailableCond: corev1.ConditionFalse,
			wantProgressing:    cond(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonImageNotMapped),
			wantProgressingMsg: `image "x" maps to no local binary`,
		},
		{
			name: "process failed keeps Available's transition time",
			dep: dep(1, appsv1.DeploymentCondition{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse,
				Reason: "MinimumReplicasUnavailable", Message: "old", LastTransitionTime: earlier, LastUpdateTime: earlier}),
			obs:          runnerObservation{desired: true, reason: ReasonProcessFailed, message: "process exited: exit status 2"},
			wantReplicas: 1, wantUnavailable: 1, wantAvailableCond: corev1.ConditionFalse,
			wantProgressing:               cond(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonProcessFailed),
			wantProgressingMsg:            "exit status 2",
			wantAvailableTransitionKeptAt: &earlier,
		},
		{
			name: "scaled to zero", dep: dep(0), obs: runnerObservation{desired: false},
			wantAvailableCond:  corev1.ConditionTrue,
			wantProgressing:    cond(appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable"),
			wantProgressingMsg: "scaled to 0",
		},
		{
			name: "more replicas than the one process", dep: dep(3), obs: runnerObservation{desired: true, pid: 7},
			wantReplicas: 1, wantAvailable: 1, wantUnavailable: 2, wantAvailableCond: corev1.ConditionTrue,
			wantProgressing:    cond(appsv1.DeploymentProgressing, corev1.ConditionTrue, "NewReplicaSetAvailable"),
			wantProgressingMsg: "process 7 runs",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := deploymentStatus(tt.dep, tt.obs, now)
			assert.Equal(t, int64(3), st.ObservedGeneration)
			assert.Equal(t, tt.wantReplicas, st.Replicas)
			assert.Equal(t, tt.wantReplicas, st.UpdatedReplicas)
			assert.Equal(t, tt.wantAvailable, st.AvailableReplicas)
			assert.Equal(t, tt.wantAvailable, st.ReadyReplicas)
			assert.Equal(t, tt.wantUnavailable, st.UnavailableReplicas)
			conds := map[appsv1.DeploymentConditionType]appsv1.DeploymentCondition{}
			for _, c := range st.Conditions {
				conds[c.Type] = c
			}
			require.Len(t, conds, 2)
			assert.Equal(t, tt.wantAvailableCond, conds[appsv1.DeploymentAvailable].Status)
			p := conds[appsv1.DeploymentProgressing]
			assert.Equal(t, tt.wantProgressing.Status, p.Status)
			assert.Equal(t, tt.wantProgressing.Reason, p.Reason)
			assert.True(t, strings.Contains(p.Message, tt.wantProgressingMsg), "message %q should contain %q", p.Message, tt.wantProgressingMsg)
			if tt.wantAvailableTransitionKeptAt != nil {
				assert.Equal(t, *tt.wantAvailableTransitionKeptAt, conds[appsv1.DeploymentAvailable].LastTransitionTime)
				assert.Equal(t, metav1.NewTime(now), conds[appsv1.DeploymentAvailable].LastUpdateTime)
			}
			again := tt.dep.DeepCopy()
			again.Status = st
			assert.Equal(t, st, deploymentStatus(again, tt.obs, now.Add(time.Minute)), "recomputing must not change the status")
		})
	}
}
