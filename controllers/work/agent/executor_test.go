package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent/apply"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// fakeReviewer answers SubjectAccessReviews from a set of allowed
// "verb resource namespace" triples and counts the reviews.
type fakeReviewer struct {
	allowed map[string]bool
	err     error
	calls   int
	last    *authorizationv1.SubjectAccessReview
}

func (f *fakeReviewer) review(_ context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
	f.calls++
	f.last = sar
	if f.err != nil {
		return nil, f.err
	}
	a := sar.Spec.ResourceAttributes
	out := sar.DeepCopy()
	out.Status.Allowed = f.allowed[a.Verb+" "+a.Resource+" "+a.Namespace]
	if !out.Status.Allowed {
		out.Status.Reason = "no RBAC policy matched"
	}
	return out, nil
}

// executorWork returns a work with executor ServiceAccount default/deployer.
func executorWork() *workv1.ManifestWork {
	w := &workv1.ManifestWork{}
	w.Spec.Executor = &workv1.ManifestWorkExecutor{Subject: workv1.ManifestWorkExecutorSubject{
		Type:           workv1.ExecutorSubjectTypeServiceAccount,
		ServiceAccount: &workv1.ManifestWorkSubjectServiceAccount{Namespace: "default", Name: "deployer"},
	}}
	return w
}

func TestExecutorCheck(t *testing.T) {
	cm := func(ns string) workv1.ManifestResourceMeta {
		return workv1.ManifestResourceMeta{Version: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespace: ns, Name: "cm"}
	}
	allowDefault := map[string]bool{"get configmaps default": true, "create configmaps default": true}
	tests := []struct {
		name       string
		allowed    map[string]bool
		reviewErr  error
		meta       workv1.ManifestResourceMeta
		verbs      []string
		wantDenied bool
		wantErr    bool
		wantMsg    []string
	}{
		{name: "allowed", allowed: allowDefault, meta: cm("default"), verbs: []string{"get", "create"}},
		{name: "other namespace denied", allowed: allowDefault, meta: cm("kube-system"), verbs: []string{"get", "create"},
			wantDenied: true, wantMsg: []string{"default/deployer", "may not get, create configmaps \"cm\" in namespace kube-system",
				"grant it on the managed cluster", "system:serviceaccount:default:deployer"}},
		{name: "update denied when only create allowed", allowed: allowDefault, meta: cm("default"), verbs: []string{"get", "update"},
			wantDenied: true, wantMsg: []string{"may not update configmaps"}},
		{name: "review fails", reviewErr: errors.New("boom"), meta: cm("default"), verbs: []string{"get"}, wantErr: true,
			wantMsg: []string{"review whether", "boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeReviewer{allowed: tt.allowed, err: tt.reviewErr}
			c := newExecutorChecker(f.review, nil, time.Minute)
			err := c.authorizer(executorWork())(context.Background(), apply.Access{Meta: tt.meta, Verbs: tt.verbs, Strategy: workv1.UpdateStrategyTypeReadOnly})
			if got := isExecutorDenied(err); got != tt.wantDenied {
				t.Errorf("denied = %v, want %v (err %v)", got, tt.wantDenied, err)
			}
			if (err != nil) != (tt.wantDenied || tt.wantErr) {
				t.Fatalf("err = %v", err)
			}
			for _, part := range tt.wantMsg {
				assert.ErrorContains(t, err, part)
			}
			spec := f.last.Spec
			if spec.User != "system:serviceaccount:default:deployer" ||
				strings.Join(spec.Groups, ",") != "system:serviceaccounts,system:serviceaccounts:default,system:authenticated" {
				t.Errorf("review subject = %q %v", spec.User, spec.Groups)
			}
		})
	}
}

func TestExecutorCache(t *testing.T) {
	f := &fakeReviewer{allowed: map[string]bool{"get configmaps default": true}}
	c := newExecutorChecker(f.review, nil, 10*time.Second)
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	sa := executorOf(executorWork())
	check := func() error { return c.check(context.Background(), sa, "", "configmaps", "default", "cm", "get") }

	for range 3 {
		if err := check(); err != nil {
			t.Fatal(err)
		}
	}
	if f.calls != 1 {
		t.Errorf("reviews within the TTL = %d, want 1", f.calls)
	}
	// A right taken away is noticed once the answer expires.
	f.allowed = nil
	now = now.Add(11 * time.Second)
	if err := check(); !isExecutorDenied(err) {
		t.Errorf("after expiry err = %v, want denial", err)
	}
	if f.calls != 2 {
		t.Errorf("reviews = %d, want 2", f.calls)
	}
	// Another object is another question.
	_ = c.check(context.Background(), sa, "", "configmaps", "default", "other", "get")
	if f.calls != 3 {
		t.Errorf("reviews = %d, want 3", f.calls)
	}
}

func TestExecutorNone(t *testing.T) {
	f := &fakeReviewer{}
	c := newExecutorChecker(f.review, nil, time.Minute)
	if c.authorizer(&workv1.ManifestWork{}) != nil {
		t.Error("a work without executor got an authorizer")
	}
	if err := c.checkDelete(context.Background(), &workv1.ManifestWork{}, applied("cm", "1")); err != nil || f.calls != 0 {
		t.Errorf("checkDelete without executor: err %v, %d reviews", err, f.calls)
	}
	var nilChecker *executorChecker
	if nilChecker.authorizer(executorWork()) != nil || nilChecker.checkDelete(context.Background(), executorWork(), applied("cm", "1")) != nil {
		t.Error("a nil checker checked something")
	}
	if err := c.checkDelete(context.Background(), executorWork(), applied("cm", "1")); !isExecutorDenied(err) ||
		f.last.Spec.ResourceAttributes.Verb != "delete" {
		t.Errorf("checkDelete with executor: %v", err)
	}
}

func TestDeniedIsNotAFailure(t *testing.T) {
	denied := &executorDeniedError{sa: workv1.ManifestWorkSubjectServiceAccount{Namespace: "default", Name: "deployer"}, verbs: []string{"create"}, resource: "configmaps", name: "cm"}
	tests := []struct {
		name                 string
		errs                 []error
		wantFailed, wantDeny bool
	}{
		{name: "all applied"},
		{name: "denied only", errs: []error{denied}, wantDeny: true},
		{name: "denied and failed", errs: []error{denied, errors.New("invalid")}, wantFailed: true, wantDeny: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var results []apply.Result
			for _, err := range tt.errs {
				results = append(results, apply.Result{Err: err})
			}
			if got := anyFailed(results); got != tt.wantFailed {
				t.Errorf("anyFailed = %v", got)
			}
			if got := anyDenied(results); got != tt.wantDeny {
				t.Errorf("anyDenied = %v", got)
			}
		})
	}
}

func TestExecutorEscalation(t *testing.T) {
	role := workv1.ManifestResourceMeta{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role", Resource: "roles", Namespace: "default", Name: "r"}
	required := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
		"metadata": map[string]any{"name": "r", "namespace": "default"}}}
	existing := required.DeepCopy()
	existing.SetResourceVersion("7")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "roles"}, "r",
		errors.New("user \"system:serviceaccount:default:deployer\" is attempting to grant RBAC permissions not currently held"))
	allowAll := map[string]bool{"get roles default": true, "create roles default": true, "update roles default": true, "patch roles default": true}
	tests := []struct {
		name       string
		meta       workv1.ManifestResourceMeta
		strategy   workv1.UpdateStrategyType
		existing   *unstructured.Unstructured
		dryRunErr  error
		wantDryRun string // "", "create" or "update"
		wantDenied bool
		wantErr    bool
	}{
		{name: "Role created without escalation", meta: role, strategy: workv1.UpdateStrategyTypeUpdate, wantDryRun: "create"},
		{name: "Role escalating on create", meta: role, strategy: workv1.UpdateStrategyTypeUpdate, dryRunErr: forbidden, wantDryRun: "create", wantDenied: true},
		{name: "Role escalating on update", meta: role, strategy: workv1.UpdateStrategyTypeServerSideApply, existing: existing, dryRunErr: forbidden,
			wantDryRun: "update", wantDenied: true},
		{name: "CreateOnly existing Role is not rewritten", meta: role, strategy: workv1.UpdateStrategyTypeCreateOnly, existing: existing},
		{name: "ReadOnly Role is not written", meta: role, strategy: workv1.UpdateStrategyTypeReadOnly, existing: existing},
		{name: "invalid object is left to the real write", meta: role, strategy: workv1.UpdateStrategyTypeUpdate,
			dryRunErr: apierrors.NewInvalid(schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}, "r", nil), wantDryRun: "create"},
		{name: "dry run fails", meta: role, strategy: workv1.UpdateStrategyTypeUpdate, dryRunErr: errors.New("connection refused"), wantDryRun: "create", wantErr: true},
		{name: "not RBAC", meta: workv1.ManifestResourceMeta{Version: "v1", Resource: "configmaps", Namespace: "default", Name: "r"},
			strategy: workv1.UpdateStrategyTypeUpdate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeReviewer{allowed: allowAll}
			f.allowed["get configmaps default"], f.allowed["create configmaps default"], f.allowed["update configmaps default"] = true, true, true
			dryRun := ""
			c := newExecutorChecker(f.review, func(_ context.Context, user string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, update bool) error {
				dryRun = map[bool]string{false: "create", true: "update"}[update]
				if user != "system:serviceaccount:default:deployer" || gvr.Resource != "roles" {
					t.Errorf("dry run as %s on %v", user, gvr)
				}
				if update && obj.GetResourceVersion() != "7" {
					t.Errorf("update dry run without the live resourceVersion")
				}
				return tt.dryRunErr
			}, time.Minute)
			acc := apply.Access{Meta: tt.meta, Strategy: tt.strategy, Required: required, Existing: tt.existing,
				Verbs: apply.Verbs(tt.strategy, tt.existing != nil)}
			err := c.authorizer(executorWork())(context.Background(), acc)
			if dryRun != tt.wantDryRun {
				t.Errorf("dry run = %q, want %q", dryRun, tt.wantDryRun)
			}
			if isExecutorDenied(err) != tt.wantDenied || (err != nil) != (tt.wantDenied || tt.wantErr) {
				t.Fatalf("err = %v", err)
			}
			if tt.wantDenied {
				for _, part := range []string{"default/deployer", "escalate its privileges", "roles.rbac.authorization.k8s.io \"r\"", "not currently held"} {
					assert.ErrorContains(t, err, part)
				}
			}
		})
	}
}
