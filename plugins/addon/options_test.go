package addon

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

func TestEnableValidate(t *testing.T) {
	tests := []struct {
		name    string
		set     func(o *EnableOptions)
		wantErr string
	}{
		{"valid", func(*EnableOptions) {}, ""},
		{"no add-on", func(o *EnableOptions) { o.Names = nil }, "no add-on given: use --names a,b"},
		{"add-on given twice", func(o *EnableOptions) { o.Names = []string{"hello", "hello"} }, "add-on hello is given twice"},
		{"invalid add-on name", func(o *EnableOptions) { o.Names = []string{"Hello"} }, `--names: add-on name "Hello" is invalid`},
		{"add-on name too long for the feature label", func(o *EnableOptions) { o.Names = []string{strings.Repeat("a", 60)} }, "is invalid"},
		{"no cluster", func(o *EnableOptions) { o.Clusters = nil }, "no cluster given: use --clusters a,b"},
		{"invalid cluster", func(o *EnableOptions) { o.Clusters = []string{"c_1"} }, `cluster name "c_1" is invalid`},
		{"invalid install namespace", func(o *EnableOptions) { o.InstallNamespace = "Agents" }, `--namespace "Agents" is not a valid namespace name`},
		{"invalid annotation key", func(o *EnableOptions) { o.Annotations = map[string]string{"a b": "x"} }, `--annotate: key "a b" is invalid`},
		{"invalid label value", func(o *EnableOptions) { o.Labels = map[string]string{"tier": "a b"} }, "--labels: tier=a b is invalid"},
		{"wait with a dry run", func(o *EnableOptions) { o.Wait, o.DryRun = true, cli.DryRunServer }, "--wait and --dry-run exclude each other"},
		{"bad dry run", func(o *EnableOptions) { o.DryRun = "all" }, "--dry-run all is not supported"},
		{"zero timeout", func(o *EnableOptions) { o.Timeout = 0 }, "--timeout 0s must be positive"},
		{"wide output", func(o *EnableOptions) { o.PrintFlags.OutputFormat = ptr.To("wide") }, `--output "wide" is not supported: use json, yaml or name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewEnableOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
			o.Names, o.Clusters = []string{"helloworld"}, []string{"cluster1", "cluster2"}
			tt.set(o)
			if tt.wantErr == "" {
				assert.NoError(t, o.Validate())
			} else {
				assert.ErrorContains(t, o.Validate(), tt.wantErr)
			}
		})
	}
}

func TestDisableValidate(t *testing.T) {
	tests := []struct {
		name    string
		set     func(o *DisableOptions)
		wantErr string
	}{
		{"clusters", func(o *DisableOptions) { o.Clusters = []string{"cluster1"} }, ""},
		{"all clusters", func(o *DisableOptions) { o.AllClusters = true }, ""},
		{"neither", func(*DisableOptions) {}, "no cluster given: use --clusters a,b"},
		{"both", func(o *DisableOptions) { o.Clusters, o.AllClusters = []string{"cluster1"}, true }, "--clusters and --all-clusters exclude each other"},
		{"no add-on", func(o *DisableOptions) { o.Names, o.AllClusters = nil, true }, "no add-on given"},
		{"wait with a dry run", func(o *DisableOptions) { o.AllClusters, o.Wait, o.DryRun = true, true, cli.DryRunClient }, "--wait and --dry-run exclude each other"},
		{"zero timeout", func(o *DisableOptions) { o.AllClusters, o.Timeout = true, -time.Second }, "must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewDisableOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
			o.Names = []string{"helloworld"}
			tt.set(o)
			if tt.wantErr == "" {
				assert.NoError(t, o.Validate())
			} else {
				assert.ErrorContains(t, o.Validate(), tt.wantErr)
			}
		})
	}
}

func TestGetValidate(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		clusters []string
		output   string
		wantErr  string
	}{
		{"name", []string{"helloworld"}, nil, "", ""},
		{"clusters and wide", []string{"helloworld"}, []string{"cluster1"}, "wide", ""},
		{"jsonpath", []string{"helloworld"}, nil, "jsonpath={.items[*].metadata.namespace}", ""},
		{"invalid name", []string{"Hello"}, nil, "", `NAME: add-on name "Hello" is invalid`},
		{"invalid cluster", []string{"helloworld"}, []string{"c_1"}, "", `cluster name "c_1" is invalid`},
		{"unknown output", []string{"helloworld"}, nil, "tree", `--output "tree" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewGetOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
			o.Clusters, o.PrintFlags.OutputFormat = tt.clusters, ptr.To(tt.output)
			if err := o.Complete(nil, tt.args); err != nil {
				t.Fatal(err)
			}
			if tt.wantErr == "" {
				assert.NoError(t, o.Validate())
			} else {
				assert.ErrorContains(t, o.Validate(), tt.wantErr)
			}
		})
	}
}

func TestCreateValidate(t *testing.T) {
	tests := []struct {
		name    string
		set     func(o *CreateOptions)
		wantErr string
	}{
		{"valid", func(*CreateOptions) {}, ""},
		{"placement", func(o *CreateOptions) { o.Placement = "apps/all" }, ""},
		{"cluster role with a colon", func(o *CreateOptions) { o.ClusterRoleBind = "system:aggregate-to-edit" }, ""},
		{"no manifests", func(o *CreateOptions) { o.Filenames = nil }, "no manifests given: use -f FILE|DIR"},
		{"invalid name", func(o *CreateOptions) { o.Name = "Hello" }, `add-on name "Hello" is invalid`},
		{"empty version", func(o *CreateOptions) { o.Version = "" }, "--version must not be empty"},
		{"invalid version", func(o *CreateOptions) { o.Version = "1.0_rc" }, `the AddOnTemplate name "helloworld-1.0_rc" is invalid`},
		{"placement without namespace", func(o *CreateOptions) { o.Placement = "all" }, `--placement "all": write NAMESPACE/NAME`},
		{"placement with two slashes", func(o *CreateOptions) { o.Placement = "a/b/c" }, "write NAMESPACE/NAME"},
		{"invalid placement namespace", func(o *CreateOptions) { o.Placement = "Apps/all" }, "is not a valid NAMESPACE/NAME"},
		{"cluster role with a slash", func(o *CreateOptions) { o.ClusterRoleBind = "a/b" }, "is not a ClusterRole name"},
		{"invalid label", func(o *CreateOptions) { o.Labels = map[string]string{"-x": "y"} }, "--labels: -x=y is invalid"},
		{"table output", func(o *CreateOptions) { o.PrintFlags.OutputFormat = ptr.To("wide") }, "is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewCreateOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
			o.Filenames = []string{"agent.yaml"}
			if err := o.Complete(nil, []string{"helloworld"}); err != nil {
				t.Fatal(err)
			}
			tt.set(o)
			if tt.wantErr == "" {
				assert.NoError(t, o.Validate())
			} else {
				assert.ErrorContains(t, o.Validate(), tt.wantErr)
			}
		})
	}
}
