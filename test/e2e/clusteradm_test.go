package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// helloWork is the Pod of the install guide's "Apply a Manifestwork", as a
// file for `create work -f`.
const helloWork = `apiVersion: v1
kind: Pod
metadata:
  name: hello
  namespace: default
spec:
  containers:
    - name: hello
      image: busybox
      command: ["sh", "-c", 'echo "Hello, Kubernetes!" && sleep 3600']
  restartPolicy: OnFailure
`

// testClusteradmQuickStart runs OCM's quick start as a clusteradm user's
// script: the commands of the install guide ("Start the control plane",
// "Register a cluster", "Detach the cluster from hub") and of clusteradm's
// command reference (get token, get clusters, create/get/delete work, addon
// enable/disable, get addon, get hub-info, get klusterlet-info, clean),
// each written as documented with `clusteradm` replaced by `kubectl ocm`
// and nothing else changed, typed into a shell where kubectl runs the
// plugin. Each either works, checked by what it did, or fails with
// "unknown command" or the hint naming the native spelling.
func testClusteradmQuickStart(t *testing.T) {
	parallel(t)
	f := startFleet(t, "hub", "cluster1")
	hub, managed := f.env.Cluster("hub").Client(), f.env.Cluster("cluster1").Client()
	sh := newClusteradmShell(t, f)

	// Start the control plane.
	out := sh.ok(t, `clusteradm init --wait --context ${CTX_HUB_CLUSTER}`)
	assert.Contains(t, out, "kubectl ocm join --hub-token ", "init prints the join command")
	assert.Contains(t, sh.ok(t, `kubectl -n open-cluster-management get pod --context ${CTX_HUB_CLUSTER}`), "Running")
	assert.Contains(t, sh.ok(t, `kubectl -n open-cluster-management-hub get pod --context ${CTX_HUB_CLUSTER}`), "Running")
	assert.Contains(t, sh.ok(t, `kubectl get clustermanager cluster-manager -o yaml --context ${CTX_HUB_CLUSTER}`), "kind: ClusterManager")

	// "If it's lost, you can use clusteradm get token to get the generated
	// command again"; scripts parse its JSON under clusteradm's keys.
	tokenOut := sh.ok(t, `clusteradm get token --context ${CTX_HUB_CLUSTER}`)
	token, apiserver := joinArgs(t, tokenOut)
	pin := pinFlags(t, tokenOut)[1]
	var info map[string]any
	require.NoError(t, json.Unmarshal([]byte(sh.ok(t, `clusteradm get token --context ${CTX_HUB_CLUSTER} -o json 2>/dev/null`)), &info))
	assert.NotEmpty(t, info["hub-token"], "get token -o json: hub-token")
	assert.Equal(t, apiserver, info["hub-apiserver"], "get token -o json: hub-apiserver")

	// Register a cluster. As documented, clusteradm's join trusts whatever
	// CA the hub hands out; kubectl ocm join refuses to send the token to a
	// hub it has not verified, and names the pin the printed join command
	// carries (one deliberate difference).
	documented := strings.NewReplacer("<your token data>", token, "<your hub cluster endpoint>", apiserver).Replace(
		`clusteradm join --hub-token <your token data> --hub-apiserver <your hub cluster endpoint> --wait --cluster-name "cluster1" --context ${CTX_MANAGED_CLUSTER}`)
	out = sh.fails(t, documented)
	assert.Contains(t, out, "join verifies the hub before it sends the token: pass --ca-cert-hash", "join without a pin names --ca-cert-hash")
	assert.Contains(t, out, "--ca-file", "join without a pin names --ca-file")
	// With the pin: join --wait returns once the hub has the registration,
	// before anyone accepted it, and says what comes next.
	out = sh.ok(t, documented+" --ca-cert-hash "+pin)
	assert.Contains(t, out, "kubectl ocm accept --clusters cluster1", "join names the next step")
	mc := &clusterv1.ManagedCluster{}
	require.NoError(t, hub.Get(t.Context(), client.ObjectKey{Name: "cluster1"}, mc), "join --wait returned before the hub had ManagedCluster cluster1")
	assert.False(t, mc.Spec.HubAcceptsClient, "nobody accepted cluster1 yet")
	require.NotEmpty(t, pendingCSRs(t, hub, "cluster1"), "join --wait returned before the hub had cluster1's certificate request")
	assert.Contains(t, sh.ok(t, `kubectl get csr --context ${CTX_HUB_CLUSTER} | grep cluster1`), "Pending")

	// Accept the join request and verify.
	sh.ok(t, `clusteradm accept --clusters cluster1 --context ${CTX_HUB_CLUSTER}`)
	waitJoinedAvailable(t, hub, "cluster1")
	assert.Contains(t, sh.ok(t, `kubectl -n open-cluster-management-agent get pod --context ${CTX_MANAGED_CLUSTER}`), "Running")
	assert.Contains(t, sh.ok(t, `kubectl get managedcluster --context ${CTX_HUB_CLUSTER}`), "cluster1")
	assert.Contains(t, sh.ok(t, `clusteradm get clusters --context ${CTX_HUB_CLUSTER}`), "cluster1")
	assert.Contains(t, sh.ok(t, `clusteradm get hub-info --context ${CTX_HUB_CLUSTER}`), "ClusterManager")
	assert.Contains(t, sh.ok(t, `clusteradm get klusterlet-info --context ${CTX_MANAGED_CLUSTER}`), "cluster1")

	// Works, as clusteradm's reference spells them.
	require.NoError(t, os.WriteFile(filepath.Join(sh.dir, "work.yaml"), []byte(helloWork), 0o600))
	sh.ok(t, `clusteradm create work my-first-work -f work.yaml --clusters cluster1 --context ${CTX_HUB_CLUSTER}`)
	waitWorkApplied(t, hub, "cluster1", "my-first-work", 2*time.Minute)
	assert.Contains(t, sh.ok(t, `clusteradm get works --clusters cluster1 --context ${CTX_HUB_CLUSTER}`), "my-first-work")
	// clusteradm's --cluster NAME is kubectl's --cluster here.
	out = sh.fails(t, `clusteradm get works --cluster cluster1 --context ${CTX_HUB_CLUSTER}`)
	assert.Contains(t, out, "--clusters cluster1", "the error names the native spelling")
	sh.ok(t, `clusteradm delete work my-first-work --clusters cluster1 --context ${CTX_HUB_CLUSTER}`)
	waitGone(t, managed, &corev1.Pod{}, "default", "hello")

	// Add-ons: the example add-on registered as its README says, then
	// clusteradm's addon enable, get addon and addon disable.
	sh.ok(t, `kubectl apply -f examples/addons/helloworld/ --context ${CTX_HUB_CLUSTER}`)
	sh.ok(t, `clusteradm addon enable --names helloworld --clusters cluster1 --context ${CTX_HUB_CLUSTER}`)
	framework.Eventually(t.Context(), t, 3*time.Minute, "add-on helloworld Available on cluster1", func(ctx context.Context) (bool, error) {
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: helloworld}, mca); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable), nil
	})
	assert.Contains(t, sh.ok(t, `clusteradm get addon --context ${CTX_HUB_CLUSTER}`), helloworld)
	sh.ok(t, `clusteradm addon disable --names helloworld --clusters cluster1 --context ${CTX_HUB_CLUSTER}`)
	waitGone(t, hub, &addonv1alpha1.ManagedClusterAddOn{}, "cluster1", helloworld)

	// Fleet namespaces: clusteradm clusterset set --namespaces; the agent
	// creates the namespace on the member cluster and the hub reports it.
	sh.ok(t, `clusteradm clusterset set default --namespaces team-a --context ${CTX_HUB_CLUSTER}`)
	framework.Eventually(t.Context(), t, 2*time.Minute, "namespace team-a on cluster1, reported available", func(ctx context.Context) (bool, error) {
		if err := managed.Get(ctx, client.ObjectKey{Name: "team-a"}, &corev1.Namespace{}); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
			return false, err
		}
		for _, ns := range mc.Status.ManagedNamespaces {
			if ns.Name == "team-a" && meta.IsStatusConditionTrue(ns.Conditions, clusterv1.ManagedNamespaceConditionAvailable) {
				return true, nil
			}
		}
		return false, nil
	})

	// A leaked bootstrap token is revoked: clusteradm delete token.
	sh.ok(t, `clusteradm delete token --context ${CTX_HUB_CLUSTER}`)

	// clusteradm commands kubectl ocm has no verb for fail, and say so.
	for _, line := range []string{
		`clusteradm proxy health --context ${CTX_HUB_CLUSTER}`,
		`clusteradm install hub-addon --names argocd --context ${CTX_HUB_CLUSTER}`,
	} {
		out := sh.fails(t, line)
		assert.Contains(t, out, "unknown command", line)
		assert.Contains(t, out, "clusteradm command", line)
	}

	// Detach the cluster from hub.
	sh.ok(t, `clusteradm unjoin --cluster-name "cluster1" --context ${CTX_MANAGED_CLUSTER}`)
	framework.Eventually(t.Context(), t, 2*time.Minute, "the agent's Pods gone from cluster1", func(context.Context) (bool, error) {
		out, err := sh.run(t, `kubectl -n open-cluster-management-agent get pod --context ${CTX_MANAGED_CLUSTER}`)
		return err == nil && strings.Contains(out, "No resources found"), nil
	})

	// Uninstall the OCM from the control plane: clean refuses while a
	// ManagedCluster is registered, as clusteradm's does, and says why.
	out = sh.fails(t, `clusteradm clean --context ${CTX_HUB_CLUSTER}`)
	assert.Contains(t, out, "cluster1", "clean names the cluster still registered")
	sh.ok(t, `kubectl delete managedcluster cluster1 --context ${CTX_HUB_CLUSTER}`)
	sh.ok(t, `clusteradm clean --context ${CTX_HUB_CLUSTER}`)
	for _, ns := range []string{config.HubNamespace, config.OperatorNamespace} {
		framework.Eventually(t.Context(), t, 2*time.Minute, "the Pods of "+ns+" gone from the hub", func(context.Context) (bool, error) {
			out, err := sh.run(t, `kubectl -n `+ns+` get pod --context ${CTX_HUB_CLUSTER}`)
			return err == nil && strings.Contains(out, "No resources found"), nil
		})
	}
	// The guide shows `the server doesn't have a resource type
	// "clustermanager"`; a kubectl that cached the CRD's discovery reports
	// the resource not found instead.
	out = sh.fails(t, `kubectl get clustermanager --context ${CTX_HUB_CLUSTER}`)
	assert.Contains(t, out, "clustermanager")
}

// pendingCSRs returns the names of the certificate requests of cluster
// that no one has approved or denied yet.
func pendingCSRs(t *testing.T, hub client.Client, cluster string) []string {
	t.Helper()
	list := &certificatesv1.CertificateSigningRequestList{}
	require.NoError(t, hub.List(t.Context(), list, client.MatchingLabels{clusterv1.ClusterNameLabelKey: cluster}))
	var names []string
	for _, r := range list.Items {
		if len(r.Status.Conditions) == 0 {
			names = append(names, r.Name)
		}
	}
	return names
}

// clusteradmShell runs command lines as a user types them into a shell:
// kubectl and kubectl-ocm on PATH, KUBECONFIG the fleet's, and the install
// guide's CTX_HUB_CLUSTER and CTX_MANAGED_CLUSTER set, in a directory of
// its own where the repository's examples are at examples/.
type clusteradmShell struct {
	dir string
	env []string
}

// newClusteradmShell returns the shell of f.
func newClusteradmShell(t *testing.T, f *fleet) *clusteradmShell {
	t.Helper()
	kubeBin, err := framework.KubeBinDir()
	require.NoError(t, err)
	root, err := framework.RepoRoot()
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.Symlink(filepath.Join(root, "examples"), filepath.Join(dir, "examples")))
	return &clusteradmShell{dir: dir, env: append(os.Environ(),
		"KUBECONFIG="+f.env.Kubeconfig(),
		"PATH="+filepath.Dir(bins.kubectlOCM)+string(os.PathListSeparator)+kubeBin+string(os.PathListSeparator)+os.Getenv("PATH"),
		// kubectl's discovery cache of its own, so that it sees the CRDs
		// come and go.
		"KUBECACHEDIR="+t.TempDir(),
		"CTX_HUB_CLUSTER=hub",
		"CTX_MANAGED_CLUSTER=cluster1",
	)}
}

// run runs line, with clusteradm replaced by kubectl ocm, in bash, and
// returns its output.
func (s *clusteradmShell) run(t *testing.T, line string) (string, error) {
	t.Helper()
	line = strings.ReplaceAll(line, "clusteradm ", "kubectl ocm ")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", line)
	cmd.Dir, cmd.Env = s.dir, s.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("$ %s\n%s", line, out.String())
	return out.String(), err
}

// ok runs line and fails the test unless it succeeds.
func (s *clusteradmShell) ok(t *testing.T, line string) string {
	t.Helper()
	out, err := s.run(t, line)
	require.NoError(t, err, "%s:\n%s", line, out)
	return out
}

// fails runs line and fails the test unless it fails.
func (s *clusteradmShell) fails(t *testing.T, line string) string {
	t.Helper()
	out, err := s.run(t, line)
	require.Error(t, err, "%s succeeded:\n%s", line, out)
	return out
}
