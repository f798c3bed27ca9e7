package podcauses

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	hubcli "github.com/kubectl-ocm/kubectl-ocm/plugins/hub"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// clusterName is the managed cluster the hosted agent registers; the hub
// is its own hosting and managed cluster.
const clusterName = "c1"

// TestWaitingVerbsNamePodCauses runs the waiting verbs against a hub whose
// node runs the product's Pods, first with an image that does not exist,
// then with a hosted agent that crashes.
func TestWaitingVerbsNamePodCauses(t *testing.T) {
	framework.SkipIfShort(t)
	layouts, err := framework.DefaultImages()
	if err != nil {
		t.Fatal(err)
	}
	tag, err := framework.LayoutTag(layouts[1].Dir)
	if err != nil {
		t.Fatal(err)
	}
	image := config.ControllerImage(config.DefaultImageRegistry, tag)
	env := framework.StartForTestWith(t, framework.Options{Clusters: []string{"hub"}, Nodes: true, Images: layouts})
	hub := env.Cluster("hub")
	onHub := clitest.CLI{Kubeconfig: env.Kubeconfig()}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()

	t.Run("hub init --wait names an image that does not exist, and the fix", func(t *testing.T) {
		missing := config.ControllerImage(config.DefaultImageRegistry, "does-not-exist")
		start := time.Now()
		r := onHub.Run(ctx, "hub", "init", "--wait", "--timeout", "30s", "--image", missing)
		t.Logf("hub init ended after %s:\n%s\n%v", time.Since(start).Round(time.Second), r.ErrOut, r.Err)
		clitest.ExpectErr(t, r, "timed out after 30s", "Deployment open-cluster-management/cluster-manager",
			"for image "+missing, "To fix: "+cli.ImageFlagsFix)
		if r.Err != nil {
			assert.Regexp(t, deploystatus.ReasonImagePullBackOff+"|"+deploystatus.ReasonErrImagePull, r.Err.Error(), "the error names the pull failure")
		}
		if !strings.Contains(r.ErrOut, "container operator: ") || !strings.Contains(r.ErrOut, "for image "+missing) {
			t.Errorf("the progress does not name the Pod while it waits:\n%s", r.ErrOut)
		}
	})

	start := time.Now()
	clitest.ExpectOK(t, onHub.Run(ctx, "hub", "init", "--wait", "--timeout", "3m", "--image", image))
	t.Logf("hub init --wait with %s took %s", image, time.Since(start).Round(time.Second))

	t.Run("upgrade names a crashing agent with its last log lines", func(t *testing.T) {
		ns := config.HostedKlusterletName(clusterName)
		joinHosted(ctx, t, env, onHub, image)
		c := hub.Client()
		framework.Eventually(ctx, t, 2*time.Minute, "the hosted agent's Pod", func(ctx context.Context) (bool, error) {
			pods := &corev1.PodList{}
			err := c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/name": "klusterlet-agent"})
			return err == nil && len(pods.Items) > 0, err
		})
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: config.ManagedKubeconfigSecret}}
		if err := c.Get(ctx, client.ObjectKeyFromObject(secret), secret); err != nil {
			t.Fatal(err)
		}
		secret.Data = map[string][]byte{"kubeconfig": []byte("this is not a kubeconfig\x00")}
		if err := c.Update(ctx, secret); err != nil {
			t.Fatal(err)
		}
		if err := c.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/name": "klusterlet-agent"}); err != nil {
			t.Fatal(err)
		}
		framework.Eventually(ctx, t, 2*time.Minute, "the hosted agent in CrashLoopBackOff", func(ctx context.Context) (bool, error) {
			pods := &corev1.PodList{}
			if err := c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/name": "klusterlet-agent"}); err != nil {
				return false, err
			}
			for _, p := range pods.Items {
				for _, s := range p.Status.ContainerStatuses {
					if p.DeletionTimestamp == nil && s.State.Waiting != nil && s.State.Waiting.Reason == deploystatus.ReasonCrashLoopBackOff {
						return true, nil
					}
				}
			}
			return false, nil
		})
		start := time.Now()
		r := onHub.Run(ctx, "upgrade", "klusterlet", ns, "--image", image, "--timeout", "20s")
		t.Logf("upgrade klusterlet ended after %s:\n%s\n%v", time.Since(start).Round(time.Second), r.ErrOut, r.Err)
		clitest.ExpectErr(t, r, "timed out after 20s", deploystatus.ReasonCrashLoopBackOff, "last exit code 1",
			"The last Pod-level cause seen of Deployment "+ns+"/"+ns+"-agent", "Last log lines of container agent:",
			config.ManagedKubeconfigSecret, "`kubectl logs -n "+ns+" ")
		if !strings.Contains(r.ErrOut, deploystatus.ReasonCrashLoopBackOff) {
			t.Errorf("the progress does not name the crash loop while it waits:\n%s", r.ErrOut)
		}

		t.Run("without the right to read Pods, the Deployment's own state is named", func(t *testing.T) {
			grantWithoutPods(ctx, t, c, "no-pods")
			r := onHub.Run(ctx, "upgrade", "klusterlet", ns, "--image", image, "--timeout", "5s", "--as", "no-pods")
			clitest.ExpectErr(t, r, "timed out after 5s", "Deployment "+ns+"/"+ns+"-agent: 0 of 1 updated replicas available")
			if r.Err != nil {
				assert.NotContains(t, r.Err.Error(), "Pod-level", "a user who may not read Pods got a Pod-level cause")
			}
		})
	})
}

// grantWithoutPods lets user read Klusterlets and Deployments, and nothing
// of Pods.
func grantWithoutPods(ctx context.Context, t *testing.T, c client.Client, user string) {
	t.Helper()
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "podcauses-" + user},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{operatorv1.GroupVersion.Group}, Resources: []string{"klusterlets"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list"}},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	for _, obj := range []client.Object{role, binding} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
}

// joinHosted joins cluster c1 in hosted mode with its agent on the hub,
// which is also the managed cluster, running image.
func joinHosted(ctx context.Context, t *testing.T, env *framework.Environment, onHub clitest.CLI, image string) {
	t.Helper()
	hub := env.Cluster("hub")
	r := onHub.Run(ctx, "hub", "token", "--cluster-name", clusterName, "-o", "json")
	clitest.ExpectOK(t, r)
	var join hubcli.JoinInfo
	if err := json.Unmarshal([]byte(r.Out), &join); err != nil {
		t.Fatalf("hub token -o json: %v\n%s", err, r.Out)
	}
	dir := t.TempDir()
	ca, managed := filepath.Join(dir, "hub-ca.crt"), filepath.Join(dir, "managed.kubeconfig")
	if err := os.WriteFile(ca, hub.CAData(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := framework.WriteKubeconfig(managed, "hub", hub.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	clitest.ExpectOK(t, onHub.Run(ctx, "join", "--hub-token", join.HubToken, "--hub-apiserver", join.HubAPIServer, "--ca-file", ca,
		"--cluster-name", clusterName, "--mode", "hosted", "--managed-cluster-kubeconfig", managed, "--image", image))
}
