package conversion

import (
	"testing"

	addonconversion "github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
)

// TestHubStatus checks what `hub status` says of the conversion before the
// hub controller serves the webhook (each problem with its cause and fix)
// and once it does.
func TestHubStatus(t *testing.T) {
	t.Parallel() // an environment of its own
	s := newSuite(t)
	s.install(t)

	r := s.cli.Run(s.ctx, "hub", "status")
	clitest.ExpectOK(t, r,
		"Conversion:      not working (webhook not reachable; CA bundle current on 0/4 CRDs)",
		"Secret open-cluster-management-hub/"+conversion.SecretName+" with the webhook's certificate does not exist: the hub controller creates it when it starts",
		"CustomResourceDefinition managedclusteraddons.addon.open-cluster-management.io has no caBundle",
		"the API server cannot convert add-on objects between versions",
	)

	s.startWebhook(t, addonconversion.Options{})
	r = s.cli.Run(s.ctx, "hub", "status")
	clitest.ExpectOK(t, r, "Conversion:      working (webhook reachable; CA bundle current on 4/4 CRDs; serving certificate expires ")
	r = s.cli.Run(s.ctx, "hub", "status", "-o", "json")
	clitest.ExpectOK(t, r, `"reachable": true`, `"caBundle": "current"`, `"storedVersions": [`)
}
