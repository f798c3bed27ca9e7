package work

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
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
		{"take-over rule", func(o *CreateOptions) { o.TakeOver = "IfNoDiff" }, ""},
		{"bad take-over rule", func(o *CreateOptions) { o.TakeOver = "ifnodiff" }, `--take-over "ifnodiff" is not supported: use one of Always, IfNoDiff, Never`},
		{"dry run server", func(o *CreateOptions) { o.DryRun = "server" }, ""},
		{"bad dry run", func(o *CreateOptions) { o.DryRun = "true" }, "--dry-run true is not supported: use none, client or server"},
		{"output yaml", func(o *CreateOptions) { f := "yaml"; o.PrintFlags.OutputFormat = &f }, ""},
		{"output wide", func(o *CreateOptions) { f := "wide"; o.PrintFlags.OutputFormat = &f }, `--output "wide" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := valid()
			tt.mutate(o)
			if tt.wantErr == "" {
				require.NoError(t, o.Validate())
			} else {
				require.ErrorContains(t, o.Validate(), tt.wantErr)
			}
		})
	}
}

func TestOtherValidate(t *testing.T) {
	streams := genericiooptions.NewTestIOStreamsDiscard()
	get := func(name string, clusters []string, all bool, out string) error {
		o := NewGetOptions(nil, streams)
		o.Name, o.Clusters, o.AllNamespaces, o.PrintFlags.OutputFormat = name, clusters, all, &out
		return o.Validate()
	}
	status := func(name string, clusters []string, out string) error {
		o := NewStatusOptions(nil, streams)
		o.Name, o.Clusters, o.Output = name, clusters, out
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
		{"get all", get("", nil, false, ""), ""},
		{"get one cluster wide", get("web", []string{"cluster1"}, false, "wide"), ""},
		{"get two clusters", get("", []string{"cluster1", "cluster2"}, false, ""), ""},
		{"get name output", get("", nil, true, "name"), ""},
		{"get jsonpath", get("", nil, false, "jsonpath={.items[*].metadata.name}"), ""},
		{"get jsonpath without a template", get("", nil, false, "jsonpath"), "no template"},
		{"get clusters and -A", get("", []string{"cluster1"}, true, ""), "--clusters and --all-namespaces (-A) exclude each other"},
		{"get cluster twice", get("", []string{"c", "c"}, false, ""), "cluster c is given twice"},
		{"get bad output", get("", nil, false, "tree"), `--output "tree" is not supported`},
		{"status", status("web", []string{"cluster1"}, "json"), ""},
		{"status without cluster", status("web", nil, ""), "use --clusters NAME"},
		{"status two clusters", status("web", []string{"c1", "c2"}, ""), "one cluster at a time, not 2"},
		{"status bad output", status("web", []string{"cluster1"}, "wide"), "use json or yaml"},
		{"delete", del("web", []string{"cluster1"}, time.Minute), ""},
		{"delete without clusters", del("web", nil, time.Minute), "use --clusters"},
		{"delete bad timeout", del("web", []string{"c"}, 0), "--timeout 0s must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.wantErr == "" {
				require.NoError(t, tt.err)
			} else {
				require.ErrorContains(t, tt.err, tt.wantErr)
			}
		})
	}
}

func TestBuildWork(t *testing.T) {
	ms := manifestsFrom(t, cmYAML, deployJSON, "apiVersion: v1\nkind: Endpoints\nmetadata: {name: e}")
	tests := []struct {
		name           string
		updateStrategy string
		wantConfigs    []workv1.ManifestConfigOption
	}{
		{"no update strategy, no manifest configs", "", nil},
		{"one manifest config per manifest", "CreateOnly", []workv1.ManifestConfigOption{
			config("", "configmaps", "default", "cm", "CreateOnly"),
			config("apps", "deployments", "default", "web", "CreateOnly"),
			config("", "endpoints", "", "e", "CreateOnly"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := BuildWork("web", "cluster1", ms, tt.updateStrategy, nil)
			if w.Namespace != "cluster1" || w.Name != "web" || len(w.Spec.Workload.Manifests) != 3 {
				t.Errorf("work = %s/%s with %d manifests", w.Namespace, w.Name, len(w.Spec.Workload.Manifests))
			}
			if !reflect.DeepEqual(w.Spec.ManifestConfigs, tt.wantConfigs) {
				t.Errorf("manifestConfigs = %+v, want %+v", w.Spec.ManifestConfigs, tt.wantConfigs)
			}
			u, err := cli.ToUnstructured(w)
			if err != nil {
				t.Fatal(err)
			}
			manifests, _, _ := unstructured.NestedSlice(u.Object, "spec", "workload", "manifests")
			if u.GetKind() != "ManifestWork" || len(manifests) != 3 || manifests[1].(map[string]any)["kind"] != "Deployment" {
				t.Errorf("applied object = %v", u.Object)
			}
		})
	}
	if got := resourceOf(schema.GroupVersionKind{Version: "v1", Kind: "NetworkPolicy"}, nil); got != "networkpolicies" {
		t.Errorf("guessed resource = %s", got)
	}
}

// config returns the manifest config of one object with an update strategy.
func config(group, resource, namespace, name, strategy string) workv1.ManifestConfigOption {
	return workv1.ManifestConfigOption{
		ResourceIdentifier: workv1.ResourceIdentifier{Group: group, Resource: resource, Namespace: namespace, Name: name},
		UpdateStrategy:     &workv1.UpdateStrategy{Type: workv1.UpdateStrategyType(strategy)},
	}
}

func TestCreateDryRunClient(t *testing.T) {
	streams, in, out, _ := genericiooptions.NewTestIOStreams()
	in.WriteString(cmYAML)
	o := NewCreateOptions(nil, streams)
	o.Name, o.Filenames, o.Clusters, o.DryRun = "web", []string{"-"}, []string{"cluster1", "cluster2"}, cli.DryRunClient
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

// kubeconfigWithNamespace writes a kubeconfig whose current context has
// namespace ctxns and returns kubectl flags reading it, with -n ns when ns
// is not empty.
func kubeconfigWithNamespace(t *testing.T, ns string) *genericclioptions.ConfigFlags {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := `apiVersion: v1
kind: Config
clusters: [{name: hub, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: hub, context: {cluster: hub, namespace: ctxns}}]
current-context: hub
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &path, &ns
	return flags
}

func TestCompleteClustersFromNamespace(t *testing.T) {
	streams := genericiooptions.NewTestIOStreamsDiscard()
	tests := []struct {
		name, verb, ns  string
		clusters        []string
		all, replicaset bool
		wantClusters    []string
		wantNamespace   string
	}{
		{name: "get: -n names the cluster", verb: "get", ns: "cluster1", wantClusters: []string{"cluster1"}, wantNamespace: "cluster1"},
		{name: "get: the context's namespace names no cluster", verb: "get", wantNamespace: "ctxns"},
		{name: "get: -A wins over -n", verb: "get", ns: "cluster1", all: true, wantNamespace: "cluster1"},
		{name: "get: --clusters wins over -n", verb: "get", ns: "cluster1", clusters: []string{"cluster2"}, wantClusters: []string{"cluster2"}, wantNamespace: "cluster1"},
		{name: "get --replicaset: -n is the namespace", verb: "get", ns: "apps", replicaset: true, wantNamespace: "apps"},
		{name: "status: -n names the cluster", verb: "status", ns: "cluster1", wantClusters: []string{"cluster1"}},
		{name: "delete: -n names the cluster", verb: "delete", ns: "cluster1", wantClusters: []string{"cluster1"}, wantNamespace: "cluster1"},
		{name: "delete --replicaset: -n is the namespace", verb: "delete", ns: "apps", replicaset: true, wantNamespace: "apps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getter := kubeconfigWithNamespace(t, tt.ns)
			var clusters *[]string
			namespace := new(string)
			var o cli.Verb
			switch tt.verb {
			case "get":
				g := NewGetOptions(getter, streams)
				g.AllNamespaces, g.ReplicaSet = tt.all, tt.replicaset
				o, clusters, namespace = g, &g.Clusters, &g.Namespace
			case "status":
				s := NewStatusOptions(getter, streams)
				o, clusters = s, &s.Clusters
			case "delete":
				d := NewDeleteOptions(getter, streams)
				d.ReplicaSet = tt.replicaset
				o, clusters, namespace = d, &d.Clusters, &d.Namespace
			}
			*clusters = tt.clusters
			if err := o.Complete(nil, []string{"web"}); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*clusters, tt.wantClusters) || *namespace != tt.wantNamespace {
				t.Errorf("clusters %v, namespace %q; want %v, %q", *clusters, *namespace, tt.wantClusters, tt.wantNamespace)
			}
		})
	}
}

const (
	cmYAML     = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: default}\n"
	deployJSON = `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"}}`
)

// manifestsFrom decodes YAML documents as manifests read from stdin.
func manifestsFrom(t *testing.T, docs ...string) []cli.Manifest {
	t.Helper()
	ms, err := cli.ReadManifests([]string{"-"}, false, strings.NewReader(strings.Join(docs, "\n---\n")))
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestCreateTakeOver checks that --take-over becomes the annotation of the
// ManifestWork and of the ManifestWorkReplicaSet, and that without it
// neither has one.
func TestCreateTakeOver(t *testing.T) {
	o := &CreateOptions{Name: "web", TakeOver: string(workv1.TakeOverNever)}
	o.Rollout.PlacementNamespace, o.Rollout.PlacementName = "apps", "web"
	if got := o.buildWork("cluster1", nil, nil).Annotations[workv1.TakeOverAnnotation]; got != "Never" {
		t.Errorf("ManifestWork take-over annotation = %q, want Never", got)
	}
	if got := o.buildReplicaSet(nil, nil).Annotations[workv1.TakeOverAnnotation]; got != "Never" {
		t.Errorf("ManifestWorkReplicaSet take-over annotation = %q, want Never", got)
	}
	o.TakeOver = ""
	if a := o.buildWork("cluster1", nil, nil).Annotations; a != nil {
		t.Errorf("ManifestWork annotations without --take-over = %v, want none", a)
	}
}
