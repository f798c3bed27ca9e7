package deploystatus

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
)

// ImageCauseUnauthorized is the named cause of an image the registry would
// not serve with the credentials the node pulled with, or with none.
const ImageCauseUnauthorized = "unauthorized"

// imageCauses name the cause of an image pull by what the kubelet's message
// holds, first match wins: a text (compared without case) and the cause it
// names. The texts are containerd's (core/remotes): a request refused with
// 401 or 403 ("unexpected status from HEAD request to <url>: 401
// Unauthorized"), a registry that asks for basic auth when the node has no
// credentials for it ("authorization failed: no basic auth credentials",
// wrapped in "pull access denied, repository does not exist or may require
// authorization"), and a token request that failed ("failed to authorize:
// failed to fetch anonymous token: ..."). A new text is one more line.
var imageCauses = []struct{ text, cause string }{
	{"401 Unauthorized", ImageCauseUnauthorized},
	{"403 Forbidden", ImageCauseUnauthorized},
	{"no basic auth credentials", ImageCauseUnauthorized},
	{"authorization failed", ImageCauseUnauthorized},
	{"pull access denied", ImageCauseUnauthorized},
	{"failed to authorize", ImageCauseUnauthorized},
}

// imageCause returns the named cause of the kubelet's message of an image
// pull, empty when it names none.
func imageCause(message string) string {
	lower := strings.ToLower(message)
	for _, c := range imageCauses {
		if strings.Contains(lower, strings.ToLower(c.text)) {
			return c.cause
		}
	}
	return ""
}

// unauthorizedFix is the fix of an image whose registry refused the
// credentials: the product's image pull Secret, with credentials for the
// image's registry.
func unauthorizedFix(image string) string {
	registry := "the image's registry"
	if named, err := reference.ParseNormalizedNamed(image); err == nil {
		registry = reference.Domain(named)
	}
	return fmt.Sprintf("give the nodes credentials for %s: create or update Secret %s/%s with `--image-pull-credentials <docker config.json>` of `kubectl ocm hub init`, `join` or `upgrade` (its auths must name %s, as `docker login %s` writes them), and check that the image exists there",
		registry, operatorv1.OperatorNamespace, pullsecret.Name, registry, registry)
}
