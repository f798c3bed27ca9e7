package addondeploy

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/deploy"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/health"
	workagent "github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent"
	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
	"github.com/kubectl-ocm/kubectl-ocm/test/seeds"
)

const (
	// clusterName is the managed cluster.
	clusterName = "cluster1"
	// pollTimeout bounds every wait.
	pollTimeout = 60 * time.Second
	// sizeLimit is the deploy controller's work size limit in these tests,
	// small enough to split a template of a few large ConfigMaps.
	sizeLimit = 8000
)

// suite is the environment shared by the subtests.
type suite struct {
	ctx          context.Context
	env          *framework.Environment
	hub, spoke   *framework.Cluster
	hubC, spokeC client.Client
}

// setup starts the hub and cluster1, installs what `hub init` and `join`
// install, registers cluster1 as an accepted, available cluster, and runs
// the work agent and the deploy and health controllers.
func setup(t *testing.T) *suite {
	t.Helper()
	ctx, env := hubtest.Start(t, 15*time.Minute, clusterName)
	s := &suite{ctx: ctx, env: env, hub: env.Cluster("hub"), spoke: env.Cluster(clusterName)}
	s.hubC, s.spokeC = s.hub.Client(), s.spoke.Client()
	s.create(t, s.hubC, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: clusterName}})
	agenttest.GrantWork(ctx, t, s.hubC, clusterName)
	s.create(t, s.hubC, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: clusterName},
		Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}})
	s.setClusterAvailable(t, metav1.ConditionTrue, clusterv1.ReasonManagedClusterAvailable, "Managed cluster is available")

	agentObjs, err := config.AgentObjects(config.AgentValues{ClusterName: clusterName, BootstrapKubeconfig: []byte("unused")})
	kit.Must(t, "render agent objects", err)
	kit.Must(t, "apply agent objects", apply.Apply(ctx, s.spokeC, agentObjs, apply.Options{FieldManager: "addondeploy-test"}))
	agenttest.WriteHubCredential(ctx, t, s.hub, s.spoke, clusterName, "agent")
	agenttest.StartWorkAgent(t, s.spoke, workagent.Options{StatusSyncInterval: time.Second})
	hubtest.RunControllers(t, s.hub, 2, (&deploy.Reconciler{SizeLimit: sizeLimit}).SetupWithManager, (&health.Reconciler{}).SetupWithManager)
	return s
}

// create creates obj as the admin.
func (s *suite) create(t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	kit.Must(t, "create "+obj.GetNamespace()+"/"+obj.GetName(), c.Create(s.ctx, obj))
}

// poll waits until cond holds.
func (s *suite) poll(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	framework.Eventually(s.ctx, t, pollTimeout, what, cond)
}

// stays checks that cond holds for d, looking every framework.PollInterval.
func (s *suite) stays(t *testing.T, d time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); {
		ok, err := cond(s.ctx)
		if err != nil || !ok {
			t.Fatalf("%s no longer holds (error: %v)", what, err)
		}
		select {
		case <-s.ctx.Done():
			t.Fatal(s.ctx.Err())
		case <-time.After(framework.PollInterval):
		}
	}
}

// update reads obj, applies change and writes it (status when status is
// set), retrying conflicts with the controllers.
func (s *suite) update(t *testing.T, c client.Client, obj client.Object, status bool, change func()) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(s.ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		if status {
			return c.Status().Update(s.ctx, obj)
		}
		return c.Update(s.ctx, obj)
	})
	kit.Must(t, "update "+obj.GetNamespace()+"/"+obj.GetName(), err)
}

// setClusterAvailable sets the Available condition of cluster1, as the
// hub's lease controller would.
func (s *suite) setClusterAvailable(t *testing.T, status metav1.ConditionStatus, reason, msg string) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: clusterName}}
	s.update(t, s.hubC, mc, true, func() {
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: clusterv1.ManagedClusterConditionAvailable,
			Status: status, Reason: reason, Message: msg})
	})
}

// manifests converts multi-document YAML to manifests.
func manifests(t *testing.T, docs string) []workv1.Manifest {
	t.Helper()
	var out []workv1.Manifest
	for _, doc := range strings.Split(docs, "\n---\n") {
		data, err := yaml.YAMLToJSON([]byte(doc))
		kit.Must(t, "manifest", err)
		out = append(out, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: data}})
	}
	return out
}

// configRef names a configuration of an add-on.
type configRef struct {
	resource, namespace, name string
}

// specHash returns the current spec hash of a configuration, read as the
// configuration controller reads it.
func (s *suite) specHash(t *testing.T, ref configRef) string {
	t.Helper()
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(addonconfig.BuiltinKind(ref.resource))
	kit.Must(t, "get configuration "+ref.name, s.hubC.Get(s.ctx, client.ObjectKey{Namespace: ref.namespace, Name: ref.name}, u))
	hash, err := addonconfig.SpecHash(u)
	kit.Must(t, "hash", err)
	return hash
}

// setDesired writes the add-on's status.configReferences as the
// configuration controller does: each configuration with its desired spec
// hash, the current one unless hashes names another.
func (s *suite) setDesired(t *testing.T, addon string, hashes map[string]string, refs ...configRef) {
	t.Helper()
	s.setDesiredIn(t, clusterName, addon, hashes, refs...)
}

// setDesiredIn is setDesired for the add-on of cluster.
func (s *suite) setDesiredIn(t *testing.T, cluster, addon string, hashes map[string]string, refs ...configRef) {
	t.Helper()
	var out []addonv1alpha1.ConfigReference
	for _, ref := range refs {
		hash, ok := hashes[ref.name]
		if !ok {
			hash = s.specHash(t, ref)
		}
		referent := addonv1alpha1.ConfigReferent{Namespace: ref.namespace, Name: ref.name}
		out = append(out, addonv1alpha1.ConfigReference{
			ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: ref.resource},
			ConfigReferent:      referent,
			DesiredConfig:       &addonv1alpha1.ConfigSpecHash{ConfigReferent: referent, SpecHash: hash},
		})
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: addon}}
	s.update(t, s.hubC, mca, true, func() { mca.Status.ConfigReferences = out })
}

// work returns a ManifestWork in cluster1's namespace on the hub.
func (s *suite) work(ctx context.Context, name string) (*workv1.ManifestWork, error) {
	w := &workv1.ManifestWork{}
	return w, s.hubC.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: name}, w)
}

// mca returns an add-on of cluster1.
func (s *suite) mca(ctx context.Context, name string) (*addonv1alpha1.ManagedClusterAddOn, error) {
	m := &addonv1alpha1.ManagedClusterAddOn{}
	return m, s.hubC.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: name}, m)
}

// waitCondition waits until condition typ of add-on name has status and
// reason, and returns the add-on.
func (s *suite) waitCondition(t *testing.T, name, typ string, status metav1.ConditionStatus, reason string) *addonv1alpha1.ManagedClusterAddOn {
	t.Helper()
	var m *addonv1alpha1.ManagedClusterAddOn
	s.poll(t, "add-on "+name+" "+typ+"="+string(status)+" ("+reason+")", func(ctx context.Context) (bool, error) {
		var err error
		if m, err = s.mca(ctx, name); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(m.Status.Conditions, typ)
		return c != nil && c.Status == status && (reason == "" || c.Reason == reason), nil
	})
	return m
}

// seed reads a seed example of test/seeds.
func seed(t *testing.T, name string) []byte {
	t.Helper()
	return seeds.Data(t, name)
}

// newCMA returns a ClusterManagementAddOn with the Manual install strategy.
func newCMA(name string) *addonv1alpha1.ClusterManagementAddOn {
	return &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyManual}}}
}
