package e2e

import (
	"context"
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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testRegistrationOperatorGuide follows OCM's registration-operator guide on
// a cluster that is its own hub, as written: the cluster's kubeconfig in a
// file of its own (KUBECONFIG), `MANAGED_CLUSTER=cluster1 make deploy`, then
// "What is next": kubectl get csr, kubectl certificate approve, and a patch
// of hubAcceptsClient; the cluster joins. `make clean-deploy` removes it all.
func testRegistrationOperatorGuide(t *testing.T) {
	parallel(t)
	f := startFleet(t, "cluster1")
	root, err := framework.RepoRoot()
	require.NoError(t, err)
	work := t.TempDir()
	raw, err := os.ReadFile(f.env.Kubeconfig())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(work, ".kubeconfig"), raw, 0o600))
	kubeBin, err := framework.KubeBinDir()
	require.NoError(t, err)
	kubectl := filepath.Join(kubeBin, "kubectl")
	// run runs a command of the guide with the kubeconfig and MANAGED_CLUSTER
	// set as the guide sets them; make runs the repository's Makefile, with
	// the kubectl-ocm under test.
	run := func(name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(work, ".kubeconfig"), "MANAGED_CLUSTER=cluster1", "KUBECTL_OCM="+bins.kubectlOCM)
		out, err := cmd.CombinedOutput()
		t.Logf("$ %s %s\n%s", filepath.Base(name), strings.Join(args, " "), out)
		require.NoError(t, err, "%s %s", name, strings.Join(args, " "))
		return string(out)
	}
	run("make", "--no-print-directory", "deploy")

	c := f.env.Cluster("cluster1").Client()
	var csrName string
	framework.Eventually(t.Context(), t, 2*time.Minute, "a certificate request of cluster1", func(ctx context.Context) (bool, error) {
		list := &certificatesv1.CertificateSigningRequestList{}
		if err := c.List(ctx, list, client.MatchingLabels{"open-cluster-management.io/cluster-name": "cluster1"}); err != nil {
			return false, err
		}
		for _, r := range list.Items {
			csrName = r.Name
		}
		return csrName != "", nil
	})
	assert.Contains(t, run(kubectl, "get", "csr"), csrName)
	assert.Contains(t, run(kubectl, "get", "managedcluster"), "cluster1")
	run(kubectl, "certificate", "approve", csrName)
	run(kubectl, "patch", "managedcluster", "cluster1", `-p={"spec":{"hubAcceptsClient":true}}`, "--type=merge")
	waitJoinedAvailable(t, c, "cluster1")

	run("make", "--no-print-directory", "clean-deploy")
	framework.Eventually(t.Context(), t, 3*time.Minute, "the hub and the agent removed", func(ctx context.Context) (bool, error) {
		for _, ns := range []string{config.AgentNamespace, config.HubNamespace, operatorv1.OperatorNamespace} {
			err := c.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
			if !apierrors.IsNotFound(err) {
				return false, client.IgnoreNotFound(err)
			}
		}
		return true, nil
	})
}
