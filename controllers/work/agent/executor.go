package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

const (
	// DefaultExecutorRetryInterval is when a work whose executor was denied
	// a manifest is tried again, as OCM's agent does.
	DefaultExecutorRetryInterval = 60 * time.Second
	// executorCacheTTL is how long a SubjectAccessReview's answer is reused,
	// so that the reconciles that follow one another (events of the applied
	// objects) do not ask the managed cluster again for every manifest.
	executorCacheTTL = 10 * time.Second
)

// reviewFunc creates a SubjectAccessReview on the managed cluster.
type reviewFunc func(ctx context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error)

// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// kubeReview is the reviewFunc of a managed-cluster clientset.
func kubeReview(kube kubernetes.Interface) reviewFunc {
	return func(ctx context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
		return kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	}
}

// executorChecker asks the managed cluster, with SubjectAccessReviews,
// whether a work's executor may do what applying its manifests needs, and
// remembers the answers for a short while.
type executorChecker struct {
	review reviewFunc
	// dryRun writes RBAC objects as the executor with dryRun for the
	// escalation check (executor_escalation.go); nil skips that check.
	dryRun dryRunFunc
	ttl    time.Duration
	now    func() time.Time

	mu    sync.Mutex
	cache map[accessKey]cachedAnswer
}

// accessKey is one question: may user use verb on one object.
type accessKey struct {
	user, verb, group, resource, namespace, name string
}

// cachedAnswer is an answer and when it stops being used.
type cachedAnswer struct {
	allowed bool
	reason  string
	expires time.Time
}

// newExecutorChecker returns a checker that reviews with review, checks RBAC
// objects for escalation with dryRun (nil: not at all) and keeps
// answers for ttl.
func newExecutorChecker(review reviewFunc, dryRun dryRunFunc, ttl time.Duration) *executorChecker {
	return &executorChecker{review: review, dryRun: dryRun, ttl: ttl, now: time.Now, cache: map[accessKey]cachedAnswer{}}
}

// executorDeniedError says the executor may not use a verb on an object: the
// manifest fails, and the work is tried again after the executor retry
// interval, without counting as a failure.
type executorDeniedError struct {
	sa          workv1.ManifestWorkSubjectServiceAccount
	verbs       []string
	resource    string // resource.group
	namespace   string
	name        string
	reviewNotes string
	// escalation, when set, is the API server's refusal of a dry-run write
	// as the executor: it may write such objects, but not this one, which
	// grants permissions it does not hold.
	escalation string
}

// Error names the ServiceAccount, verb and object and says how to fix it.
func (e *executorDeniedError) Error() string {
	where := "cluster-scoped"
	if e.namespace != "" {
		where = "in namespace " + e.namespace
	}
	if e.escalation != "" {
		return fmt.Sprintf("executor ServiceAccount %s/%s may not %s %s %q %s on the managed cluster: that would escalate its privileges, "+
			"granting permissions it does not hold (the API server refused a dry run as the ServiceAccount: %s); grant it those permissions, "+
			"or the escalate or bind verb, on the managed cluster", e.sa.Namespace, e.sa.Name, strings.Join(e.verbs, ", "), e.resource, e.name, where, e.escalation)
	}
	msg := fmt.Sprintf("executor ServiceAccount %s/%s may not %s %s %q %s on the managed cluster", e.sa.Namespace, e.sa.Name,
		strings.Join(e.verbs, ", "), e.resource, e.name, where)
	if e.reviewNotes != "" {
		msg += " (" + e.reviewNotes + ")"
	}
	return msg + fmt.Sprintf("; grant it on the managed cluster with a Role or ClusterRole bound to system:serviceaccount:%s:%s", e.sa.Namespace, e.sa.Name)
}

// isExecutorDenied reports whether err is an executor denial.
func isExecutorDenied(err error) bool {
	var denied *executorDeniedError
	return errors.As(err, &denied)
}

// executorOf returns the work's executor ServiceAccount, or nil when the work
// has none (the agent applies with its own rights).
func executorOf(work *workv1.ManifestWork) *workv1.ManifestWorkSubjectServiceAccount {
	e := work.Spec.Executor
	if e == nil || e.Subject.Type != workv1.ExecutorSubjectTypeServiceAccount || e.Subject.ServiceAccount == nil {
		return nil
	}
	return e.Subject.ServiceAccount
}

// check returns nil when sa may use every verb on the object (group,
// resource, namespace, name), an executorDeniedError naming the verbs it may
// not use, or the error of a review that could not be made.
func (c *executorChecker) check(ctx context.Context, sa *workv1.ManifestWorkSubjectServiceAccount, group, resource, namespace, name string, verbs ...string) error {
	user := "system:serviceaccount:" + sa.Namespace + ":" + sa.Name
	var denied, notes []string
	for _, verb := range verbs {
		key := accessKey{user: user, verb: verb, group: group, resource: resource, namespace: namespace, name: name}
		ans, err := c.answer(ctx, key, sa.Namespace)
		if err != nil {
			return fmt.Errorf("review whether executor ServiceAccount %s/%s may %s %s %q: %w", sa.Namespace, sa.Name, verb, resource, name, err)
		}
		if !ans.allowed {
			denied = append(denied, verb)
			if ans.reason != "" && !slices.Contains(notes, ans.reason) {
				notes = append(notes, ans.reason)
			}
		}
	}
	if len(denied) == 0 {
		return nil
	}
	gr := resource
	if group != "" {
		gr += "." + group
	}
	return &executorDeniedError{sa: *sa, verbs: denied, resource: gr, namespace: namespace, name: name, reviewNotes: strings.Join(notes, "; ")}
}

// answer returns the cached answer to key or asks the managed cluster.
func (c *executorChecker) answer(ctx context.Context, key accessKey, saNamespace string) (cachedAnswer, error) {
	if ans, ok := c.cached(key); ok {
		return ans, nil
	}
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   key.user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Group: key.group, Resource: key.resource, Namespace: key.namespace, Name: key.name, Verb: key.verb,
		},
	}}
	got, err := c.review(ctx, sar)
	if err != nil {
		return cachedAnswer{}, err
	}
	return c.remember(key, cachedAnswer{allowed: got.Status.Allowed && !got.Status.Denied, reason: strings.TrimSpace(got.Status.Reason)}), nil
}

// cached returns the unexpired answer to key, if any.
func (c *executorChecker) cached(key accessKey) (cachedAnswer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ans, ok := c.cache[key]
	return ans, ok && c.now().Before(ans.expires)
}

// remember stores ans as the answer to key for the checker's TTL and
// returns it with its expiry set.
func (c *executorChecker) remember(key accessKey, ans cachedAnswer) cachedAnswer {
	now := c.now()
	ans.expires = now.Add(c.ttl)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cache[key] = ans
	// Drop expired answers now and then so the map does not grow forever.
	if len(c.cache) > 4096 {
		for k, v := range c.cache {
			if !now.Before(v.expires) {
				delete(c.cache, k)
			}
		}
	}
	return ans
}

// authorizer returns the apply.Request.Authorize of work: nil when the work
// has no executor or the agent checks none.
func (c *executorChecker) authorizer(work *workv1.ManifestWork) func(context.Context, apply.Access) error {
	sa := executorOf(work)
	if c == nil || sa == nil {
		return nil
	}
	return func(ctx context.Context, acc apply.Access) error {
		m := acc.Meta
		if err := c.check(ctx, sa, m.Group, m.Resource, m.Namespace, m.Name, acc.Verbs...); err != nil {
			return err
		}
		if acc.WritesContent() && isRBAC(m) {
			return c.checkEscalation(ctx, sa, m, acc.Required, acc.Existing)
		}
		return nil
	}
}

// checkDelete returns nil when the work's executor (if any) may delete an
// applied resource the work no longer lists.
func (c *executorChecker) checkDelete(ctx context.Context, work *workv1.ManifestWork, res workv1.AppliedManifestResourceMeta) error {
	sa := executorOf(work)
	if c == nil || sa == nil {
		return nil
	}
	return c.check(ctx, sa, res.Group, res.Resource, res.Namespace, res.Name, "delete")
}
