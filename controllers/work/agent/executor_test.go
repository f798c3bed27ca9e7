package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"

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
			c := newExecutorChecker(f.review, time.Minute)
			err := c.authorizer(executorWork())(context.Background(), tt.meta, tt.verbs...)
			if got := isExecutorDenied(err); got != tt.wantDenied {
				t.Errorf("denied = %v, want %v (err %v)", got, tt.wantDenied, err)
			}
			if (err != nil) != (tt.wantDenied || tt.wantErr) {
				t.Fatalf("err = %v", err)
			}
			for _, part := range tt.wantMsg {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("message %q lacks %q", err, part)
				}
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
	c := newExecutorChecker(f.review, 10*time.Second)
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
	c := newExecutorChecker(f.review, time.Minute)
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
