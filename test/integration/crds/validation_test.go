package crds_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// invalidCase is an object one validation rule must reject.
type invalidCase struct {
	name string
	// managed creates the object on cluster1 instead of the hub.
	managed bool
	// obj is the object to create. When status is set, obj must be valid and
	// status is then written through the status subresource instead.
	obj    string
	status string
	// wantField must appear in the error: the path of the offending field.
	wantField string
	// wantMessage, when set, must appear in the error too.
	wantMessage string
}

// testValidation creates every invalid object and checks that the API server
// rejects it as Invalid, naming the field.
func testValidation(ctx context.Context, t *testing.T, cs clusters) {
	tests := slices.Concat(clusterInvalidCases, workInvalidCases, addonOperatorInvalidCases)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cs.hub
			if tt.managed {
				c = cs.cluster1
			}
			obj := mustDecode(t, tt.obj)
			err := c.Create(ctx, obj)
			if tt.status != "" {
				if err != nil {
					t.Fatalf("create the object whose status is tested: %v", err)
				}
				status := mustDecode(t, "apiVersion: v1\nkind: Status\nstatus:\n"+indent(tt.status))
				obj.Object["status"] = status.Object["status"]
				err = c.Status().Update(ctx, obj)
			}
			expectInvalid(t, err, tt.wantField, tt.wantMessage)
		})
	}
}

// expectInvalid checks that err is an Invalid error naming field and, when
// set, containing message.
func expectInvalid(t *testing.T, err error, field, message string) {
	t.Helper()
	if err == nil {
		t.Fatalf("the API server accepted the object; want it rejected for %s", field)
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("error is not Invalid (reason %q): %v", apierrors.ReasonForError(err), err)
	}
	assert.ErrorContains(t, err, field, "the error names the field")
	if message != "" {
		assert.ErrorContains(t, err, message)
	}
	t.Logf("rejected as expected: %v", err)
}

// indent indents every line of a YAML fragment by two spaces.
func indent(s string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}
