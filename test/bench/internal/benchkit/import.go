package benchkit

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusterinfo"
	imp "github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// Importer is the cluster importer's Deployment on the hub.
const Importer = "ocm-importer"

// ImporterRunnerArgs are FleetOptions.RunnerArgs for a fleet whose hub
// imports clusters: the clusters' API servers listen on loopback here.
var ImporterRunnerArgs = map[string][]string{Importer: {"--allow-loopback-import"}}

// EnableImporter turns on the ClusterImporter gate of the hub's
// ClusterManager, as an administrator does, publishes the hub's address in
// kube-public/cluster-info (as `kubectl ocm hub init` does) and waits until
// the importer the operator installs is ready.
func (f *Fleet) EnableImporter(ctx context.Context, b *testing.B) {
	b.Helper()
	info, err := clusterinfo.New(f.Hub.Server(), f.JoinCA)
	if err != nil {
		b.Fatal(err)
	}
	if err := f.HubClient.Create(ctx, info); err != nil && !apierrors.IsAlreadyExists(err) {
		b.Fatalf("publish cluster-info: %v", err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &operatorv1.ClusterManager{}
		if err := f.HubClient.Get(ctx, client.ObjectKey{Name: operatorv1.ClusterManagerName}, cm); err != nil {
			return err
		}
		if cm.Spec.RegistrationConfiguration == nil {
			cm.Spec.RegistrationConfiguration = &operatorv1.RegistrationHubConfiguration{}
		}
		cm.Spec.RegistrationConfiguration.FeatureGates = append(cm.Spec.RegistrationConfiguration.FeatureGates,
			operatorv1.FeatureGate{Feature: "ClusterImporter", Mode: operatorv1.FeatureGateModeTypeEnable})
		return f.HubClient.Update(ctx, cm)
	})
	if err != nil {
		b.Fatalf("turn on the ClusterImporter gate: %v", err)
	}
	f.WaitReady(ctx, b, "hub", config.HubNamespace, Importer)
}

// ImportTimes are the stages of one import, each measured from the
// creation of the import Secret.
type ImportTimes struct {
	Imported  time.Duration // ManagedClusterImportSucceeded True
	Available time.Duration // ManagedClusterConditionAvailable True
}

// ImportCluster imports cluster from the hub as `kubectl ocm import` does
// (its ManagedCluster and namespace, then the import Secret with the
// cluster's admin credential), with an acceptor playing the hub admin, and
// waits until the ManagedCluster is Available.
func ImportCluster(ctx context.Context, b *testing.B, f *Fleet, cluster string) ImportTimes {
	b.Helper()
	for _, obj := range []client.Object{
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: cluster}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cluster}},
	} {
		if err := f.HubClient.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			b.Fatal(err)
		}
	}
	sec := kit.ImportSecret(b, cluster, f.Env.Cluster(cluster).RESTConfig())
	acceptance := startAcceptor(ctx, b, f, cluster)
	start := time.Now()
	if err := f.HubClient.Create(ctx, sec); err != nil {
		b.Fatalf("create the import Secret of %s: %v", cluster, err)
	}
	var t ImportTimes
	mc := &clusterv1.ManagedCluster{}
	_, err := PollErr(ctx, FastPoll, joinTimeout, "ManagedCluster "+cluster+" imported and Available", func(ctx context.Context) (bool, error) {
		if err := f.HubClient.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
			return false, err
		}
		now := time.Since(start)
		if t.Imported == 0 && meta.IsStatusConditionTrue(mc.Status.Conditions, imp.ConditionImportSucceeded) {
			t.Imported = now
		}
		if t.Available == 0 && meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable) {
			t.Available = now
		}
		return t.Imported != 0 && t.Available != 0, nil
	})
	if err != nil {
		b.Fatalf("%v; ManagedCluster conditions: %+v", err, mc.Status.Conditions)
	}
	if r := <-acceptance; r.err != nil {
		b.Fatalf("accept %s: %v", cluster, r.err)
	}
	return t
}
