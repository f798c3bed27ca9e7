package hub

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// ReviewClient returns the client the server asks its SubjectAccessReviews
// with: cfg without a client-side rate limit. A review is answered from the
// API server's authorizer in memory and each answer is reused for
// decisionTTL; behind the manager's limit (50 requests per second by
// default) the reviews of the tunnels attaching after a hub restart queued
// behind each other (1,000 took 16 s, BenchmarkTunnelIdle) and behind the
// controllers' writes. The API server's own limits still apply.
func ReviewClient(cfg *rest.Config) (client.Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst, cfg.RateLimiter = -1, 0, nil
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, fmt.Errorf("create the hub tunnel's review client: %w", err)
	}
	return c, nil
}

// decisionTTL is how long a SubjectAccessReview's answer is reused for the
// same caller and permission, as the API server's own webhook authorizer
// caches: a revoked binding takes effect at the hub's API server at once and
// here within this time.
const decisionTTL = 10 * time.Second

// maxDecisions bounds the cache; past it, expired answers are dropped.
const maxDecisions = 10000

// reviewer asks SubjectAccessReviews and remembers their answers briefly.
type reviewer struct {
	client client.Client

	mu        sync.Mutex
	decisions map[string]decision
}

type decision struct {
	allowed bool
	reason  string
	expires time.Time
}

// allowed reports whether c may use verb on subresource of cluster's
// managedclusters, and the authorizer's reason when it may not, from an
// answer of the last decisionTTL when there is one.
func (r *reviewer) allowed(ctx context.Context, c *caller, verb, subresource, cluster string) (bool, string, error) {
	spec := reviewSpec(c, verb, subresource, cluster)
	key, err := decisionKey(spec)
	if err != nil {
		return false, "", err
	}
	now := time.Now()
	r.mu.Lock()
	d, ok := r.decisions[key]
	r.mu.Unlock()
	if ok && now.Before(d.expires) {
		return d.allowed, d.reason, nil
	}
	allowed, reason, err := r.review(ctx, spec)
	if err != nil {
		return false, "", err
	}
	d = decision{allowed: allowed, reason: reason, expires: now.Add(decisionTTL)}
	r.mu.Lock()
	if r.decisions == nil {
		r.decisions = map[string]decision{}
	}
	if len(r.decisions) >= maxDecisions {
		for k, old := range r.decisions {
			if !now.Before(old.expires) {
				delete(r.decisions, k)
			}
		}
	}
	if len(r.decisions) < maxDecisions {
		r.decisions[key] = d
	}
	r.mu.Unlock()
	return d.allowed, d.reason, nil
}

// ask is allowed without the decision cache: the answer of the hub's API
// server now.
func (r *reviewer) ask(ctx context.Context, c *caller, verb, subresource, cluster string) (bool, string, error) {
	return r.review(ctx, reviewSpec(c, verb, subresource, cluster))
}

// review asks the hub's API server the SubjectAccessReview of spec.
func (r *reviewer) review(ctx context.Context, spec authorizationv1.SubjectAccessReviewSpec) (bool, string, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: spec}
	if err := r.client.Create(ctx, sar); err != nil {
		return false, "", fmt.Errorf("ask a SubjectAccessReview for %s: %w", spec.User, err)
	}
	return sar.Status.Allowed && !sar.Status.Denied, sar.Status.Reason, nil
}

// reviewSpec is the SubjectAccessReview of c using verb on subresource of
// cluster's managedclusters.
func reviewSpec(c *caller, verb, subresource, cluster string) authorizationv1.SubjectAccessReviewSpec {
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range c.extra {
		extra[k] = v
	}
	return authorizationv1.SubjectAccessReviewSpec{
		User: c.user, UID: c.uid, Groups: c.groups, Extra: extra,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: hubtunnel.Group, Version: hubtunnel.Version, Resource: hubtunnel.Resource,
			Subresource: subresource, Name: cluster, Verb: verb,
		},
	}
}

// decisionKey identifies a SubjectAccessReview's answer by its whole spec,
// extra included, as the API server's webhook authorizer keys its cache:
// an answer for one set of scopes is never reused for another.
func decisionKey(spec authorizationv1.SubjectAccessReviewSpec) (string, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return "", fmt.Errorf("key a SubjectAccessReview for %s: %w", spec.User, err)
	}
	sum := sha256.Sum256(b)
	return string(sum[:]), nil
}
