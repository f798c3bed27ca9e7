package versioncli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	pkgversion "github.com/kubectl-ocm/kubectl-ocm/pkg/version"
	hubcli "github.com/kubectl-ocm/kubectl-ocm/plugins/hub"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/version"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// The versions of the test: the components run a release the plugin is
// within one minor version of.
const (
	componentVersion = "v0.7.1"
	pluginVersion    = "v0.7.0"
)

// TestVersion installs a hub and joins cluster1 with the plugin, both
// running an ocm-controller stamped with componentVersion, and reads their
// versions with `kubectl ocm version`; then the hub admin writes the status
// of two more clusters as agents of unsupported versions would.
func TestVersion(t *testing.T) {
	ctx, env, _ := hubtest.StartRunner(t, 8*time.Minute, framework.Options{Clusters: []string{"cluster1"}}, pkgversion.StampFlags(componentVersion)...)
	hub := env.Cluster("hub")
	admin := hub.Client()
	onHub, onCluster1 := clitest.CLI{Kubeconfig: env.Kubeconfig()}, clitest.CLI{Kubeconfig: env.Kubeconfig(), Context: "cluster1"}
	stampPlugin(t, pluginVersion)

	t.Run("a cluster without a hub installed says so", func(t *testing.T) {
		r := onHub.Run(ctx, "version")
		clitest.ExpectOK(t, r, "Client Version: "+pluginVersion, "Hub: "+hub.Server(), "Hub Controller Version: not installed (run `kubectl ocm hub init`)")
		if !strings.Contains(r.ErrOut, "Warning: "+hub.Server()+" is no kubectl-ocm hub") {
			t.Errorf("stderr lacks the warning that no hub is installed:\n%s", r.ErrOut)
		}
	})

	clitest.ExpectOK(t, onHub.Run(ctx, "hub", "init", "--wait", "--timeout", "2m"))
	var join hubcli.JoinInfo
	r := onHub.Run(ctx, "hub", "token", "--cluster-name", "cluster1", "-o", "json")
	clitest.ExpectOK(t, r)
	if err := json.Unmarshal([]byte(r.Out), &join); err != nil {
		t.Fatalf("hub token -o json: %v\n%s", err, r.Out)
	}
	// join checks the hub against the pin hub token printed.
	if len(join.CACertHashes) == 0 {
		t.Fatalf("hub token -o json printed no caCertHashes:\n%s", r.Out)
	}
	clitest.ExpectOK(t, onCluster1.Run(ctx, "join", "--hub-token", join.HubToken, "--hub-apiserver", join.HubAPIServer,
		"--cluster-name", "cluster1", "--ca-cert-hash", join.CACertHashes[0], "--image", "example.com/ocm-controller:"+componentVersion))
	clitest.ExpectOK(t, onHub.Run(ctx, "accept", "--clusters", "cluster1", "--wait", "--timeout", "3m"))

	t.Run("the running hub controller and agent report their versions", func(t *testing.T) {
		var last clitest.Result
		framework.Eventually(ctx, t, 2*time.Minute, "cluster1's agent version in kubectl ocm version", func(ctx context.Context) (bool, error) {
			last = onHub.Run(ctx, "version", "-o", "json")
			res, err := decode(last)
			if err != nil || res.Hub == nil || len(res.Hub.ManagedClusters) != 1 {
				return false, err
			}
			return res.Hub.ManagedClusters[0].AgentVersion == componentVersion, nil
		})
		res, _ := decode(last)
		if res.Hub.ControllerVersion != componentVersion || res.Hub.ClientSkew.Verdict != pkgversion.Supported || len(res.Warnings) != 0 {
			t.Errorf("hub controller %q, plugin skew %+v, warnings %q; want %s, Supported and none", res.Hub.ControllerVersion, res.Hub.ClientSkew, res.Warnings, componentVersion)
		}
		r := onHub.Run(ctx, "version")
		clitest.ExpectOK(t, r, "Client Version: "+pluginVersion, "Hub Controller Version: "+componentVersion+"\n",
			"NAME       AVAILABLE   AGENT VERSION   KUBERNETES VERSION   SKEW", "cluster1   True        "+componentVersion)
		if r.ErrOut != "" {
			t.Errorf("stderr of a fleet within the policy: %s", r.ErrOut)
		}
	})

	t.Run("agents outside the policy are named with the fix", func(t *testing.T) {
		writeAgentVersion(ctx, t, admin, "old", "v0.4.3")
		writeAgentVersion(ctx, t, admin, "newer", "v0.8.0")
		r := onHub.Run(ctx, "version")
		clitest.ExpectOK(t, r, "cluster1   True        "+componentVersion, "newer", "unsupported: newer than the hub controller "+componentVersion,
			"old", "unsupported: 3 minor versions older than the hub controller "+componentVersion)
		for _, want := range []string{
			"Warning: the agents of 2 managed clusters are outside the supported version skew",
			"\n  newer: agent v0.8.0, newer than the hub controller " + componentVersion + "\n",
			"\n  old: agent v0.4.3, 3 minor versions older", "`kubectl ocm upgrade klusterlet --bundle-version " + componentVersion + " --context <cluster>`", "`kubectl ocm upgrade hub`", "upgrade the hub first",
		} {
			if !strings.Contains(r.ErrOut, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.ErrOut)
			}
		}
		if strings.Contains(r.ErrOut, "cluster1") {
			t.Errorf("the warning names cluster1, whose agent is within the policy:\n%s", r.ErrOut)
		}
	})

	t.Run("a plugin outside the policy is warned about", func(t *testing.T) {
		stampPlugin(t, "v0.5.0")
		r := onHub.Run(ctx, "version")
		clitest.ExpectOK(t, r, "Client Version: v0.5.0")
		if !strings.Contains(r.ErrOut, "Warning: kubectl-ocm v0.5.0 is outside the supported version skew: 2 minor versions older than the hub controller "+componentVersion) {
			t.Errorf("stderr lacks the plugin's skew warning:\n%s", r.ErrOut)
		}
	})

	t.Run("--client asks no hub", func(t *testing.T) {
		r := clitest.CLI{Kubeconfig: env.Kubeconfig(), Context: "hub"}.Run(ctx, "version", "--client", "--server", "https://127.0.0.1:1")
		clitest.ExpectOK(t, r, "Client Version: ")
		if strings.Contains(r.Out, "Hub") || r.ErrOut != "" {
			t.Errorf("--client printed hub information:\n%s\n%s", r.Out, r.ErrOut)
		}
	})
}

// stampPlugin makes the in-process plugin report v until the test ends, as
// a kubectl-ocm built with -ldflags -X would.
func stampPlugin(t *testing.T, v string) {
	old := pkgversion.Version
	pkgversion.Version = v
	t.Cleanup(func() { pkgversion.Version = old })
}

// decode reads the -o json output of `kubectl ocm version`.
func decode(r clitest.Result) (*version.Result, error) {
	if r.Err != nil {
		return nil, r.Err
	}
	res := &version.Result{}
	return res, json.Unmarshal([]byte(r.Out), res)
}

// writeAgentVersion creates ManagedCluster name and writes, as the hub
// admin, the status its agent would report if it ran version v.
func writeAgentVersion(ctx context.Context, t *testing.T, admin client.Client, name, v string) {
	t.Helper()
	mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := admin.Create(ctx, mc); err != nil {
		t.Fatalf("create ManagedCluster %s: %v", name, err)
	}
	base := mc.DeepCopy()
	mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{pkgversion.AgentClaim(v)}
	if err := admin.Status().Patch(ctx, mc, client.MergeFrom(base)); err != nil {
		t.Fatalf("write the agent version of ManagedCluster %s: %v", name, err)
	}
}
