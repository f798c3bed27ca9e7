package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stretchr/testify/require"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/join"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/unjoin"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
)

// TestJoinAndUnjoin runs `kubectl ocm join` against a real hub: failed
// preflight checks install nothing; a good join with --wait reports progress
// until the hub admin accepts the cluster; unjoin leaves nothing behind.
func TestJoinAndUnjoin(t *testing.T) {
	t.Parallel() // a fleet of its own
	fx := startJoin(t)
	t.Run("preflight failures install nothing", fx.preflightFailures)
	t.Run("dry runs install nothing", fx.dryRuns)
	t.Run("join --wait returns once the hub has the registration", fx.joinWait)
	t.Run("join --wait-accepted until accepted and available", fx.joinWaitAccepted)
	t.Run("unjoin leaves nothing on the managed cluster", fx.unjoinLeavesNothing)
}

// joinFixture is what the steps of TestJoinAndUnjoin share: the fleet's
// hub and the managed cluster that joins it, join's flags for it, and the
// credentials and trust join is given, good and wrong.
type joinFixture struct {
	ctx        context.Context
	hub, spoke *framework.Cluster
	flags      *genericclioptions.ConfigFlags
	// token is the hub's bootstrap token; hubCA a file with the hub's CA
	// and wrongCA one with another CA; pins the hub CA's pins and
	// wrongPins another CA's.
	token, hubCA, wrongCA string
	pins, wrongPins       []string
}

// startJoin starts the fleet of TestJoinAndUnjoin, without the managed
// cluster joined.
func startJoin(t *testing.T) *joinFixture {
	ctx, f := agenttest.StartFleet(t, 5*time.Minute, agenttest.FleetOptions{Options: framework.Options{Clusters: []string{clusterName}}})
	hub, spoke, token, hubCA := f.Hub, f.Env.Cluster(clusterName), f.Token, f.CAFile
	flags := f.Flags(clusterName)
	wrongCA := filepath.Join(t.TempDir(), "wrong-ca.crt")
	if err := os.WriteFile(wrongCA, spoke.CAData(), 0o600); err != nil {
		t.Fatal(err)
	}

	pins := hubPins(ctx, t, hub)
	wrongPins := certs.Pins(mustParseCertificates(t, spoke.CAData()))
	return &joinFixture{ctx: ctx, hub: hub, spoke: spoke, flags: flags, token: token, hubCA: hubCA, wrongCA: wrongCA, pins: pins, wrongPins: wrongPins}
}

// preflightFailures checks that preflight failures install nothing.
func (fx *joinFixture) preflightFailures(t *testing.T) {
	ctx, hub, spoke, flags, token, hubCA, wrongCA, pins, wrongPins := fx.ctx, fx.hub, fx.spoke, fx.flags, fx.token, fx.hubCA, fx.wrongCA, fx.pins, fx.wrongPins
	tests := []struct {
		name, server, token, caFile string
		pins                        []string
		wantErr                     string
	}{
		{"wrong token", hub.Server(), "not-a-token", "", pins, "rejected --hub-token"},
		{"wrong CA", hub.Server(), token, wrongCA, nil, "not trusted by the hub CA from --ca-file"},
		{"wrong pin", hub.Server(), token, "", wrongPins, "is not the hub of --ca-cert-hash"},
		{"CA file without the pinned CA", hub.Server(), token, hubCA, wrongPins, "does not hold the hub CA of --ca-cert-hash"},
		{"unreachable hub", "https://127.0.0.1:1", token, "", pins, "cannot reach the hub at https://127.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			o := join.NewOptions(flags, streams)
			o.HubAPIServer, o.HubToken, o.ClusterName, o.CAFile, o.CACertHashes = tt.server, tt.token, clusterName, tt.caFile, tt.pins
			err := agenttest.RunJoin(ctx, o)
			require.ErrorContains(t, err, tt.wantErr)
			require.NotContains(t, err.Error(), "\n", "the join error is one line")
			if out.Len() != 0 {
				t.Errorf("join printed %q although it failed", out.String())
			}
			ns := &corev1.Namespace{}
			if err := spoke.Client().Get(ctx, types.NamespacedName{Name: config.AgentNamespace}, ns); !apierrors.IsNotFound(err) {
				t.Errorf("namespace %s exists after a failed preflight (err %v)", config.AgentNamespace, err)
			}
		})
	}
}

// dryRuns checks that dry runs install nothing.
func (fx *joinFixture) dryRuns(t *testing.T) {
	ctx, hub, spoke, flags, token, hubCA := fx.ctx, fx.hub, fx.spoke, fx.flags, fx.token, fx.hubCA
	for _, mode := range []string{cli.DryRunClient, cli.DryRunServer} {
		t.Run(mode, func(t *testing.T) {
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			o := join.NewOptions(flags, streams)
			o.HubAPIServer, o.HubToken, o.ClusterName, o.CAFile, o.DryRun = hub.Server(), token, clusterName, hubCA, mode
			if err := agenttest.RunJoin(ctx, o); err != nil {
				t.Fatalf("join --dry-run=%s: %v\n%s", mode, err, errOut)
			}
			if want := "deployment.apps/klusterlet applied (" + mode + " dry run)"; !strings.Contains(out.String(), want) {
				t.Errorf("join --dry-run=%s output lacks %q:\n%s", mode, want, out)
			}
			ns := &corev1.Namespace{}
			if err := spoke.Client().Get(ctx, types.NamespacedName{Name: config.AgentNamespace}, ns); !apierrors.IsNotFound(err) {
				t.Errorf("namespace %s exists after a dry run (err %v)", config.AgentNamespace, err)
			}
		})
	}
	// clusteradm's --output-file: the manifests -o yaml prints, in a
	// file only its owner reads, since the bootstrap Secret is in it.
	t.Run("output-file", func(t *testing.T) {
		run := func(change func(o *join.Options)) string {
			t.Helper()
			streams, _, out, errOut := genericiooptions.NewTestIOStreams()
			o := join.NewOptions(flags, streams)
			o.HubAPIServer, o.HubToken, o.ClusterName, o.CAFile, o.DryRun = hub.Server(), token, clusterName, hubCA, cli.DryRunClient
			change(o)
			if err := agenttest.RunJoin(ctx, o); err != nil {
				t.Fatalf("join: %v\n%s", err, errOut)
			}
			return out.String()
		}
		path := filepath.Join(t.TempDir(), "cluster.yaml")
		run(func(o *join.Options) { o.OutputFile = path })
		want := run(func(o *join.Options) { o.PrintFlags.OutputFormat = ptr.To("yaml") })
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("--output-file wrote\n%s\nwant what -o yaml prints:\n%s", got, want)
		}
		if !strings.Contains(want, "kind: Klusterlet") || !strings.Contains(want, operatorv1.BootstrapHubKubeConfigSecret) {
			t.Errorf("the manifests lack the Klusterlet or the bootstrap Secret:\n%s", want)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != cli.PrivateFileMode {
			t.Errorf("--output-file mode %v (%v), want %v", fi.Mode().Perm(), err, cli.PrivateFileMode)
		}
	})
}

// joinWait checks that join --wait returns once the hub has the registration.
func (fx *joinFixture) joinWait(t *testing.T) {
	ctx, hub, flags, token, pins := fx.ctx, fx.hub, fx.flags, fx.token, fx.pins
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := join.NewOptions(flags, streams)
	o.HubAPIServer, o.HubToken, o.ClusterName, o.Wait, o.Timeout = hub.Server(), token, clusterName, true, 2*time.Minute
	o.Image = agenttest.TestImage
	// The pin `hub token` prints: join learns the CA anonymously and
	// the agent registers with it.
	o.CACertHashes = pins
	if err := agenttest.RunJoin(ctx, o); err != nil {
		t.Fatalf("join: %v\noutput:\n%s", err, out)
	}
	if !strings.Contains(out.String(), "The hub has the registration of cluster "+clusterName) {
		t.Errorf("join --wait output lacks the registration:\n%s", out)
	}
	pending, err := pendingCSRs(ctx, hub.Client())
	if err != nil || len(pending) != 1 {
		t.Errorf("after join --wait the hub has %d pending CSRs (%v), want the cluster's one", len(pending), err)
	}
	mc, err := managedCluster(ctx, hub.Client())
	if err != nil || mc.Spec.HubAcceptsClient {
		t.Errorf("after join --wait the cluster is accepted already, or missing: %v", err)
	}
}

// joinWaitAccepted checks that join --wait-accepted waits until the cluster
// is accepted and available.
func (fx *joinFixture) joinWaitAccepted(t *testing.T) {
	ctx, hub, flags, token, hubCA := fx.ctx, fx.hub, fx.flags, fx.token, fx.hubCA
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	o := join.NewOptions(flags, streams)
	o.HubAPIServer, o.HubToken, o.ClusterName, o.WaitAccepted, o.Timeout = hub.Server(), token, clusterName, true, 2*time.Minute
	o.Image = agenttest.TestImage
	// clusteradm's way: the hub's CA bundle as a file.
	o.CAFile = hubCA
	var (
		wg      sync.WaitGroup
		joinErr error
		joined  = make(chan struct{})
	)
	wg.Go(func() {
		defer close(joined)
		joinErr = agenttest.RunJoin(ctx, o)
	})
	defer wg.Wait()
	// The hub admin accepts: approve the CSR, then set hubAcceptsClient.
	framework.Eventually(ctx, t, pollTimeout, "a pending CSR of "+clusterName, func(ctx context.Context) (bool, error) {
		select {
		case <-joined:
			t.Fatalf("join ended before the cluster was accepted: %v\noutput:\n%s", joinErr, out)
		default:
		}
		pending, err := pendingCSRs(ctx, hub.Client())
		return len(pending) == 1, err
	})
	approveNextCSR(ctx, t, hub)
	framework.Eventually(ctx, t, pollTimeout, "hubAcceptsClient set", func(ctx context.Context) (bool, error) {
		mc, err := managedCluster(ctx, hub.Client())
		if err != nil {
			return false, err
		}
		mc.Spec.HubAcceptsClient = true
		return true, hub.Client().Update(ctx, mc)
	})
	wg.Wait()
	if joinErr != nil {
		t.Fatalf("join: %v\noutput:\n%s", joinErr, out)
	}
	for _, want := range []string{"kubectl ocm accept --clusters " + clusterName, "has joined the hub and is available"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("join output lacks %q:\n%s", want, out)
		}
	}
	// Progress, on stderr, shows the steps it saw, ending with
	// "available"; which steps in between it sees depends on how fast the
	// hub admin and the agent are (the step names are unit-tested in
	// plugins/join).
	if !strings.Contains(errOut.String(), "Waiting for cluster "+clusterName+" to join the hub: available: ") {
		t.Errorf("join --wait-accepted streamed no progress ending in the available step:\n%s", errOut)
	}
}

// unjoinLeavesNothing checks that unjoin leaves nothing on the managed cluster.
func (fx *joinFixture) unjoinLeavesNothing(t *testing.T) {
	ctx, spoke, flags := fx.ctx, fx.spoke, fx.flags
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := unjoin.NewOptions(flags, streams)
	o.ClusterName = clusterName
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(ctx); err != nil {
		t.Fatalf("unjoin: %v\noutput:\n%s", err, out)
	}
	if !strings.Contains(out.String(), "kubectl delete managedcluster "+clusterName) {
		t.Errorf("unjoin output does not say how to clean up the hub:\n%s", out)
	}
	c := spoke.Client()
	checks := []client.Object{
		&corev1.Namespace{}, &operatorv1.Klusterlet{}, &rbacv1.ClusterRole{}, &rbacv1.ClusterRoleBinding{},
		&apiextensionsv1.CustomResourceDefinition{}, &corev1.Namespace{}, &rbacv1.ClusterRole{},
	}
	names := []string{config.AgentNamespace, operatorv1.KlusterletName, "open-cluster-management:klusterlet-agent:registration",
		"open-cluster-management:klusterlet-agent:registration", config.KlusterletsCRDName, operatorv1.OperatorNamespace,
		"open-cluster-management:klusterlet"}
	for i, obj := range checks {
		if err := c.Get(ctx, types.NamespacedName{Name: names[i]}, obj); !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) {
			t.Errorf("%T %s remains after unjoin (err %v)", obj, names[i], err)
		}
	}
}
