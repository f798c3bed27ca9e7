package upgrade

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

const (
	oldImage = "quay.io/kubectl-ocm/ocm-controller:v0.1.0"
	newImage = "quay.io/kubectl-ocm/ocm-controller:v0.2.0"
)

// TestValidate checks the flags and the image chosen, as the command does,
// through Complete and Validate.
func TestValidate(t *testing.T) {
	tests := []struct {
		name      string
		set       func(o *Options)
		wantImage string
		wantErr   string
	}{
		{"defaults: this version in the default registry", func(*Options) {}, config.DefaultImage(), ""},
		{"bundle version", func(o *Options) { o.BundleVersion = "v0.2.0" }, newImage, ""},
		{"bundle version from a mirror", func(o *Options) { o.BundleVersion = "v0.2.0"; o.ImageRegistry = "mirror.example.com/ocm/" },
			"mirror.example.com/ocm/ocm-controller:v0.2.0", ""},
		{"whole image", func(o *Options) { o.Image = "example.com/other:v1" }, "example.com/other:v1", ""},
		{"image and bundle version", func(o *Options) { o.Image = newImage; o.BundleVersion = "v0.2.0" }, "", "give one of them"},
		{"bundle version no release", func(o *Options) { o.BundleVersion = "latest" }, "", `--bundle-version "latest" is not a release version`},
		{"bad registry", func(o *Options) { o.ImageRegistry = "Bad Registry" }, "", "--image-registry"},
		{"bad output", func(o *Options) { o.Output = "wide" }, "", `--output "wide" is not supported`},
		{"no timeout", func(o *Options) { o.Timeout = 0 }, "", "--timeout"},
		{"no timeout needed without --wait", func(o *Options) { o.Timeout = 0; o.Wait = false }, config.DefaultImage(), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions(TargetHub, nil, genericiooptions.NewTestIOStreamsDiscard())
			tt.set(o)
			err := cli.CompleteValidate(o, nil, nil)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantImage, o.Image)
		})
	}
}

func TestImagePatch(t *testing.T) {
	cm := func(img string) *operatorv1.ClusterManager {
		return &operatorv1.ClusterManager{Spec: operatorv1.ClusterManagerSpec{
			RegistrationImagePullSpec: img, WorkImagePullSpec: img, PlacementImagePullSpec: img, AddOnManagerImagePullSpec: newImage,
		}}
	}
	k := func(spec operatorv1.KlusterletSpec) *operatorv1.Klusterlet { return &operatorv1.Klusterlet{Spec: spec} }
	tests := []struct {
		name string
		obj  client.Object
		want string
	}{
		{"hub: every image field that differs", cm(oldImage),
			`{"spec":{"placementImagePullSpec":"` + newImage + `","registrationImagePullSpec":"` + newImage + `","workImagePullSpec":"` + newImage + `"}}`},
		{"hub: at the image already", cm(newImage), ""},
		{"klusterlet: imagePullSpec only", k(operatorv1.KlusterletSpec{ImagePullSpec: oldImage, ClusterName: "c1"}),
			`{"spec":{"imagePullSpec":"` + newImage + `"}}`},
		{"klusterlet: the per-agent images when set", k(operatorv1.KlusterletSpec{ImagePullSpec: oldImage, WorkImagePullSpec: oldImage}),
			`{"spec":{"imagePullSpec":"` + newImage + `","workImagePullSpec":"` + newImage + `"}}`},
		{"klusterlet: at the image already", k(operatorv1.KlusterletSpec{ImagePullSpec: newImage}), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := imagePatch(tt.obj, newImage)
			require.NoError(t, err)
			if tt.want == "" {
				assert.Nil(t, got)
				return
			}
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}

func TestOperatorPatch(t *testing.T) {
	tests := []struct {
		name       string
		containers []corev1.Container
		want       string
	}{
		{"moves the ocm-controller container", []corev1.Container{{Name: "operator", Image: oldImage}, {Name: "proxy", Image: "example.com/proxy:v1"}},
			`{"spec":{"template":{"spec":{"containers":[{"name":"operator","image":"` + newImage + `"}]}}}}`},
		{"at the image already", []corev1.Container{{Name: "operator", Image: newImage}}, ""},
		{"no ocm-controller container", []corev1.Container{{Name: "other", Image: "example.com/other:v1"}}, ""},
		{"back from an image of another name the resource named", []corev1.Container{{Name: "operator", Image: "example.com/renamed:v1"}},
			`{"spec":{"template":{"spec":{"containers":[{"name":"operator","image":"` + newImage + `"}]}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := operatorPatch(deployment("op", newImage, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers = tt.containers }), newImage, []string{"example.com/renamed:v1"}, false)
			require.NoError(t, err)
			if tt.want == "" {
				assert.Nil(t, got)
				return
			}
			assert.JSONEq(t, tt.want, string(got))
		})
	}
	got, err := operatorPatch(nil, newImage, nil, false)
	assert.NoError(t, err)
	assert.Nil(t, got, "no operator Deployment")

	// --image-pull-credentials: an operator without the reference gets it,
	// next to any other, with or without a new image.
	ref := `"imagePullSecrets":[{"name":"open-cluster-management-image-pull-credentials"}]`
	at := deployment("op", newImage, func(d *appsv1.Deployment) {
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "operator", Image: newImage}}
		d.Spec.Template.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "mine"}}
	})
	got, err = operatorPatch(at, newImage, nil, true)
	require.NoError(t, err)
	assert.JSONEq(t, `{"spec":{"template":{"spec":{`+ref+`}}}}`, string(got))
	got, err = operatorPatch(at, "example.com/ocm-controller:v9", nil, true)
	require.NoError(t, err)
	assert.JSONEq(t, `{"spec":{"template":{"spec":{"containers":[{"name":"operator","image":"example.com/ocm-controller:v9"}],`+ref+`}}}}`, string(got))
	at.Spec.Template.Spec.ImagePullSecrets = append(at.Spec.Template.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: pullsecret.Name})
	got, err = operatorPatch(at, newImage, nil, true)
	require.NoError(t, err)
	assert.Nil(t, got, "the reference is there already")
}

// deployment returns Deployment open-cluster-management-hub/name running
// image, rolled out and available, changed by each of mutate.
func deployment(name, image string, mutate ...func(*appsv1.Deployment)) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "open-cluster-management-hub", Name: name, Generation: 2},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "controller", Image: image}},
		}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1, Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
		}},
	}
	for _, m := range mutate {
		m(d)
	}
	return d
}

// unavailable makes a Deployment's process not run, with the cause.
func unavailable(reason, msg string) func(*appsv1.Deployment) {
	return func(d *appsv1.Deployment) {
		d.Status.AvailableReplicas = 0
		d.Status.Conditions = []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable", Message: "Deployment does not have minimum availability."},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: reason, Message: msg},
		}
	}
}

func TestJudge(t *testing.T) {
	listed := resourceStatus{observedGeneration: 3, generations: []operatorv1.GenerationStatus{
		{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "open-cluster-management-hub", Name: "ocm-hub-controller", LastGeneration: 2},
	}, related: []operatorv1.RelatedResourceMeta{
		{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "open-cluster-management-hub", Name: "ocm-hub-controller"},
		{Group: "", Version: "v1", Resource: "serviceaccounts", Namespace: "open-cluster-management-hub", Name: "ocm-hub-controller"},
	}, conditions: []metav1.Condition{
		{Type: "Applied", Status: metav1.ConditionTrue, ObservedGeneration: 3},
		{Type: "Available", Status: metav1.ConditionTrue, ObservedGeneration: 3},
	}}
	with := func(m func(*resourceStatus)) resourceStatus {
		st := listed
		st.conditions = append([]metav1.Condition(nil), listed.conditions...)
		m(&st)
		return st
	}
	tests := []struct {
		name      string
		status    resourceStatus
		deps      []*appsv1.Deployment
		missing   []client.ObjectKey
		wantDone  bool
		wantState string
		wantErr   string
	}{
		{"rolled out", listed, []*appsv1.Deployment{deployment("ocm-hub-controller", newImage)}, nil, true, "", ""},
		{"the operator has not acted yet", with(func(s *resourceStatus) { s.observedGeneration = 2 }),
			[]*appsv1.Deployment{deployment("ocm-hub-controller", oldImage)}, nil, false,
			"the operator has not acted on generation 3 yet (observed 2); Deployment open-cluster-management-hub/ocm-hub-controller does not run the new image yet", ""},
		{"the rollout is not observed", listed, []*appsv1.Deployment{deployment("ocm-hub-controller", newImage, func(d *appsv1.Deployment) { d.Generation = 3 })},
			nil, false, "Deployment open-cluster-management-hub/ocm-hub-controller: the deployment controller has not observed generation 3 yet (observed 2)", ""},
		{"old replicas remain", listed, []*appsv1.Deployment{deployment("ocm-hub-controller", newImage, func(d *appsv1.Deployment) { d.Status.Replicas = 2 })},
			nil, false, "Deployment open-cluster-management-hub/ocm-hub-controller: 1 old replicas pending termination", ""},
		{"not available, with the cause", listed, []*appsv1.Deployment{deployment("ocm-hub-controller", newImage,
			unavailable("ImageNotMapped", `image "x" maps to no local binary`))}, nil, false,
			`Deployment open-cluster-management-hub/ocm-hub-controller: 0 of 1 updated replicas available (MinimumReplicasUnavailable: Deployment does not have minimum availability.; ImageNotMapped: image "x" maps to no local binary)`, ""},
		{"rollout past its deadline", listed, []*appsv1.Deployment{deployment("ocm-hub-controller", newImage,
			unavailable(deploystatus.ReasonProgressDeadlineExceeded, `ReplicaSet "x" has timed out progressing.`))}, nil, false, "",
			`Deployment open-cluster-management-hub/ocm-hub-controller did not roll out: the rollout exceeded its progress deadline with 0 of 1 updated replicas available (MinimumReplicasUnavailable: Deployment does not have minimum availability.; ProgressDeadlineExceeded: ReplicaSet "x" has timed out progressing.)`},
		{"rejected by the operator", with(func(s *resourceStatus) {
			s.conditions[0] = metav1.Condition{Type: "Applied", Status: metav1.ConditionFalse, Reason: "ImagesDiffer", Message: "give one image", ObservedGeneration: 3}
		}), nil, nil, false, "", "ClusterManager cluster-manager was not applied: ImagesDiffer: give one image"},
		{"an Applied=False of an earlier generation is no rejection", with(func(s *resourceStatus) {
			s.observedGeneration = 2
			s.conditions[0] = metav1.Condition{Type: "Applied", Status: metav1.ConditionFalse, Reason: "ImagesDiffer", ObservedGeneration: 2}
		}), nil, nil, false, "not acted on generation 3", ""},
		{"not Available", with(func(s *resourceStatus) {
			s.conditions[1] = metav1.Condition{Type: "Available", Status: metav1.ConditionFalse, Reason: "UnavailablePods", Message: "0/1 available", ObservedGeneration: 3}
		}), []*appsv1.Deployment{deployment("ocm-hub-controller", newImage)}, nil, false, "Available=False (UnavailablePods): 0/1 available", ""},
		{"Available of an earlier generation", with(func(s *resourceStatus) { s.conditions[1].ObservedGeneration = 2 }),
			[]*appsv1.Deployment{deployment("ocm-hub-controller", newImage)}, nil, false, "Available is not reported yet", ""},
		{"a listed Deployment is missing", listed, nil, []client.ObjectKey{{Namespace: "ns", Name: "gone"}}, false, "Deployment ns/gone is missing", ""},
		{"no Deployment listed", with(func(s *resourceStatus) { s.generations, s.related = nil, nil }), nil, nil, false, "lists no Deployment yet", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done, state, err := judge(observation{kind: "ClusterManager", name: "cluster-manager", generation: 3, image: newImage,
				status: tt.status, deployments: tt.deps, missing: tt.missing})
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantDone, done)
			assert.Contains(t, state, tt.wantState)
		})
	}
}

func TestListedDeployments(t *testing.T) {
	st := statusOf(&operatorv1.Klusterlet{Status: operatorv1.KlusterletStatus{
		Generations: []operatorv1.GenerationStatus{{Group: "apps", Resource: "deployments", Namespace: "a", Name: "agent"}},
		RelatedResources: []operatorv1.RelatedResourceMeta{
			{Group: "apps", Resource: "deployments", Namespace: "a", Name: "agent"},
			{Group: "apps", Resource: "deployments", Namespace: "a", Name: "addon"},
			{Group: "", Resource: "secrets", Namespace: "a", Name: "agent"},
		},
	}})
	assert.Equal(t, []client.ObjectKey{{Namespace: "a", Name: "addon"}, {Namespace: "a", Name: "agent"}}, st.listedDeployments())
}

func TestRun(t *testing.T) {
	agentAt := func(name, v string) *clusterv1.ManagedCluster {
		return &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: clusterv1.ManagedClusterStatus{ClusterClaims: []clusterv1.ManagedClusterClaim{version.AgentClaim(v)}}}
	}
	hub := func(img string) *operatorv1.ClusterManager {
		return &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: "cluster-manager"}, Spec: operatorv1.ClusterManagerSpec{
			RegistrationImagePullSpec: img, WorkImagePullSpec: img, PlacementImagePullSpec: img, AddOnManagerImagePullSpec: img,
			DeployOption: operatorv1.ClusterManagerDeployOption{Mode: operatorv1.InstallModeDefault},
		}}
	}
	operator := deployment(config.HubOperatorDeployment, oldImage, func(d *appsv1.Deployment) { d.Namespace = operatorv1.OperatorNamespace })
	tests := []struct {
		name      string
		objs      []client.Object
		force     bool
		bundle    string
		dryRun    string
		wantErr   string
		wantOut   string
		wantImage string
	}{
		{"upgrades the ClusterManager and its operator", []client.Object{hub(oldImage), operator, agentAt("c1", "v0.1.0")}, false, "v0.2.0", "", "",
			"ClusterManager cluster-manager set to " + newImage + " (was " + oldImage + ")", newImage},
		{"nothing to do", []client.Object{hub(newImage)}, false, "v0.2.0", "", "", "already runs " + newImage + ": nothing to do", newImage},
		{"refuses to leave an agent too old", []client.Object{hub(oldImage), agentAt("c1", "v0.1.0")}, false, "v0.4.0", "",
			"the agent of managed cluster c1, at v0.1.0, would be 3 minor versions older than the hub controller v0.4.0", "", oldImage},
		{"refuses to go below an agent", []client.Object{hub(newImage), agentAt("c1", "v0.2.0")}, false, "v0.1.0", "",
			"would be newer than the hub controller v0.1.0", "", newImage},
		{"--force upgrades anyway", []client.Object{hub(oldImage), agentAt("c1", "v0.1.0")}, true, "v0.4.0", "", "",
			"set to quay.io/kubectl-ocm/ocm-controller:v0.4.0", "quay.io/kubectl-ocm/ocm-controller:v0.4.0"},
		{"dry run: says what would change, changes nothing", []client.Object{hub(oldImage), operator, agentAt("c1", "v0.1.0")}, false, "v0.2.0", "client", "",
			"ClusterManager cluster-manager would be set to " + newImage + " (was " + oldImage + ") (dry run)", oldImage},
		{"dry run checks the skew too", []client.Object{hub(oldImage), agentAt("c1", "v0.1.0")}, false, "v0.4.0", "client",
			"3 minor versions older than the hub controller v0.4.0", "", oldImage},
		{"no hub", nil, false, "v0.2.0", "", "https://hub has no ClusterManager cluster-manager: install the hub", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(tt.objs...).Build()
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			o := NewOptions(TargetHub, nil, streams)
			o.BundleVersion, o.Force, o.Wait = tt.bundle, tt.force, false
			if tt.dryRun != "" {
				o.DryRun, o.Wait = tt.dryRun, true // a dry run waits for nothing
			}
			require.NoError(t, cli.CompleteValidate(o, nil, nil))
			err := o.run(context.Background(), c, deploystatus.NewInspector(c, nil), "https://hub")
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
			} else {
				require.NoError(t, err)
				assert.Contains(t, out.String(), tt.wantOut)
			}
			if tt.wantImage == "" {
				return
			}
			cm := &operatorv1.ClusterManager{}
			require.NoError(t, c.Get(context.Background(), client.ObjectKey{Name: "cluster-manager"}, cm))
			assert.Equal(t, []string{tt.wantImage}, previousImages(cm))
			assert.Equal(t, operatorv1.InstallModeDefault, cm.Spec.DeployOption.Mode, "a field the upgrade does not set")
			op := &appsv1.Deployment{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(operator), op); err == nil && !strings.Contains(tt.name, "refuses") && tt.dryRun == "" {
				assert.Equal(t, tt.wantImage, op.Spec.Template.Spec.Containers[0].Image, "the operator's image")
			} else if err == nil && tt.dryRun != "" {
				assert.Equal(t, oldImage, op.Spec.Template.Spec.Containers[0].Image, "the operator's image after a dry run")
			}
		})
	}
}

func TestWaitStopsWithTheCause(t *testing.T) {
	cm := &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: "cluster-manager", Generation: 3},
		Status: operatorv1.ClusterManagerStatus{ObservedGeneration: 3, Conditions: []metav1.Condition{
			{Type: "Applied", Status: metav1.ConditionFalse, Reason: "ImagesDiffer", Message: "the four image fields must name one image", ObservedGeneration: 3},
		}}}
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(cm).Build()
	o := NewOptions(TargetHub, nil, genericiooptions.NewTestIOStreamsDiscard())
	o.Image, o.Timeout = newImage, time.Minute
	_, err := o.waitRollout(context.Background(), c, deploystatus.NewInspector(c, nil), cm, "ClusterManager", nil)
	assert.ErrorContains(t, err, "ClusterManager cluster-manager was not applied: ImagesDiffer: the four image fields must name one image")
}
