package clusterset

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// hub returns a fake hub with set prod (managing namespace team-a), set eu
// selecting by label, namespace apps with prod bound to it, and clusters
// c1 in set default, c2 in prod and c3 in no set.
func hub() client.Client {
	mc := func(name, set string) *clusterv1.ManagedCluster {
		c := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if set != "" {
			c.Labels = map[string]string{clusterv1beta2.ClusterSetLabel: set}
		}
		return c
	}
	return fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(
		&clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "prod"}, Spec: clusterv1beta2.ManagedClusterSetSpec{
			ClusterSelector:   clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.ExclusiveClusterSetLabel},
			ManagedNamespaces: []clusterv1.ManagedNamespaceConfig{{Name: "team-a"}}}},
		&clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "eu"}, Spec: clusterv1beta2.ManagedClusterSetSpec{
			ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{}}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}},
		&clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "prod"},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "prod"}},
		mc("c1", clusterv1beta2.DefaultClusterSetName), mc("c2", "prod"), mc("c3", ""),
	).Build()
}

// state describes what set and bind change on the fake hub: each cluster's
// set, the managed namespaces of prod and eu, and the bindings of apps.
func state(ctx context.Context, t *testing.T, c client.Client) string {
	t.Helper()
	var parts []string
	for _, name := range []string{"c1", "c2", "c3"} {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, name+"="+mc.Labels[clusterv1beta2.ClusterSetLabel])
	}
	for _, name := range []string{"prod", "eu"} {
		set := &clusterv1beta2.ManagedClusterSet{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, set); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, name+"=["+strings.Join(namespaceNames(set), ",")+"]")
	}
	bindings := &clusterv1beta2.ManagedClusterSetBindingList{}
	if err := c.List(ctx, bindings, client.InNamespace("apps")); err != nil {
		t.Fatal(err)
	}
	for _, b := range bindings.Items {
		parts = append(parts, "apps/"+b.Name)
	}
	return strings.Join(parts, " ")
}

// before is the state of hub().
const before = "c1=default c2=prod c3= prod=[team-a] eu=[] apps/prod"

func TestSetRun(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		o          SetOptions
		wantOut    []string
		wantState  string
		wantResult *SetResult
		wantErr    string
	}{
		{
			name: "clusters and namespaces",
			o:    SetOptions{Name: "prod", Clusters: []string{"c1", "c2", "c3"}, Namespaces: []string{"team-a", "team-b"}, DryRun: cli.DryRunNone},
			wantOut: []string{
				"Namespace team-a is already a managed namespace of ManagedClusterSet prod\n",
				"Namespace team-b added to the managed namespaces of ManagedClusterSet prod\n",
				"Cluster c1 moved from ManagedClusterSet default to prod\n",
				"Cluster c2 is already in ManagedClusterSet prod\n",
				"Cluster c3 added to ManagedClusterSet prod\n",
			},
			wantState: "c1=prod c2=prod c3=prod prod=[team-a,team-b] eu=[] apps/prod",
		},
		{
			name: "client dry run",
			o:    SetOptions{Name: "prod", Clusters: []string{"c1", "c3"}, Namespaces: []string{"team-b"}, DryRun: cli.DryRunClient},
			wantOut: []string{
				"Namespace team-b added to the managed namespaces of ManagedClusterSet prod (dry run)\n",
				"Cluster c1 moved from ManagedClusterSet default to prod (dry run)\n",
				"Cluster c3 added to ManagedClusterSet prod (dry run)\n",
			},
			wantState: before,
		},
		{
			name:      "client dry run as json",
			o:         SetOptions{Name: "prod", Clusters: []string{"c2", "c3"}, Namespaces: []string{"team-a", "team-b"}, DryRun: cli.DryRunClient, Output: "json"},
			wantState: before,
			wantResult: &SetResult{ClusterSet: "prod", DryRun: cli.DryRunClient,
				Clusters:        []SetCluster{{Name: "c2", PreviousClusterSet: "prod"}, {Name: "c3", Changed: true}},
				AddedNamespaces: []string{"team-b"}, ManagedNamespaces: []string{"team-a", "team-b"}},
		},
		{
			name:       "namespaces of a label selector set",
			o:          SetOptions{Name: "eu", Namespaces: []string{"team-c"}, DryRun: cli.DryRunNone, Output: "json"},
			wantState:  "c1=default c2=prod c3= prod=[team-a] eu=[team-c] apps/prod",
			wantResult: &SetResult{ClusterSet: "eu", AddedNamespaces: []string{"team-c"}, ManagedNamespaces: []string{"team-c"}},
		},
		{
			name:      "clusters into a label selector set",
			o:         SetOptions{Name: "eu", Clusters: []string{"c1"}, Namespaces: []string{"team-c"}, DryRun: cli.DryRunNone},
			wantErr:   "selects its clusters with a label selector",
			wantState: before,
		},
		{
			name:      "a missing cluster changes nothing",
			o:         SetOptions{Name: "prod", Clusters: []string{"c1", "c9", "c8"}, Namespaces: []string{"team-b"}, DryRun: cli.DryRunNone},
			wantErr:   "managed cluster c9 does not exist on the hub",
			wantState: before,
		},
		{
			name:      "a missing set",
			o:         SetOptions{Name: "ghost", Namespaces: []string{"team-b"}, DryRun: cli.DryRunClient},
			wantErr:   "ManagedClusterSet ghost does not exist",
			wantState: before,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := hub()
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			o := tt.o
			o.IOStreams = streams
			err := o.run(ctx, c, "https://hub")
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
			if tt.wantOut != nil && out.String() != strings.Join(tt.wantOut, "") {
				t.Errorf("output =\n%s\nwant\n%s", out, strings.Join(tt.wantOut, ""))
			}
			if tt.wantResult != nil {
				var got SetResult
				if err := json.Unmarshal(out.Bytes(), &got); err != nil {
					t.Fatalf("output is not a result: %v\n%s", err, out)
				}
				if g, w := mustJSON(t, got), mustJSON(t, tt.wantResult); g != w {
					t.Errorf("result = %s, want %s", g, w)
				}
			}
			if got := state(ctx, t, c); got != tt.wantState {
				t.Errorf("hub after the command: %s\nwant %s", got, tt.wantState)
			}
		})
	}
}

func TestBindRun(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		o         BindOptions
		wantOut   string
		wantErr   string
		wantState string
	}{
		{"bind", BindOptions{Name: "eu", Namespace: "apps", DryRun: cli.DryRunNone},
			"ManagedClusterSet eu bound to namespace apps\n", "", "c1=default c2=prod c3= prod=[team-a] eu=[] apps/eu apps/prod"},
		{"bind client dry run", BindOptions{Name: "eu", Namespace: "apps", DryRun: cli.DryRunClient},
			"ManagedClusterSet eu bound to namespace apps (dry run)\n", "", before},
		{"bind client dry run as yaml", BindOptions{Name: "eu", Namespace: "apps", DryRun: cli.DryRunClient, Output: "yaml"},
			"bound: true\nclusterSet: eu\ndryRun: client\nnamespace: apps\n", "", before},
		{"bind client dry run of a missing set", BindOptions{Name: "ghost", Namespace: "apps", DryRun: cli.DryRunClient},
			"", "ManagedClusterSet ghost does not exist", before},
		{"bind client dry run to a missing namespace", BindOptions{Name: "eu", Namespace: "nowhere", DryRun: cli.DryRunClient},
			"", "namespace nowhere does not exist on the hub", before},
		{"unbind", BindOptions{Name: "prod", Namespace: "apps", Unbind: true, DryRun: cli.DryRunNone},
			"ManagedClusterSet prod unbound from namespace apps\n", "", strings.TrimSuffix(before, " apps/prod")},
		{"unbind client dry run", BindOptions{Name: "prod", Namespace: "apps", Unbind: true, DryRun: cli.DryRunClient},
			"ManagedClusterSet prod unbound from namespace apps (dry run)\n", "", before},
		{"unbind client dry run as json", BindOptions{Name: "prod", Namespace: "apps", Unbind: true, DryRun: cli.DryRunClient, Output: "json"},
			"{\n    \"clusterSet\": \"prod\",\n    \"namespace\": \"apps\",\n    \"bound\": false,\n    \"dryRun\": \"client\"\n}\n", "", before},
		{"unbind client dry run of a missing binding", BindOptions{Name: "eu", Namespace: "apps", Unbind: true, DryRun: cli.DryRunClient},
			"", "ManagedClusterSet eu is not bound to namespace apps", before},
		{"unbind client dry run of a missing binding ignored", BindOptions{Name: "eu", Namespace: "apps", Unbind: true, IgnoreNotFound: true, DryRun: cli.DryRunClient},
			"", "", before},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := hub()
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			o := tt.o
			o.IOStreams = streams
			err := o.run(ctx, c, "https://hub")
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
			if out.String() != tt.wantOut {
				t.Errorf("output =\n%s\nwant\n%s", out, tt.wantOut)
			}
			if got := state(ctx, t, c); got != tt.wantState {
				t.Errorf("hub after the command: %s\nwant %s", got, tt.wantState)
			}
		})
	}
}

// mustJSON encodes v.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestSetNamespacesConflict adds a namespace while another writer adds one
// between set's read and its write: set reads the set again and keeps both.
func TestSetNamespacesConflict(t *testing.T) {
	ctx := context.Background()
	base := hub()
	raced := false
	c := interceptor.NewClient(base.(client.WithWatch), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if !raced {
				raced = true
				other := &clusterv1beta2.ManagedClusterSet{}
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), other); err != nil {
					return err
				}
				other.Spec.ManagedNamespaces = append(other.Spec.ManagedNamespaces, clusterv1.ManagedNamespaceConfig{Name: "team-z"})
				if err := c.Update(ctx, other); err != nil {
					return err
				}
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := SetOptions{IOStreams: streams, Name: "prod", Namespaces: []string{"team-b", "team-z"}, DryRun: cli.DryRunNone}
	if err := o.run(ctx, c, "https://hub"); err != nil {
		t.Fatal(err)
	}
	if got, want := state(ctx, t, base), "c1=default c2=prod c3= prod=[team-a,team-z,team-b] eu=[] apps/prod"; got != want {
		t.Errorf("hub after the command: %s\nwant %s", got, want)
	}
	if want := "Namespace team-b added to the managed namespaces of ManagedClusterSet prod\nNamespace team-z is already a managed namespace of ManagedClusterSet prod\n"; out.String() != want {
		t.Errorf("output =\n%s\nwant\n%s", out, want)
	}
}
