package workcli

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// pollTimeout bounds every wait of the tests.
const pollTimeout = 30 * time.Second

// setup starts a hub, installs the hub objects and creates the accepted
// ManagedCluster cluster1 with its namespace, and the not accepted cluster2
// without one.
func setup(t *testing.T) (context.Context, *framework.Environment, client.Client) {
	t.Helper()
	ctx, env := hubtest.Start(t, 10*time.Minute)
	c := env.Cluster("hub").Client()
	for _, mc := range []*clusterv1.ManagedCluster{
		{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}},
		{ObjectMeta: metav1.ObjectMeta{Name: "cluster2"}},
	} {
		kit.MustCreate(ctx, t, c, mc)
	}
	kit.MustCreate(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}})
	return ctx, env, c
}

// mustDecode decodes one YAML object.
func mustDecode(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(s), &u.Object); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return u
}

// indent indents every line of s by n spaces.
func indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n"+pad)
}
