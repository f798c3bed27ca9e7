package v1alpha1

import (
	"strings"
	"testing"
)

func TestControllerNameLabelValue(t *testing.T) {
	tests := []struct {
		name      string
		namespace string
		mwrs      string
		want      string
		wantErr   bool
	}{
		{name: "simple", namespace: "default", mwrs: "web", want: "default.web"},
		{name: "name with dots", namespace: "apps", mwrs: "web.v2", want: "apps.web.v2"},
		{name: "too long", namespace: "default", mwrs: strings.Repeat("a", 60), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ControllerNameLabelValue(tt.namespace, tt.mwrs)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ControllerNameLabelValue() error = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("ControllerNameLabelValue() = %q, want %q", got, tt.want)
			}
			if err != nil {
				return
			}
			ns, name, ok := ParseControllerNameLabelValue(got)
			if !ok || ns != tt.namespace || name != tt.mwrs {
				t.Errorf("ParseControllerNameLabelValue(%q) = %q, %q, %v", got, ns, name, ok)
			}
		})
	}
}

func TestParseControllerNameLabelValueInvalid(t *testing.T) {
	for _, value := range []string{"", "nodot", ".name", "ns."} {
		t.Run(value, func(t *testing.T) {
			if ns, name, ok := ParseControllerNameLabelValue(value); ok {
				t.Errorf("ParseControllerNameLabelValue(%q) = %q, %q, true; want false", value, ns, name)
			}
		})
	}
}
