package work

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestCreateValidate(t *testing.T) {
	streams := genericiooptions.NewTestIOStreamsDiscard()
	valid := func() *CreateOptions {
		o := NewCreateOptions(nil, streams)
		o.Name, o.Filenames, o.Clusters = "web", []string{"app.yaml"}, []string{"cluster1", "cluster2"}
		return o
	}
	tests := []struct {
		name    string
		mutate  func(o *CreateOptions)
		wantErr string
	}{
		{"valid", func(*CreateOptions) {}, ""},
		{"no name", func(o *CreateOptions) { o.Name = "" }, "no work name given"},
		{"bad name", func(o *CreateOptions) { o.Name = "Web_1" }, `work name "Web_1" is invalid`},
		{"no files", func(o *CreateOptions) { o.Filenames = nil }, "use -f FILE|DIR"},
		{"no clusters", func(o *CreateOptions) { o.Clusters = nil }, "use --clusters a,b"},
		{"bad cluster", func(o *CreateOptions) { o.Clusters = []string{"a.b"} }, `cluster name "a.b" is invalid`},
		{"cluster twice", func(o *CreateOptions) { o.Clusters = []string{"a", "a"} }, "cluster a is given twice"},
		{"update strategy", func(o *CreateOptions) { o.UpdateStrategy = "CreateOnly" }, ""},
		{"bad update strategy", func(o *CreateOptions) { o.UpdateStrategy = "Replace" }, "use one of Update, CreateOnly, ServerSideApply, ReadOnly"},
		{"dry run server", func(o *CreateOptions) { o.DryRun = "server" }, ""},
		{"bad dry run", func(o *CreateOptions) { o.DryRun = "true" }, `--dry-run "true" is not supported`},
		{"output yaml", func(o *CreateOptions) { f := "yaml"; o.PrintFlags.OutputFormat = &f }, ""},
		{"output wide", func(o *CreateOptions) { f := "wide"; o.PrintFlags.OutputFormat = &f }, `--output "wide" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := valid()
			tt.mutate(o)
			checkErr(t, o.Validate(), tt.wantErr)
		})
	}
}

func TestOtherValidate(t *testing.T) {
	streams := genericiooptions.NewTestIOStreamsDiscard()
	get := func(name, cluster string, all bool, out string) error {
		o := NewGetOptions(nil, streams)
		o.Name, o.Cluster, o.AllClusters, o.PrintFlags.OutputFormat = name, cluster, all, &out
		return o.Validate()
	}
	status := func(name, cluster, out string) error {
		o := NewStatusOptions(nil, streams)
		o.Name, o.Cluster, o.Output = name, cluster, out
		return o.Validate()
	}
	del := func(name string, clusters []string, timeout time.Duration) error {
		o := NewDeleteOptions(nil, streams)
		o.Name, o.Clusters, o.Timeout = name, clusters, timeout
		return o.Validate()
	}
	tests := []struct {
		name    string
		err     error
		wantErr string
	}{
		{"get all", get("", "", false, ""), ""},
		{"get one cluster wide", get("web", "cluster1", false, "wide"), ""},
		{"get name output", get("", "", true, "name"), ""},
		{"get cluster and -A", get("", "cluster1", true, ""), "exclude each other"},
		{"get bad output", get("", "", false, "tree"), `--output "tree" is not supported`},
		{"status", status("web", "cluster1", "json"), ""},
		{"status without cluster", status("web", "", ""), "use --cluster NAME"},
		{"status bad output", status("web", "cluster1", "wide"), "use json or yaml"},
		{"delete", del("web", []string{"cluster1"}, time.Minute), ""},
		{"delete without clusters", del("web", nil, time.Minute), "use --clusters"},
		{"delete bad timeout", del("web", []string{"c"}, 0), "--timeout must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErr(t, tt.err, tt.wantErr) })
	}
}

// checkErr checks that err contains want, or is nil when want is empty.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want one containing %q", err, want)
	}
}

func TestBuildWork(t *testing.T) {
	ms := manifestsFrom(t, cmYAML, deployJSON, "apiVersion: v1\nkind: Endpoints\nmetadata: {name: e}")
	w := BuildWork("web", "cluster1", ms, "", nil)
	if w.GetNamespace() != "cluster1" || w.GetName() != "web" || w.GetKind() != "ManifestWork" {
		t.Errorf("work = %s %s/%s", w.GetKind(), w.GetNamespace(), w.GetName())
	}
	if _, found := w.Object["spec"].(map[string]any)["manifestConfigs"]; found {
		t.Error("manifestConfigs set without an update strategy")
	}
	w = BuildWork("web", "cluster1", ms, "CreateOnly", nil)
	configs := w.Object["spec"].(map[string]any)["manifestConfigs"].([]any)
	if len(configs) != 3 {
		t.Fatalf("got %d manifest configs, want 3", len(configs))
	}
	id := configs[1].(map[string]any)["resourceIdentifier"].(map[string]any)
	if id["group"] != "apps" || id["resource"] != "deployments" || id["name"] != "web" || id["namespace"] != "default" {
		t.Errorf("resource identifier = %v", id)
	}
	if got := configs[1].(map[string]any)["updateStrategy"].(map[string]any)["type"]; got != "CreateOnly" {
		t.Errorf("update strategy = %v", got)
	}
	if got := resourceOf(schema.GroupVersionKind{Version: "v1", Kind: "NetworkPolicy"}, nil); got != "networkpolicies" {
		t.Errorf("guessed resource = %s", got)
	}
}

func TestCreateDryRunClient(t *testing.T) {
	streams, in, out, _ := genericiooptions.NewTestIOStreams()
	in.WriteString(cmYAML)
	o := NewCreateOptions(nil, streams)
	o.Name, o.Filenames, o.Clusters, o.DryRun = "web", []string{"-"}, []string{"cluster1", "cluster2"}, dryRunClient
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := o.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := "ManifestWork web created (dry run) in cluster cluster1\nManifestWork web created (dry run) in cluster cluster2\n"
	if out.String() != want {
		t.Errorf("output = %q, want %q", out.String(), want)
	}
	out.Reset()
	in.WriteString(cmYAML)
	f := "yaml"
	o.PrintFlags.OutputFormat = &f
	if err := o.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"kind: ManifestWork", "namespace: cluster2", "kind: ConfigMap", "---"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("yaml output lacks %q:\n%s", want, out.String())
		}
	}
}
