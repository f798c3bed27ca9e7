package deploystatus

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
)

// The image of the tests, in a plain-http registry that asks for basic auth.
const privateImage = "registry.local:5000/ocm/ocm-controller:v1"

// containerd 2.x's messages as the kubelet reports them in a container's
// waiting state: the CRI plugin's "failed to pull and unpack image", around
// the resolver's error.
const (
	pullPrefix = `failed to pull and unpack image "` + privateImage + `": failed to resolve reference "` + privateImage + `": `
	// no credentials for a registry whose 401 asks for basic auth
	noCredentials = pullPrefix + "pull access denied, repository does not exist or may require authorization: authorization failed: no basic auth credentials"
	// credentials the registry refuses: it answers the authorized request with 401 again
	wrongCredentials = pullPrefix + "unexpected status from HEAD request to http://registry.local:5000/v2/ocm/ocm-controller/manifests/v1: 401 Unauthorized"
	// credentials of a user the registry denies the repository
	forbidden = pullPrefix + "unexpected status from HEAD request to http://registry.local:5000/v2/ocm/ocm-controller/manifests/v1: 403 Forbidden"
	// a token registry whose token request fails
	tokenRefused = pullPrefix + "failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://auth.registry.local/token?scope=repository%3Aocm%2Focm-controller%3Apull&service=registry: 401 Unauthorized"
	// a token registry that refuses the scope
	insufficientScope = pullPrefix + "pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed"
	// causes that are no credentials'
	notFound     = pullPrefix + privateImage + ": not found"
	refused      = pullPrefix + `failed to do request: Head "https://registry.local:5000/v2/ocm/ocm-controller/manifests/v1": dial tcp 10.0.0.9:5000: connect: connection refused`
	httpRegistry = pullPrefix + `failed to do request: Head "https://registry.local:5000/v2/ocm/ocm-controller/manifests/v1": http: server gave HTTP response to HTTPS client`
)

// TestImageCause checks the named cause of an image pull against
// containerd's messages, as ErrImagePull and, with the kubelet's back-off
// prefix, as ImagePullBackOff: the summary keeps the reason and names the
// cause, and the fix names the image pull Secret and the image's registry.
func TestImageCause(t *testing.T) {
	tests := []struct {
		name, message string
		unauthorized  bool
	}{
		{"no credentials", noCredentials, true},
		{"wrong credentials", wrongCredentials, true},
		{"forbidden", forbidden, true},
		{"token request refused", tokenRefused, true},
		{"insufficient scope", insufficientScope, true},
		{"not found", notFound, false},
		{"connection refused", refused, false},
		{"plain-http registry without its hosts.toml", httpRegistry, false},
	}
	for _, tt := range tests {
		for reason, message := range map[string]string{
			ReasonErrImagePull:     tt.message,
			ReasonImagePullBackOff: `Back-off pulling image "` + privateImage + `": ErrImagePull: ` + tt.message,
		} {
			t.Run(tt.name+"/"+reason, func(t *testing.T) {
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Namespace: "open-cluster-management", Name: "klusterlet-1"},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "operator", Image: privateImage}}},
					Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "operator",
						State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}}},
				}
				c := podCause(pod, "the verb's fix")
				if c == nil {
					t.Fatal("no cause")
				}
				summary := c.Summary()
				if !tt.unauthorized {
					if c.ImageCause != "" || c.Fix != "the verb's fix" || strings.Contains(summary, ImageCauseUnauthorized) {
						t.Errorf("cause %q, fix %q, summary %q: want no named cause and the verb's fix", c.ImageCause, c.Fix, summary)
					}
					return
				}
				want := "Pod open-cluster-management/klusterlet-1, container operator: " + reason + ": unauthorized for image " + privateImage + ": " + message
				if summary != want {
					t.Errorf("summary\n%s\nwant\n%s", summary, want)
				}
				for _, w := range []string{"open-cluster-management/" + pullsecret.Name, "--image-pull-credentials <docker config.json>", "registry.local:5000"} {
					if !strings.Contains(c.Fix, w) {
						t.Errorf("fix %q lacks %q", c.Fix, w)
					}
				}
			})
		}
	}
}

// TestImageCauseOnlyOfPulls checks that a message of another reason that
// holds a text of the table names no image cause.
func TestImageCauseOnlyOfPulls(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "c", Image: privateImage,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: ReasonCreateContainerConfigError, Message: "401 Unauthorized"}}}}},
	}
	if c := podCause(pod, "fix"); c == nil || c.ImageCause != "" {
		t.Errorf("cause %+v: want one without an image cause", c)
	}
}
