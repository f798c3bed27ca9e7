package framework

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/images"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/registry"
)

func TestPrivateRegistryAndLoadImage(t *testing.T) {
	SkipIfShort(t)
	layouts, err := DefaultImages()
	require.NoError(t, err)
	controller := config.DefaultImageRegistry + "/" + config.ControllerImageName
	env := StartForTestWith(t, Options{Clusters: []string{"hub"}, Nodes: true, Images: layouts, PrivateImages: []string{controller}})
	cs := env.Cluster("hub").Clientset()
	ctx := t.Context()

	t.Run("the ocm-controller images are in the private registry, for its credentials only", func(t *testing.T) {
		p := env.PrivateRegistry()
		var n int
		for _, image := range env.Images() {
			if !strings.HasPrefix(image, controller+":") {
				continue
			}
			n++
			private, err := p.Name(image)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(private, "localhost:5001/kubectl-ocm/ocm-controller:"), private)
			// The same image where the private registry listens on the host.
			tag, err := name.ParseReference(p.Address+strings.TrimPrefix(private, p.Host), name.Insecure)
			require.NoError(t, err)
			_, err = remote.Head(tag, remote.WithContext(ctx), remote.WithAuth(&authn.Basic{Username: p.Username, Password: p.Password}))
			require.NoError(t, err, "%s in the private registry", image)
			_, err = remote.Head(tag, remote.WithContext(ctx))
			require.ErrorContains(t, err, "401 Unauthorized", "%s without credentials", image)
		}
		assert.Positive(t, n, "the environment has ocm-controller images: %v", env.Images())
	})

	t.Run("a Pod pulls from the private registry only with its credentials", func(t *testing.T) {
		p := env.PrivateRegistry()
		require.NotNil(t, p)
		assert.Equal(t, "localhost:5001", p.Host)
		image, err := p.Name("index.docker.io/library/busybox:latest")
		require.NoError(t, err)
		assert.Equal(t, "localhost:5001/library/busybox:latest", image)
		image = p.Host + "/kubectl-ocm/box:v1"
		require.NoError(t, env.TagImage(ctx, images.Busybox, image))

		wrong := *p
		wrong.Password = "wrong"
		for name, config := range map[string][]byte{"private-registry": p.DockerConfigJSON(), "wrong-password": wrong.DockerConfigJSON()} {
			_, err := cs.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
				Type:       corev1.SecretTypeDockerConfigJson,
				Data:       map[string][]byte{corev1.DockerConfigJsonKey: config},
			}, metav1.CreateOptions{})
			require.NoError(t, err)
		}
		// The failures first, each pulling anew: an image on the node
		// already would not be pulled again. What the kubelet says is what
		// a user sees in the Pod's status, and what tools that explain a
		// failed pull recognize.
		cases := []struct{ pod, secret, says string }{
			// Without credentials, containerd answers the Basic challenge
			// with nothing.
			{"no-secret", "", "pull access denied, repository does not exist or may require authorization: authorization failed: no basic auth credentials"},
			// With wrong ones, the registry's 401 after the challenge.
			{"wrong-password", "wrong-password", "unexpected status from HEAD request to http://localhost:5001/v2/kubectl-ocm/box/manifests/v1: 401 Unauthorized"},
		}
		for _, tc := range cases {
			createPullPod(t, cs, tc.pod, image, tc.secret)
		}
		for _, tc := range cases {
			for _, reason := range []string{"ErrImagePull", "ImagePullBackOff"} {
				waiting := waitPullFailure(t, cs, tc.pod, reason)
				t.Logf("Pod %s: waiting %s: %s", tc.pod, waiting.Reason, waiting.Message)
				assert.Contains(t, waiting.Message, `failed to pull and unpack image "`+image+`"`)
				assert.Contains(t, waiting.Message, tc.says)
			}
		}
		createPullPod(t, cs, "with-secret", image, "private-registry")
		waitSucceeded(t, cs, "with-secret")
	})

	t.Run("images loaded from a docker save archive and an OCI layout run", func(t *testing.T) {
		// The sandbox's busybox, saved under new names.
		ref, err := name.ParseReference(env.Registry()+"/docker.io/library/busybox:latest", name.Insecure)
		require.NoError(t, err)
		img, err := remote.Image(ref, remote.WithContext(ctx))
		require.NoError(t, err)
		dir := t.TempDir()
		saved := filepath.Join(dir, "saved.tar")
		require.NoError(t, tarball.MultiRefWriteToFile(saved, map[name.Reference]v1.Image{
			name.MustParseReference("registry.load.test/tools/saved:v1"): img,
		}))
		oci := filepath.Join(dir, "layout")
		l, err := layout.Write(oci, empty.Index)
		require.NoError(t, err)
		require.NoError(t, l.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "v2"})))

		names, err := env.LoadImage(ctx, saved, "")
		require.NoError(t, err)
		assert.Equal(t, []string{"registry.load.test/tools/saved:v1"}, names)
		_, err = env.LoadImage(ctx, oci, "")
		require.ErrorIs(t, err, ErrNoRepository, "a layout entry named only by a tag needs a repository")
		names, err = env.LoadImage(ctx, oci, "docker.io/load-test/layout")
		require.NoError(t, err)
		assert.Equal(t, []string{"index.docker.io/load-test/layout:v2"}, names)

		for pod, image := range map[string]string{"saved": "registry.load.test/tools/saved:v1", "layout": "load-test/layout:v2"} {
			createPullPod(t, cs, pod, image, "")
			waitSucceeded(t, cs, pod)
		}
	})

	t.Run("another process loads images by the environment's directory", func(t *testing.T) {
		names, err := LoadImageInto(ctx, env.Dir(), filepath.Join(mustRepoRoot(t), "dist", "sandbox", "layout"), "")
		require.NoError(t, err)
		assert.Contains(t, names, "index.docker.io/library/busybox:latest")
		_, err = LoadImageInto(ctx, t.TempDir(), filepath.Join(mustRepoRoot(t), "dist", "sandbox", "layout"), "")
		assert.ErrorContains(t, err, "no registry of an environment with nodes in")
		hosts, err := filepath.Glob(filepath.Join(env.Dir(), "hub", "node", "certs.d", "*", "hosts.toml"))
		require.NoError(t, err)
		var got []string
		for _, h := range hosts {
			got = append(got, filepath.Base(filepath.Dir(h)))
		}
		assert.Contains(t, got, registry.PrivateHost)
		assert.Contains(t, got, "registry.load.test")
	})
}

// createPullPod creates a Pod running image's echo on cluster cs, pulling it
// always, with imagePullSecret secret if not empty.
func createPullPod(t *testing.T, cs kubernetes.Interface, pod, image, secret string) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: "default"},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name: "main", Image: image, ImagePullPolicy: corev1.PullAlways, Command: []string{"echo", "pulled"},
			}},
		},
	}
	if secret != "" {
		p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: secret}}
	}
	_, err := cs.CoreV1().Pods("default").Create(t.Context(), p, metav1.CreateOptions{})
	require.NoError(t, err)
}

// waitPullFailure waits until Pod pod's container waits for reason
// (ErrImagePull, ImagePullBackOff), and returns that state.
func waitPullFailure(t *testing.T, cs kubernetes.Interface, pod, reason string) corev1.ContainerStateWaiting {
	t.Helper()
	var waiting corev1.ContainerStateWaiting
	Eventually(t.Context(), t, 2*time.Minute, "Pod "+pod+" to wait with "+reason, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, pod, metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil {
			return false, err
		}
		waiting = *p.Status.ContainerStatuses[0].State.Waiting
		return waiting.Reason == reason, nil
	})
	return waiting
}

// waitSucceeded waits until Pod pod has succeeded.
func waitSucceeded(t *testing.T, cs kubernetes.Interface, pod string) {
	t.Helper()
	Eventually(t.Context(), t, 2*time.Minute, "Pod "+pod+" to succeed", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Status.Phase != corev1.PodSucceeded {
			return false, fmt.Errorf("phase %s: %+v", p.Status.Phase, p.Status.ContainerStatuses)
		}
		return true, nil
	})
}

func mustRepoRoot(t *testing.T) string {
	t.Helper()
	root, err := RepoRoot()
	require.NoError(t, err)
	return root
}
