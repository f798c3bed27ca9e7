package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testPrivateRegistryInstall installs the hub and joins cluster1 from the
// sandbox's registry that requires credentials, as a team installs from its
// own mirror: hub init and join name it with --image-registry and hand the
// nodes its credentials with --image-pull-credentials. A join with a wrong
// password fails its wait naming the cause, ImagePullBackOff: unauthorized,
// and the same join with the right one then completes.
func testPrivateRegistryInstall(t *testing.T) {
	parallel(t)
	f := startFleetWith(t, framework.Options{Clusters: []string{"hub", "cluster1"}, PrivateImages: []string{config.DefaultImageRegistry + "/" + config.ControllerImageName}})
	reg := f.env.PrivateRegistry()
	require.NotNil(t, reg)
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "registry.json"), filepath.Join(dir, "wrong.json")
	require.NoError(t, os.WriteFile(good, reg.DockerConfigJSON(), 0o600))
	wrong := *reg
	wrong.Password += "-wrong"
	require.NoError(t, os.WriteFile(bad, wrong.DockerConfigJSON(), 0o600))
	mirror := reg.Host + "/kubectl-ocm"

	out := f.ocm(t, "hub", "init", "--context", "hub", "--wait", "--image-registry", mirror, "--image-pull-credentials", good)
	hub := f.env.Cluster("hub").Client()
	assertPulledFrom(t, hub, reg.Host, operatorv1.OperatorNamespace, config.HubNamespace)

	token, apiserver := joinArgs(t, out)
	join := append([]string{"join", "--hub-token", token, "--hub-apiserver", apiserver, "--cluster-name", "cluster1", "--context", "cluster1", "--image-registry", mirror}, pinFlags(t, out)...)
	out, err := f.tryOCM(t, append(join, "--image-pull-credentials", bad, "--wait", "--timeout", "45s")...)
	require.Error(t, err, "join waited for an agent whose image the nodes cannot pull:\n%s", out)
	assert.Contains(t, out, "ImagePullBackOff: unauthorized", "the wait names the registry's refusal")
	assert.Contains(t, out, "--image-pull-credentials", "the fix names the flag")

	f.ocm(t, append(join, "--image-pull-credentials", good, "--wait")...)
	f.ocm(t, "accept", "--clusters", "cluster1", "--context", "hub", "--wait")
	waitJoinedAvailable(t, hub, "cluster1")
	assertPulledFrom(t, f.env.Cluster("cluster1").Client(), reg.Host, operatorv1.OperatorNamespace, config.AgentNamespace)
}

// assertPulledFrom checks that every Deployment in namespaces runs images
// of registry host and lists the image pull Secret.
func assertPulledFrom(t *testing.T, c client.Client, host string, namespaces ...string) {
	t.Helper()
	for _, ns := range namespaces {
		deps := &appsv1.DeploymentList{}
		require.NoError(t, c.List(context.Background(), deps, client.InNamespace(ns)))
		require.NotEmpty(t, deps.Items, "no Deployment in %s", ns)
		for _, d := range deps.Items {
			spec := d.Spec.Template.Spec
			for _, ctr := range spec.Containers {
				assert.True(t, strings.HasPrefix(ctr.Image, host+"/"), "Deployment %s/%s runs %s", ns, d.Name, ctr.Image)
			}
			names := []string{}
			for _, s := range spec.ImagePullSecrets {
				names = append(names, s.Name)
			}
			assert.Contains(t, names, pullsecret.Name, "Deployment %s/%s", ns, d.Name)
		}
	}
}
