package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/upgrade"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// The Deployments of an installation: the operators, and what they render.
const (
	hubOperator     = config.HubOperatorDeployment
	agentOperator   = config.KlusterletOperatorName
	hubController   = config.HubControllerDeployment
	agentDeployment = config.AgentDeployment
)

// testDeclarativeInstall installs the hub and cluster1's agent by applying
// only what `hub init` and `join` print with --dry-run=client (the operators,
// the ClusterManager, the Klusterlet and the bootstrap Secret), with a
// bootstrap token requested directly from the hub and `accept` as the only
// verb. The cluster must join and apply a ManifestWork. Editing the images of
// the ClusterManager and the Klusterlet must then roll the hub controller and
// the agent; `kubectl ocm upgrade` must do the same, showing its progress;
// and an upgrade to an image that cannot run must stop with the cause.
func testDeclarativeInstall(t *testing.T) {
	parallel(t)
	f := startFleet(t, "hub", "cluster1")
	hub, managed := f.env.Cluster("hub").Client(), f.env.Cluster("cluster1").Client()
	// The images the test moves to: the one `make image` built under other
	// names, and the second one, stamped with another version, as v0.2.0.
	ctx := t.Context()
	current := config.ControllerImage(config.DefaultImageRegistry, bins.version)
	for _, name := range []string{"registry.e2e.example/edited/ocm-controller:edited", config.ControllerImage("registry.e2e.example/verb", bins.version)} {
		require.NoError(t, f.env.TagImage(ctx, current, name))
	}
	require.NoError(t, f.env.TagImage(ctx, config.ControllerImage(config.DefaultImageRegistry, bins.upgradeVersion), "quay.io/kubectl-ocm/ocm-controller:v0.2.0"))

	hubYAML := f.ocmStdout(t, "hub", "init", "--dry-run=client", "-o", "yaml")
	assertOperatorManifests(t, hubYAML, hubOperator, "ClusterManager "+operatorv1.ClusterManagerName)
	f.kubectlApply(t, "hub", hubYAML, "--server-side")
	cm := &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: operatorv1.ClusterManagerName}}
	waitResourceAvailable(t, hub, cm)
	waitDeploymentAvailable(t, hub, config.HubNamespace, hubController)

	token, err := f.env.Cluster("hub").ServiceAccountToken(t.Context(), identity.BootstrapNamespace, identity.BootstrapServiceAccount, time.Hour)
	require.NoError(t, err, "a bootstrap token of the hub the operator installed")
	pin := f.ocmStdout(t, "hub", "token", "--context", "hub", "-o", "jsonpath={.caCertHashes[0]}")
	agentYAML := f.ocmStdout(t, "join", "--hub-token", token, "--hub-apiserver", f.env.Cluster("hub").Server(), "--ca-cert-hash", pin,
		"--cluster-name", "cluster1", "--context", "cluster1", "--dry-run=client", "-o", "yaml")
	assertOperatorManifests(t, agentYAML, agentOperator, "Klusterlet "+operatorv1.KlusterletName, "Secret "+operatorv1.BootstrapHubKubeConfigSecret)
	f.kubectlApply(t, "cluster1", agentYAML, "--server-side")
	f.ocm(t, "accept", "--clusters", "cluster1", "--context", "hub", "--wait")
	klusterlet := &operatorv1.Klusterlet{ObjectMeta: metav1.ObjectMeta{Name: operatorv1.KlusterletName}}
	waitResourceAvailable(t, managed, klusterlet)
	waitDeploymentAvailable(t, managed, config.AgentNamespace, agentDeployment)
	waitJoinedAvailable(t, hub, "cluster1")
	applyWork(t, hub, managed, "cluster1")

	t.Run("editing the images rolls the hub controller and the agent", func(t *testing.T) {
		const image = "registry.e2e.example/edited/ocm-controller:edited"
		before := f.instance(t, "hub", config.HubNamespace, hubController)
		patchImages(t, hub, cm, image, "registrationImagePullSpec", "workImagePullSpec", "placementImagePullSpec", "addOnManagerImagePullSpec")
		waitDeploymentImage(t, hub, config.HubNamespace, hubController, image)
		waitResourceAvailable(t, hub, cm)
		assert.NotEqual(t, before.id, f.instance(t, "hub", config.HubNamespace, hubController).id, "the hub controller was not restarted")

		before = f.instance(t, "cluster1", config.AgentNamespace, agentDeployment)
		patchImages(t, managed, klusterlet, image, "imagePullSpec")
		waitDeploymentImage(t, managed, config.AgentNamespace, agentDeployment, image)
		waitResourceAvailable(t, managed, klusterlet)
		assert.NotEqual(t, before.id, f.instance(t, "cluster1", config.AgentNamespace, agentDeployment).id, "the agent was not restarted")
		waitJoinedAvailable(t, hub, "cluster1")
	})

	t.Run("kubectl ocm upgrade rolls them out and shows its progress", func(t *testing.T) {
		out := f.ocm(t, "upgrade", "hub", "--context", "hub", "--image-registry", "registry.e2e.example/verb", "--timeout", "3m")
		assert.Contains(t, out, "Set the image of ClusterManager cluster-manager and of its operator to registry.e2e.example/verb/ocm-controller:")
		assert.Contains(t, out, "Waiting for ClusterManager cluster-manager to run registry.e2e.example/verb/ocm-controller:")
		assert.Contains(t, out, "upgraded from registry.e2e.example/edited/ocm-controller:edited to registry.e2e.example/verb/ocm-controller:")
		require.NoError(t, hub.Get(t.Context(), client.ObjectKeyFromObject(cm), cm))
		assertRunning(t, hub, cm.Spec.RegistrationImagePullSpec, client.ObjectKey{Namespace: config.HubNamespace, Name: hubController},
			client.ObjectKey{Namespace: operatorv1.OperatorNamespace, Name: hubOperator})

		res := f.upgradeKlusterlet(t, "--bundle-version", "v0.2.0", "--hub-context", "hub")
		assert.True(t, res.Changed)
		assert.Equal(t, "quay.io/kubectl-ocm/ocm-controller:v0.2.0", res.Image)
		assert.Equal(t, []string{"registry.e2e.example/edited/ocm-controller:edited"}, res.PreviousImages)
		assert.Subset(t, res.RolledOut, []string{config.AgentNamespace + "/" + agentDeployment, operatorv1.OperatorNamespace + "/" + agentOperator})
		assertRunning(t, managed, res.Image, client.ObjectKey{Namespace: config.AgentNamespace, Name: agentDeployment},
			client.ObjectKey{Namespace: operatorv1.OperatorNamespace, Name: agentOperator})

		res = f.upgradeKlusterlet(t, "--bundle-version", "v0.2.0")
		assert.False(t, res.Changed, "an upgrade to the image that runs changes nothing")
		waitJoinedAvailable(t, hub, "cluster1")
		// That image is the second one make node-images built, stamped with
		// another version: the agent it runs reports that version.
		framework.Eventually(t.Context(), t, 2*time.Minute, "cluster1's agent reporting version "+bins.upgradeVersion, func(ctx context.Context) (bool, error) {
			mc := &clusterv1.ManagedCluster{}
			if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
				return false, err
			}
			for _, c := range mc.Status.ClusterClaims {
				if c.Name == version.AgentVersionClaim {
					return c.Value == bins.upgradeVersion, nil
				}
			}
			return false, nil
		})
		assert.Regexp(t, `(?m)^cluster1\s+True\s+`+regexp.QuoteMeta(bins.upgradeVersion)+`\s`, f.ocm(t, "version", "--context", "hub"))
		require.NoError(t, hub.Create(t.Context(), configMapWork("cluster1", "upgraded", 1, "v0.2.0")))
		waitWorkApplied(t, hub, "cluster1", "upgraded", time.Minute)
		assertAppliedOnce(t, managed, "upgraded", 1)
	})

	t.Run("an upgrade to an image that cannot run stops with the cause", func(t *testing.T) {
		out, err := f.tryOCM(t, "upgrade", "klusterlet", "--context", "cluster1", "--image", "registry.e2e.example/none/no-such-controller:v1", "--timeout", "20s")
		require.Error(t, err, "the upgrade to an image without binary succeeded")
		assert.Contains(t, out, "timed out after 20s waiting for Klusterlet klusterlet to run registry.e2e.example/none/no-such-controller:v1")
		// The kubelet's own reason for the agent's new Pod, and the fix.
		assert.Regexp(t, `(ErrImagePull|ImagePullBackOff).*for image registry.e2e.example/none/no-such-controller:v1`, out)
		assert.Contains(t, out, "--image-registry")

		res := f.upgradeKlusterlet(t, "--bundle-version", "v0.2.0")
		assert.True(t, res.Changed, "the way back")
		waitJoinedAvailable(t, hub, "cluster1")
	})
}

// assertOperatorManifests checks that the manifests of a dry run are the
// operator (a CRD, a Namespace, a ClusterRole and its binding, and the
// ServiceAccount and Deployment named operator) and the objects named in
// resources ("Kind name"), and nothing else: the operator installs every
// other object.
func assertOperatorManifests(t *testing.T, manifests, operator string, resources ...string) {
	t.Helper()
	var got []string
	for _, obj := range decodeManifests(t, manifests) {
		switch obj.GetKind() {
		case "CustomResourceDefinition", "Namespace", "ClusterRole", "ClusterRoleBinding":
			got = append(got, obj.GetKind())
		default:
			got = append(got, obj.GetKind()+" "+obj.GetName())
		}
	}
	want := append([]string{"CustomResourceDefinition", "Namespace", "ClusterRole", "ClusterRoleBinding",
		"ServiceAccount " + operator, "Deployment " + operator}, resources...)
	for _, w := range want {
		assert.Contains(t, got, w, "the manifests lack %s", w)
	}
	for _, g := range got {
		assert.Contains(t, want, g, "the manifests hold %s, which the operator should install", g)
	}
}

// waitResourceAvailable waits until the operator has acted on the current
// generation of obj (a ClusterManager or Klusterlet) and reports it Applied
// and Available.
func waitResourceAvailable(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	what := fmt.Sprintf("%T %s Applied and Available at its generation", obj, obj.GetName())
	framework.Eventually(t.Context(), t, 2*time.Minute, what, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		var observed int64
		var conds []metav1.Condition
		switch o := obj.(type) {
		case *operatorv1.ClusterManager:
			observed, conds = o.Status.ObservedGeneration, o.Status.Conditions
		case *operatorv1.Klusterlet:
			observed, conds = o.Status.ObservedGeneration, o.Status.Conditions
		}
		return observed == obj.GetGeneration() && meta.IsStatusConditionTrue(conds, "Applied") && meta.IsStatusConditionTrue(conds, "Available"), nil
	})
}

// patchImages sets the named image fields of obj's spec to image, as a user
// editing the resource does.
func patchImages(t *testing.T, c client.Client, obj client.Object, image string, fields ...string) {
	t.Helper()
	spec := map[string]string{}
	for _, f := range fields {
		spec[f] = image
	}
	data, err := json.Marshal(map[string]any{"spec": spec})
	require.NoError(t, err)
	require.NoError(t, c.Patch(t.Context(), obj, client.RawPatch(types.MergePatchType, data)))
}

// waitDeploymentImage waits until Deployment namespace/name runs image (any
// image when empty), rolled out and available.
func waitDeploymentImage(t *testing.T, c client.Client, namespace, name, image string) {
	t.Helper()
	framework.Eventually(t.Context(), t, 2*time.Minute, fmt.Sprintf("Deployment %s/%s available at image %q", namespace, name, image), func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, d); err != nil {
			return false, err
		}
		if (image != "" && d.Spec.Template.Spec.Containers[0].Image != image) || d.Status.ObservedGeneration < d.Generation ||
			d.Status.UpdatedReplicas != d.Status.Replicas {
			return false, nil // not rolled out, or old replicas still run
		}
		for _, cond := range d.Status.Conditions {
			if cond.Type == appsv1.DeploymentAvailable && cond.Status == corev1.ConditionTrue {
				return d.Status.AvailableReplicas > 0, nil
			}
		}
		return false, nil
	})
}

// assertRunning checks that each Deployment of keys runs image and is
// available.
func assertRunning(t *testing.T, c client.Client, image string, keys ...client.ObjectKey) {
	t.Helper()
	for _, key := range keys {
		d := &appsv1.Deployment{}
		require.NoError(t, c.Get(t.Context(), key, d))
		assert.Equal(t, image, d.Spec.Template.Spec.Containers[0].Image, "the image of Deployment %s", key)
		assert.Positive(t, d.Status.AvailableReplicas, "Deployment %s available", key)
	}
}

// upgradeKlusterlet runs `kubectl ocm upgrade klusterlet` on cluster1 with
// args and -o json, and returns what it reports.
func (f *fleet) upgradeKlusterlet(t *testing.T, args ...string) upgrade.Result {
	t.Helper()
	out := f.ocmStdout(t, append([]string{"upgrade", "klusterlet", "--context", "cluster1", "--timeout", "3m", "-o", "json"}, args...)...)
	var res upgrade.Result
	require.NoError(t, json.Unmarshal([]byte(out), &res), "the JSON of upgrade klusterlet: %s", out)
	return res
}
