package patch

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
)

func TestRetryStale(t *testing.T) {
	gr := schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}
	conflict := apierrors.NewConflict(gr, "a", errors.New("the object has been modified"))
	notFound := apierrors.NewNotFound(gr, "a")
	exists := apierrors.NewAlreadyExists(gr, "a")
	other := errors.New("connection refused")
	requeue := ctrl.Result{RequeueAfter: StaleRetry}
	for _, tt := range []struct {
		name    string
		err     error
		stale   []func(error) bool
		want    ctrl.Result
		wantErr error
	}{
		{name: "no error", err: nil, want: ctrl.Result{}},
		{name: "conflict", err: conflict, want: requeue},
		{name: "wrapped conflict", err: errors.Join(errors.New("approve a"), conflict), want: requeue},
		{name: "not found, not named stale", err: notFound, wantErr: notFound},
		{name: "not found, named stale", err: notFound, stale: []func(error) bool{apierrors.IsNotFound}, want: requeue},
		{name: "exists, one of two named", err: exists, stale: []func(error) bool{apierrors.IsNotFound, apierrors.IsAlreadyExists}, want: requeue},
		{name: "other error", err: other, stale: []func(error) bool{apierrors.IsNotFound}, wantErr: other},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RetryStale(context.Background(), tt.err, tt.stale...)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, tt.wantErr, err)
		})
	}
}
