package placementcli

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// pollTimeout bounds every wait of the tests.
const pollTimeout = 30 * time.Second

// setup starts a hub, installs the hub objects, and creates namespace apps
// and the ManagedClusters:
//
//	c1  env=prod region=eu
//	c2  env=prod region=us
//	c3  env=prod, tainted gpu=true:NoSelect
//	c4  env=dev
//	c5  env=prod (left out of set prod)
func setup(t *testing.T) (context.Context, *framework.Environment, client.Client) {
	t.Helper()
	ctx, env := hubtest.Start(t, 10*time.Minute)
	c := env.Cluster("hub").Client()
	kit.MustCreate(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}})
	for name, labels := range map[string]map[string]string{
		"c1": {"env": "prod", "region": "eu"}, "c2": {"env": "prod", "region": "us"}, "c3": {"env": "prod"},
		"c4": {"env": "dev"}, "c5": {"env": "prod"},
	} {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
		if name == "c3" {
			mc.Spec.Taints = []clusterv1.Taint{{Key: "gpu", Value: "true", Effect: clusterv1.TaintEffectNoSelect, TimeAdded: metav1.Now()}}
		}
		kit.MustCreate(ctx, t, c, mc)
	}
	return ctx, env, c
}
