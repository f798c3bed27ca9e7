package addonexample

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/runner"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

const (
	// copyLabel is the label of the agent's copies.
	copyLabel = "helloworld.addon.kubectl-ocm.io/source-namespace"
	// leaseDuration is the agent's lease duration in the test: renewed every second.
	leaseDuration = "4s"
)

// fleet is the hub and cluster1 of the test, with the component runner
// running cluster1's Deployments.
type fleet struct {
	hub, spoke   *framework.Cluster
	hubC, spokeC client.Client
	runner       *runner.Runner
	template     *addonv1alpha1.AddOnTemplate
}

// TestAgent enables the example on cluster1 by hand, as the add-on manager
// and the managed cluster's agents would, and checks what the agent does.
func TestAgent(t *testing.T) {
	ctx, env := hubtest.Start(t, 5*time.Minute, "cluster1")
	f := &fleet{hub: env.Cluster("hub"), spoke: env.Cluster("cluster1")}
	f.hubC, f.spokeC = f.hub.Client(), f.spoke.Client()
	f.runner = runner.StartForTest(t, map[string]string{"helloworld-addon": framework.BuildForTest(t, "./examples/addons/helloworld/agent", "helloworld-addon")}, f.spoke)

	// The hub: what `hub init` installs, the example as its README applies
	// it, and the namespaces of two clusters.
	require.NoError(t, apply.Apply(ctx, f.hubC, loadExample(t).objects, apply.Options{}))
	for _, ns := range []string{"cluster1", "cluster2"} {
		require.NoError(t, f.hubC.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	f.template = &addonv1alpha1.AddOnTemplate{}
	require.NoError(t, f.hubC.Get(ctx, client.ObjectKey{Name: "helloworld-0.1.0"}, f.template))

	const ns = addonv1alpha1.DefaultAddonInstallNamespace
	// A ConfigMap of the install namespace that the agent did not make.
	f.deploy(ctx, t, "cluster1", ns)
	require.NoError(t, f.spokeC.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "local", Namespace: ns}, Data: map[string]string{"owner": "someone else"}}))

	t.Run("runs as deployed", func(t *testing.T) {
		framework.Eventually(ctx, t, pollTimeout, "the agent Deployment Available", func(ctx context.Context) (bool, error) {
			dep := &appsv1.Deployment{}
			err := f.spokeC.Get(ctx, client.ObjectKey{Namespace: ns, Name: agentDeployment}, dep)
			return err == nil && dep.Status.AvailableReplicas == 1, err
		})
	})

	t.Run("copies a ConfigMap of the cluster's namespace", func(t *testing.T) {
		source := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "helloworld", Namespace: "cluster1"}, Data: map[string]string{"value": "helloworld"}}
		require.NoError(t, f.hubC.Create(ctx, source))
		cm := f.waitCopy(ctx, t, ns, "helloworld", func(cm *corev1.ConfigMap) bool { return cm.Data["value"] == "helloworld" })
		assert.Equal(t, "cluster1", cm.Labels[copyLabel])
	})

	t.Run("propagates an update", func(t *testing.T) {
		source := &corev1.ConfigMap{}
		require.NoError(t, f.hubC.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: "helloworld"}, source))
		source.Data = map[string]string{"value": "hello again", "added": "yes"}
		require.NoError(t, f.hubC.Update(ctx, source))
		f.waitCopy(ctx, t, ns, "helloworld", func(cm *corev1.ConfigMap) bool {
			return cm.Data["value"] == "hello again" && cm.Data["added"] == "yes"
		})
	})

	t.Run("leaves ConfigMaps it did not make alone", func(t *testing.T) {
		source := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "local", Namespace: "cluster1"}, Data: map[string]string{"owner": "the hub"}}
		require.NoError(t, f.hubC.Create(ctx, source))
		f.waitLog(ctx, t, ns, "is not a copy; left alone", `configMap="local"`)
		local := &corev1.ConfigMap{}
		require.NoError(t, f.spokeC.Get(ctx, client.ObjectKey{Namespace: ns, Name: "local"}, local))
		assert.Equal(t, map[string]string{"owner": "someone else"}, local.Data)
		require.NoError(t, f.hubC.Delete(ctx, source))
	})

	t.Run("propagates a deletion", func(t *testing.T) {
		require.NoError(t, f.hubC.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "helloworld", Namespace: "cluster1"}}))
		framework.Eventually(ctx, t, pollTimeout, "the copy deleted", func(ctx context.Context) (bool, error) {
			err := f.spokeC.Get(ctx, client.ObjectKey{Namespace: ns, Name: "helloworld"}, &corev1.ConfigMap{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		local := &corev1.ConfigMap{}
		require.NoError(t, f.spokeC.Get(ctx, client.ObjectKey{Namespace: ns, Name: "local"}, local), "a ConfigMap it did not make is never deleted")
	})

	t.Run("renews its lease", func(t *testing.T) {
		first := f.waitLease(ctx, t, ns, time.Time{})
		assert.Equal(t, int32(4), *first.Spec.LeaseDurationSeconds)
		f.waitLease(ctx, t, ns, first.Spec.RenewTime.Time)
	})

	t.Run("cannot read another cluster's namespace", func(t *testing.T) {
		// cluster1's agent credential, deployed as if it served cluster2.
		const other = "helloworld-cluster2"
		f.deploy(ctx, t, "cluster2", other)
		require.NoError(t, f.hubC.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "of-cluster2", Namespace: "cluster2"}}))
		f.waitLog(ctx, t, other, "the hub refuses to let this agent read ConfigMaps in its cluster namespace", `configmaps is forbidden`, `in the namespace \"cluster2\"`)
		// It keeps running and renewing its lease.
		lease := f.waitLease(ctx, t, other, time.Time{})
		f.waitLease(ctx, t, other, lease.Spec.RenewTime.Time)
		info, ok := f.runner.Process("cluster1", other, agentDeployment)
		require.True(t, ok)
		assert.NotZero(t, info.Pid, "the agent is not running")
		assert.Zero(t, info.Restarts, "the agent exited")
		err := f.spokeC.Get(ctx, client.ObjectKey{Namespace: other, Name: "of-cluster2"}, &corev1.ConfigMap{})
		assert.True(t, apierrors.IsNotFound(err), "another cluster's ConfigMap was copied: %v", err)
	})
}

// deploy does for the example on cluster what the hub's add-on manager and
// the managed cluster's agents do on enable, with install namespace ns: it
// renders the template (the agent's lease shortened to leaseDuration) and
// applies it to the managed cluster, binds the template's hub permissions in
// the cluster's namespace to the group of the cluster's add-on agents, and
// writes the add-on's hub credential into ns: always cluster1's.
func (f *fleet) deploy(ctx context.Context, t *testing.T, cluster, ns string) {
	t.Helper()
	objs := render(t, f.template, cluster, ns)
	dep := find(t, objs, "Deployment", agentDeployment)
	containers, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	agent := containers[0].(map[string]any)
	agent["args"] = append(agent["args"].([]any), "--lease-duration="+leaseDuration)
	require.NoError(t, unstructured.SetNestedSlice(dep.Object, containers, "spec", "template", "spec", "containers"))
	require.NoError(t, apply.Apply(ctx, f.spokeC, objs, apply.Options{FieldManager: "work-agent"}))

	perm := f.template.Spec.Registration[0].KubeClient.HubPermissions[0]
	require.NoError(t, client.IgnoreAlreadyExists(f.hubC.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "open-cluster-management:" + addonName + ":clusterrole:agent"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: perm.CurrentCluster.ClusterRoleName},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: identity.AddonClusterGroup(cluster, addonName)}},
	})))

	cfg, err := f.hub.ConfigForUser(identity.AddonUserName("cluster1", addonName, addonName), identity.AddonDefaultGroups("cluster1", addonName)...)
	require.NoError(t, err)
	data, err := kubeconfig.HubCredentialData(&kubeconfig.Info{Server: f.hub.Server(), CAData: f.hub.CAData()}, "cluster1", addonName, cfg.CertData, cfg.KeyData)
	require.NoError(t, err)
	require.NoError(t, f.spokeC.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: addonName + "-hub-kubeconfig"}, Data: data}))
}

// waitCopy waits until ConfigMap ns/name on the managed cluster satisfies ok.
func (f *fleet) waitCopy(ctx context.Context, t *testing.T, ns, name string, ok func(*corev1.ConfigMap) bool) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	framework.Eventually(ctx, t, pollTimeout, "ConfigMap "+ns+"/"+name+" on cluster1", func(ctx context.Context) (bool, error) {
		err := f.spokeC.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, cm)
		return err == nil && ok(cm), err
	})
	return cm
}

// waitLease waits until Lease helloworld in ns was renewed after after.
func (f *fleet) waitLease(ctx context.Context, t *testing.T, ns string, after time.Time) *coordinationv1.Lease {
	t.Helper()
	lease := &coordinationv1.Lease{}
	framework.Eventually(ctx, t, pollTimeout, "Lease "+ns+"/helloworld renewed after "+after.String(), func(ctx context.Context) (bool, error) {
		err := f.spokeC.Get(ctx, client.ObjectKey{Namespace: ns, Name: addonName}, lease)
		return err == nil && lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(after), err
	})
	return lease
}

// waitLog waits until a line of the log of the agent in ns holds every part.
func (f *fleet) waitLog(ctx context.Context, t *testing.T, ns string, parts ...string) {
	t.Helper()
	path := f.runner.LogPath("cluster1", ns, agentDeployment)
	framework.Eventually(ctx, t, pollTimeout, fmt.Sprintf("a line of the log of the agent in %s with %q", ns, parts), func(context.Context) (bool, error) {
		log, err := os.ReadFile(path)
		for line := range strings.Lines(string(log)) {
			if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(line, p) }) {
				return true, nil
			}
		}
		return false, err
	})
}
