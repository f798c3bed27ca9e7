package work

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	workagent "github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

const (
	clusterName = "cluster1"
	otherName   = "cluster2"
	agentNS     = config.AgentNamespace
	// pollTimeout bounds every wait of the tests.
	pollTimeout = 60 * time.Second
	// evictionGrace is the agent's AppliedManifestWork eviction grace period
	// in these tests (60 m by default).
	evictionGrace = 8 * time.Second
)

// suite is the shared state of the ordered subtests.
type suite struct {
	hub, spoke   *framework.Cluster
	hubC, spokeC client.Client
	// hubHash is the hub's hash as the agent computes it.
	hubHash string
	// root is the top-level test: the agent outlives the subtest that
	// (re)starts it.
	root *testing.T
	stop func()
	// ocm runs kubectl ocm against the hub.
	ocm clitest.CLI
}

// setup starts a hub and cluster1, installs what `hub init` and `join`
// install, and grants cluster1's agent identity the work role in its
// namespace as the hub controller would on accept.
func setup(ctx context.Context, t *testing.T) *suite {
	t.Helper()
	env := framework.StartForTest(t, "hub", clusterName)
	s := &suite{hub: env.Cluster("hub"), spoke: env.Cluster(clusterName), root: t, ocm: clitest.CLI{Kubeconfig: env.Kubeconfig()}}
	s.hubC, s.spokeC = s.hub.Client(), s.spoke.Client()
	s.hubHash = kubeconfig.HubHash(s.hub.Server())

	// The work agent reads the work API only: no ClusterManager, no
	// conversion webhook.
	hubtest.Install(ctx, t, s.hubC, hubtest.InstallOptions{NoClusterManager: true, NoConversionWebhook: true, FieldManager: "work-test"})
	for _, c := range []string{clusterName, otherName} {
		kit.MustCreate(ctx, t, s.hubC, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c}})
		agenttest.GrantWork(ctx, t, s.hubC, c)
	}
	agentObjs, err := config.AgentObjects(config.AgentValues{ClusterName: clusterName, BootstrapKubeconfig: []byte("unused")})
	if err != nil {
		t.Fatal(err)
	}
	kit.Must(t, "apply the agent objects", apply.Apply(ctx, s.spokeC, agentObjs, apply.Options{FieldManager: "work-test"}))
	return s
}

// agentConfig returns a hub client configuration for agent agentID of cluster.
func (s *suite) agentConfig(t *testing.T, cluster, agentID string) *rest.Config {
	t.Helper()
	return agenttest.AgentConfig(t, s.hub, cluster, agentID)
}

// writeHubSecret writes the hub credential Secret of agent agentID on the
// managed cluster, as the registration agent does once its certificate is
// issued (and again on every rotation).
func (s *suite) writeHubSecret(ctx context.Context, t *testing.T, agentID string) {
	t.Helper()
	agenttest.WriteHubCredential(ctx, t, s.hub, s.spoke, clusterName, agentID)
}

// startAgent runs the work agent in-process as the klusterlet-agent
// ServiceAccount of the managed cluster until s.stop or the end of the
// top-level test. Executor denials are retried after 2 s instead of 60 s,
// and records of works gone from the hub are evicted after evictionGrace.
func (s *suite) startAgent() {
	s.root.Helper()
	s.stop = agenttest.StartWorkAgent(s.root, s.spoke, workagent.Options{Namespace: agentNS,
		ExecutorRetryInterval: 2 * time.Second, EvictionGracePeriod: evictionGrace})
}

// newWork builds a ManifestWork in cluster1 from YAML manifests.
func newWork(t *testing.T, name string, manifests ...string) *workv1.ManifestWork {
	t.Helper()
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: name}}
	w.Spec.Workload.Manifests = toManifests(t, manifests...)
	return w
}

// toManifests converts YAML manifests to raw manifests.
func toManifests(t *testing.T, manifests ...string) []workv1.Manifest {
	t.Helper()
	out := make([]workv1.Manifest, 0, len(manifests))
	for _, m := range manifests {
		data, err := yaml.YAMLToJSON([]byte(strings.TrimSpace(m)))
		if err != nil {
			t.Fatalf("manifest %q: %v", m, err)
		}
		out = append(out, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: data}})
	}
	return out
}

// configMap returns a ConfigMap manifest with data a=value.
func configMap(namespace, name, value string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: " + namespace + "\ndata:\n  a: \"" + value + "\"\n"
}

// getWork reads a ManifestWork of cluster1 on the hub.
func (s *suite) getWork(ctx context.Context, name string) (*workv1.ManifestWork, error) {
	w := &workv1.ManifestWork{}
	return w, s.hubC.Get(ctx, types.NamespacedName{Namespace: clusterName, Name: name}, w)
}

// updateWork changes work name on the hub with change, read afresh and
// retried on a conflict: the agent writes the work's status meanwhile.
func (s *suite) updateWork(ctx context.Context, t *testing.T, name string, change func(w *workv1.ManifestWork)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		w, err := s.getWork(ctx, name)
		if err != nil {
			return err
		}
		change(w)
		return s.hubC.Update(ctx, w)
	})
	if err != nil {
		t.Fatalf("update ManifestWork %s: %v", name, err)
	}
}

// waitWorkCondition waits until condition typ of work name has status
// at the work's current generation.
func (s *suite) waitWorkCondition(ctx context.Context, t *testing.T, name, typ string, status metav1.ConditionStatus) *workv1.ManifestWork {
	t.Helper()
	var w *workv1.ManifestWork
	framework.Eventually(ctx, t, pollTimeout, "ManifestWork "+name+" "+typ+"="+string(status), func(ctx context.Context) (bool, error) {
		var err error
		w, err = s.getWork(ctx, name)
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(w.Status.Conditions, typ)
		return c != nil && c.Status == status && c.ObservedGeneration == w.Generation, nil
	})
	return w
}

// waitGone waits until obj no longer exists.
func waitGone(ctx context.Context, t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	framework.Eventually(ctx, t, pollTimeout, "deletion of "+obj.GetNamespace()+"/"+obj.GetName(), func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// configMapData returns data key a of a ConfigMap on the managed cluster.
func (s *suite) configMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	return cm, s.spokeC.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, cm)
}

// appliedWork reads the AppliedManifestWork of work name.
func (s *suite) appliedWork(ctx context.Context, name string) (*workv1.AppliedManifestWork, error) {
	amw := &workv1.AppliedManifestWork{}
	return amw, s.spokeC.Get(ctx, types.NamespacedName{Name: workv1.AppliedManifestWorkName(s.hubHash, name)}, amw)
}

// manifestCondition returns condition typ of manifest ordinal of w.
func manifestCondition(w *workv1.ManifestWork, ordinal int, typ string) *metav1.Condition {
	for _, m := range w.Status.ResourceStatus.Manifests {
		if int(m.ResourceMeta.Ordinal) == ordinal {
			return meta.FindStatusCondition(m.Conditions, typ)
		}
	}
	return nil
}

// ownedBy reports whether obj has an owner reference with uid.
func ownedBy(obj metav1.Object, uid types.UID) bool {
	for _, r := range obj.GetOwnerReferences() {
		if r.UID == uid {
			return true
		}
	}
	return false
}
