package placement

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/placement"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/placement/sigdecision"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// gcTimeout bounds a wait for the garbage collector, which may take its
// discovery period (30 s) to notice a kind, and here deletes in two steps
// (the Placement's decisions, then their mirrors).
const gcTimeout = 2 * time.Minute

// sigDecisions is the resource of KEP-5313's PlacementDecisions, as a
// consumer that knows only the SIG-Multicluster API names it.
var sigDecisions = schema.GroupVersionResource{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Resource: "placementdecisions"}

// consumerDecision is a multicluster.x-k8s.io/v1alpha1 PlacementDecision as
// a third-party consumer declares it from KEP-5313, without the hub's
// types.
type consumerDecision struct {
	Metadata  metav1.ObjectMeta `json:"metadata"`
	Decisions []struct {
		ClusterProfileRef struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"clusterProfileRef"`
		Reason string `json:"reason"`
	} `json:"decisions"`
	SchedulerName string `json:"schedulerName"`
}

// clusters returns the sorted names of the decided clusters.
func (d *consumerDecision) clusters() []string {
	var out []string
	for _, c := range d.Decisions {
		out = append(out, c.ClusterProfileRef.Name)
	}
	slices.Sort(out)
	return out
}

// consumer reads the PlacementDecisions of one namespace as a hub user
// granted only get, list and watch on them there.
type consumer struct {
	ns  string
	api dynamic.ResourceInterface
	// rv is the resourceVersion the next follow watches from.
	rv string
}

// newConsumer grants the user gitops-consumer read access to the
// PlacementDecisions of ns, and returns its consumer once it can list them.
func newConsumer(ctx context.Context, t *testing.T, hub *framework.Cluster, ns string) *consumer {
	t.Helper()
	const user = "gitops-consumer"
	admin := hub.Client()
	kit.MustCreate(ctx, t, admin, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{sigDecisions.Group}, Resources: []string{sigDecisions.Resource}, Verbs: []string{"get", "list", "watch"}}},
	})
	kit.MustCreate(ctx, t, admin, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	})
	cfg, err := hub.ConfigForUser(user)
	kit.Must(t, "credentials of "+user, err)
	dc, err := dynamic.NewForConfig(cfg)
	kit.Must(t, "dynamic client of "+user, err)
	c := &consumer{ns: ns, api: dc.Resource(sigDecisions).Namespace(ns)}
	framework.Eventually(ctx, t, pollTimeout, user+" lists the PlacementDecisions of "+ns, func(ctx context.Context) (bool, error) {
		list, err := c.api.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		c.rv = list.GetResourceVersion()
		return true, nil
	})
	return c
}

// decode converts an object the consumer received into its own type.
func decode(u *unstructured.Unstructured) (*consumerDecision, error) {
	d := &consumerDecision{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
		return nil, fmt.Errorf("decode %s: %w", u.GetName(), err)
	}
	return d, nil
}

// follow watches the PlacementDecisions of placement key (by the label
// multicluster.x-k8s.io/placement-key) from where the last follow stopped,
// until an event on decision name satisfies cond, and returns that
// decision. It fails t after pollTimeout.
func (c *consumer) follow(ctx context.Context, t *testing.T, key, name, what string, cond func(watch.EventType, *consumerDecision) bool) *consumerDecision {
	t.Helper()
	return c.followWithin(ctx, t, pollTimeout, key, name, what, cond)
}

// followWithin is follow failing t after timeout.
func (c *consumer) followWithin(ctx context.Context, t *testing.T, timeout time.Duration, key, name, what string, cond func(watch.EventType, *consumerDecision) bool) *consumerDecision {
	t.Helper()
	selector := "multicluster.x-k8s.io/placement-key=" + key
	lw := &cache.ListWatch{WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		o.LabelSelector = selector
		return c.api.Watch(ctx, o)
	}}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var got *consumerDecision
	var seen []string
	ev, err := watchtools.Until(ctx, c.rv, lw, func(e watch.Event) (bool, error) {
		u, ok := e.Object.(*unstructured.Unstructured)
		if !ok || u.GetName() != name {
			return false, nil
		}
		d, err := decode(u)
		if err != nil {
			return false, err
		}
		seen = append(seen, fmt.Sprintf("%s %v", e.Type, d.clusters()))
		if !cond(e.Type, d) {
			return false, nil
		}
		got = d
		return true, nil
	})
	if err != nil {
		t.Fatalf("the consumer watching %s for %s: %v; events of %s: %v", selector, what, err, name, seen)
	}
	c.rv = ev.Object.(*unstructured.Unstructured).GetResourceVersion()
	return got
}

// decides returns a condition of follow: the decision exists and decides
// exactly clusters, given sorted.
func decides(clusters ...string) func(watch.EventType, *consumerDecision) bool {
	return func(typ watch.EventType, d *consumerDecision) bool {
		return typ != watch.Deleted && slices.Equal(d.clusters(), clusters)
	}
}

// present is a condition of follow: the decision exists.
func present(typ watch.EventType, _ *consumerDecision) bool { return typ != watch.Deleted }

// deleted is a condition of follow: the decision is deleted.
func deleted(typ watch.EventType, _ *consumerDecision) bool { return typ == watch.Deleted }

// TestSIGPlacementDecisions runs the scheduler and the mirror as the shipped
// ocm-hub-controller ServiceAccount with the SIGPlacementDecision gate on,
// and checks, as a consumer that knows only KEP-5313 would, that a
// Placement's decision is published, follows clusters joining and leaving
// it and goes with the Placement; then, with the gate off, that the hub
// deletes the mirrors it wrote and writes no new one.
func TestSIGPlacementDecisions(t *testing.T) {
	ctx, env := hubtest.Start(t, 10*time.Minute)
	hub := env.Cluster("hub")
	s := &suite{admin: hub.Client()}
	withGate := func(on bool) hubtest.Setup {
		return func(mgr ctrl.Manager) error { return sigdecision.Setup(mgr, on) }
	}
	stop := hubtest.RunControllers(t, hub, 1, placement.SetupWithManager, withGate(true))

	const ns = "sig-web"
	s.fixture(ctx, t, ns)
	s.createCluster(ctx, t, ns, clusterSpec{name: "sig-c1", labels: map[string]string{"env": "prod"}})
	s.createCluster(ctx, t, ns, clusterSpec{name: "sig-c2", labels: map[string]string{"env": "dev"}})
	c := newConsumer(ctx, t, hub, ns)
	prod := clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{labelSelector(map[string]string{"env": "prod"})}}
	s.createPlacement(ctx, t, newPlacement(ns, "web", prod))
	const mirror = "web-decision-1"
	setEnv := func(cluster, env string) {
		s.updateCluster(ctx, t, cluster, func(mc *clusterv1.ManagedCluster) { mc.Labels["env"] = env })
	}

	t.Run("the consumer reads the Placement's decision", func(t *testing.T) {
		d := c.follow(ctx, t, "web", mirror, "sig-c1 decided", decides("sig-c1"))
		if ref := d.Decisions[0].ClusterProfileRef; ref.Name != "sig-c1" || ref.Namespace != ns {
			t.Errorf("clusterProfileRef = %+v, want sig-c1 in %s, where its ClusterProfile is exported", ref, ns)
		}
		if d.SchedulerName != "open-cluster-management" {
			t.Errorf("schedulerName = %q, want open-cluster-management", d.SchedulerName)
		}
		wantLabels := map[string]string{
			"x-k8s.io/cluster-manager":             "open-cluster-management",
			"multicluster.x-k8s.io/placement-key":  "web",
			"multicluster.x-k8s.io/decision-key":   "web",
			"multicluster.x-k8s.io/decision-index": "0",
		}
		for k, v := range wantLabels {
			if d.Metadata.Labels[k] != v {
				t.Errorf("label %s = %q, want %q (labels %v)", k, d.Metadata.Labels[k], v, d.Metadata.Labels)
			}
		}
		owners, _ := json.Marshal(d.Metadata.OwnerReferences)
		if o := d.Metadata.OwnerReferences; len(o) != 1 || o[0].Kind != "PlacementDecision" || o[0].APIVersion != "cluster.open-cluster-management.io/v1beta1" ||
			o[0].Name != mirror || o[0].Controller == nil || !*o[0].Controller {
			t.Errorf("ownerReferences = %s, want the controller reference to PlacementDecision %s", owners, mirror)
		}
	})

	t.Run("the consumer follows a cluster joining the decision", func(t *testing.T) {
		setEnv("sig-c2", "prod")
		c.follow(ctx, t, "web", mirror, "sig-c1 and sig-c2 decided", decides("sig-c1", "sig-c2"))
	})

	t.Run("the consumer follows a cluster leaving the decision", func(t *testing.T) {
		setEnv("sig-c1", "dev")
		c.follow(ctx, t, "web", mirror, "sig-c2 alone decided", decides("sig-c2"))
	})

	t.Run("the decision goes with the Placement", func(t *testing.T) {
		kit.Must(t, "delete placement web", s.admin.Delete(ctx, newPlacement(ns, "web", prod)))
		c.followWithin(ctx, t, gcTimeout, "web", mirror, "the decision deleted", deleted)
	})

	t.Run("with the gate off the mirrors go and none is written", func(t *testing.T) {
		s.createPlacement(ctx, t, newPlacement(ns, "api", prod))
		c.follow(ctx, t, "api", "api-decision-1", "the decision of api", present)
		stop()
		hubtest.RunControllers(t, hub, 1, placement.SetupWithManager, withGate(false))
		c.follow(ctx, t, "api", "api-decision-1", "the mirror of api deleted with the gate off", deleted)
		s.createPlacement(ctx, t, newPlacement(ns, "batch", prod))
		s.waitDecided(ctx, t, ns, "batch", "sig-c2")
		framework.Consistently(ctx, t, 5*time.Second, "no multicluster.x-k8s.io PlacementDecision with the gate off", func(ctx context.Context) (bool, error) {
			list, err := c.api.List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			return len(list.Items) == 0, nil
		})
		if err := s.admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "api-decision-1"}, &clusterv1beta1.PlacementDecision{}); err != nil {
			t.Errorf("get the scheduler's PlacementDecision api-decision-1, which the cleanup must leave: %v", err)
		}
	})
}
