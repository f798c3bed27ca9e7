package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/stretchr/testify/require"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/join"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// TestJoinImagePullCredentials runs `join --image-pull-credentials` and
// `upgrade klusterlet --image-pull-credentials`: a bad file is refused
// before anything is installed; join writes the Secret next to the
// Klusterlet operator, whose Deployment references it, and the operator
// copies it to the agent and the add-on namespace, the agent Deployment
// referencing it, and the cluster registers; upgrade rewrites the Secret
// and the copies follow.
func TestJoinImagePullCredentials(t *testing.T) {
	t.Parallel() // a fleet of its own
	ctx, f := agenttest.StartFleet(t, 5*time.Minute, agenttest.FleetOptions{Options: framework.Options{Clusters: []string{clusterName}}})
	spoke := f.Env.Cluster(clusterName).Client()
	dir := t.TempDir()
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	first, second := `{"auths":{"registry.example:5000":{"auth":"dTpw"}}}`, `{"auths":{"registry.example:5000":{"auth":"dTpx"}}}`

	t.Run("a bad file installs nothing", func(t *testing.T) {
		streams, _, out, _ := genericiooptions.NewTestIOStreams()
		o := join.NewOptions(f.Flags(clusterName), streams)
		o.HubAPIServer, o.HubToken, o.ClusterName, o.CAFile = f.Hub.Server(), f.Token, clusterName, f.CAFile
		o.ImagePullCredentials = write("helm-values.yaml", "auths: {}\n")
		err := agenttest.RunJoin(ctx, o)
		require.ErrorContains(t, err, "--image-pull-credentials: image pull credentials "+o.ImagePullCredentials+" are not a docker config.json")
		if out.Len() != 0 {
			t.Errorf("join printed %q although it failed", out.String())
		}
		if err := spoke.Get(ctx, types.NamespacedName{Name: operatorv1.OperatorNamespace}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
			t.Errorf("namespace %s exists after a refused join (err %v)", operatorv1.OperatorNamespace, err)
		}
	})

	t.Run("join writes the Secret and the agent pulls with its copies", func(t *testing.T) {
		file := write("config.json", first)
		f.Join(ctx, t, clusterName, func(o *join.Options) { o.ImagePullCredentials = file })
		source := &corev1.Secret{}
		if err := spoke.Get(ctx, types.NamespacedName{Namespace: operatorv1.OperatorNamespace, Name: pullsecret.Name}, source); err != nil {
			t.Fatal(err)
		}
		if source.Type != corev1.SecretTypeDockerConfigJson || string(source.Data[corev1.DockerConfigJsonKey]) != first {
			t.Errorf("Secret %s: type %s, data %s", pullsecret.Name, source.Type, source.Data[corev1.DockerConfigJsonKey])
		}
		clitest.ExpectFieldManager(t, source, "kubectl-ocm/Apply")
		expectReference(ctx, t, spoke, operatorv1.OperatorNamespace, config.KlusterletOperatorName)
		expectReference(ctx, t, spoke, config.AgentNamespace, config.AgentDeployment)
		for _, ns := range []string{config.AgentNamespace, addonv1alpha1.DefaultAddonInstallNamespace} {
			waitCopy(ctx, t, spoke, ns, first)
		}
	})

	t.Run("upgrade klusterlet rewrites the Secret", func(t *testing.T) {
		cli := clitest.CLI{Kubeconfig: f.Env.Kubeconfig(), Context: clusterName}
		r := cli.Run(ctx, "upgrade", "klusterlet", "--image", agenttest.TestImage, "--wait=false", "--image-pull-credentials", write("second.json", second))
		clitest.ExpectOK(t, r)
		for _, ns := range []string{operatorv1.OperatorNamespace, config.AgentNamespace, addonv1alpha1.DefaultAddonInstallNamespace} {
			waitCopy(ctx, t, spoke, ns, second)
		}
	})
}

// expectReference waits until the Deployment namespace/name references
// the image pull Secret.
func expectReference(ctx context.Context, t *testing.T, c client.Client, namespace, name string) {
	t.Helper()
	framework.Eventually(ctx, t, time.Minute, fmt.Sprintf("Deployment %s/%s referencing %s", namespace, name, pullsecret.Name), func(ctx context.Context) (bool, error) {
		dep := &appsv1.Deployment{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, dep); err != nil {
			return false, err
		}
		if refs := dep.Spec.Template.Spec.ImagePullSecrets; !slices.Contains(refs, corev1.LocalObjectReference{Name: pullsecret.Name}) {
			return false, fmt.Errorf("imagePullSecrets %v", refs)
		}
		return true, nil
	})
}

// waitCopy waits until the image pull Secret in namespace holds data.
func waitCopy(ctx context.Context, t *testing.T, c client.Client, namespace, data string) {
	t.Helper()
	framework.Eventually(ctx, t, time.Minute, fmt.Sprintf("Secret %s/%s holding %s", namespace, pullsecret.Name, data), func(ctx context.Context) (bool, error) {
		s := &corev1.Secret{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: pullsecret.Name}, s); err != nil {
			return false, err
		}
		if got := s.Data[corev1.DockerConfigJsonKey]; !bytes.Equal(got, []byte(data)) {
			return false, fmt.Errorf("it holds %s", got)
		}
		return true, nil
	})
}
