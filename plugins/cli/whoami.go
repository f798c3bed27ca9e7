package cli

import (
	"context"

	authenticationv1 "k8s.io/api/authentication/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WhoAmI returns the name of the user the API server of c takes the
// requests for, as `kubectl auth whoami` learns it: with a
// SelfSubjectReview, which every authenticated user may create. The verbs
// that record who acted (work rollout approve, accept) ask it with the
// client they write with, so that --as names the user impersonated.
func WhoAmI(ctx context.Context, c client.Client) (string, error) {
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		return "", err
	}
	return review.Status.UserInfo.Username, nil
}
