package cli

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
)

// Fixes a waiting verb names for an ocm-controller image the nodes cannot
// pull.
const (
	// ImageFlagsFix is the fix of the verbs with --image and
	// --image-registry.
	ImageFlagsFix = "check the image name, pass --image-registry <registry> to pull from a mirror, or load the image into the nodes"
	// HubImageFix is the fix of the verbs that wait for the hub controller
	// without choosing its image.
	HubImageFix = "check the image name; `kubectl ocm upgrade hub --image-registry <registry>` pulls it from a mirror; or load the image into the nodes"
)

// NewInspector returns an Inspector of the Deployments of the cluster c
// reads, which reads the logs of their Pods with cfg (none when cfg is nil)
// and names imageFix for an image that cannot be pulled.
func NewInspector(c client.Reader, cfg *rest.Config, imageFix string) *deploystatus.Inspector {
	var pods corev1client.PodsGetter
	if cfg != nil {
		if cs, err := corev1client.NewForConfig(cfg); err == nil {
			pods = cs
		}
	}
	in := deploystatus.NewInspector(c, pods)
	in.ImageFix = imageFix
	return in
}

// DescribeNotReady returns state followed by what in finds about each of
// the Deployments keys that exists and is not rolled out: its report, or
// only its Pod-level cause when state names the Deployment already. The
// Deployments only add detail: one that cannot be read is left out.
func DescribeNotReady(ctx context.Context, in *deploystatus.Inspector, state string, keys ...types.NamespacedName) string {
	parts := []string{state}
	if state == "" {
		parts = nil
	}
	for _, key := range keys {
		r, err := in.Read(ctx, key)
		switch {
		case err != nil || r == nil || r.Done:
		case !strings.Contains(state, "Deployment "+key.String()):
			parts = append(parts, r.String())
		case r.Cause != nil:
			parts = append(parts, r.Cause.String())
		}
	}
	return strings.Join(parts, "; ")
}

// CurrentCondition returns the condition of type t of an operator's
// resource when it describes generation gen or later, or does not say which
// generation it describes; nil otherwise.
func CurrentCondition(conds []metav1.Condition, t string, gen int64) *metav1.Condition {
	c := meta.FindStatusCondition(conds, t)
	if c == nil || (c.ObservedGeneration != 0 && c.ObservedGeneration < gen) {
		return nil
	}
	return c
}
