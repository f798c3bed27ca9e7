package config

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
)

func TestHubObjects(t *testing.T) {
	objs, err := HubObjects(HubValues{})
	if err != nil {
		t.Fatal(err)
	}
	crds, err := HubCRDs()
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) <= len(crds) {
		t.Fatalf("HubObjects returned %d objects, want the %d CRDs and the hub manifests", len(objs), len(crds))
	}
	namespaces := map[string]bool{}
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			namespaces[o.GetName()] = true
		}
		if o.GetKind() == "CustomResourceDefinition" {
			if _, found := o.Object["status"]; found {
				t.Errorf("CRD %s carries status; applying it would fail", o.GetName())
			}
		}
	}
	for _, ns := range []string{HubNamespace, OperatorNamespace} {
		if !namespaces[ns] {
			t.Errorf("hub objects lack namespace %s", ns)
		}
	}
}

func TestAgentObjects(t *testing.T) {
	_, err := AgentObjects(AgentValues{})
	assert.ErrorContains(t, err, "cluster name", "AgentObjects without a cluster name")
	objs, err := AgentObjects(AgentValues{ClusterName: "cluster1", AgentNamespace: "open-cluster-management-agent-x"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, o := range objs {
		if o.GetKind() == "Namespace" && o.GetName() == "open-cluster-management-agent-x" {
			found = true
		}
	}
	if !found {
		t.Error("agent objects lack the namespace given in the values")
	}
}

func TestDecodeDocuments(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    int
		wantErr bool
	}{
		{name: "two documents and an empty one", in: "apiVersion: v1\nkind: A\n---\n---\napiVersion: v1\nkind: B\n", want: 2},
		{name: "comment-only document", in: "# nothing\n---\napiVersion: v1\nkind: A\n", want: 1},
		{name: "no kind", in: "apiVersion: v1\nmetadata: {name: x}\n", wantErr: true},
		{name: "bad yaml", in: "apiVersion: [\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeDocuments([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if len(got) != tt.want {
				t.Errorf("got %d objects, want %d", len(got), tt.want)
			}
		})
	}
}

func TestHostedAgentObjects(t *testing.T) {
	_, _, err := HostedAgentObjects(AgentValues{})
	assert.ErrorContains(t, err, "cluster name", "HostedAgentObjects without a cluster name")
	hosting, managed, err := HostedAgentObjects(AgentValues{ClusterName: "c2", BootstrapKubeconfig: []byte("boot"), ManagedKubeconfig: []byte("managed")})
	if err != nil {
		t.Fatal(err)
	}
	names := func(objs []*unstructured.Unstructured) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.GetKind()+" "+strings.TrimPrefix(o.GetNamespace()+"/", "/")+o.GetName())
		}
		return out
	}
	wantManaged := []string{"CustomResourceDefinition " + AppliedManifestWorksCRDName, "CustomResourceDefinition " + ClusterClaimsCRDName}
	if got := names(managed); !slices.Equal(sorted(got), sorted(wantManaged)) {
		t.Errorf("managed-cluster objects = %v, want only %v", got, wantManaged)
	}
	got := names(hosting)
	for _, want := range []string{
		"CustomResourceDefinition " + KlusterletsCRDName,
		"Namespace klusterlet-c2",
		// The subject the hub's hosting works of hosted add-ons bind.
		"ServiceAccount " + identity.HostedAgentSubject("c2").Namespace + "/" + identity.HostedAgentSubject("c2").Name,
		"Secret klusterlet-c2/bootstrap-hub-kubeconfig",
		"Secret klusterlet-c2/" + ManagedKubeconfigSecret,
		"Klusterlet klusterlet-c2",
		"Deployment klusterlet-c2/" + HostedAgentDeployment("c2"),
		"ClusterRole open-cluster-management:klusterlet-agent:hosted:c2",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("hosting-cluster objects lack %s; have %v", want, got)
		}
	}
	for _, o := range hosting {
		if o.GetLabels()[apply.PartOfLabelKey] != apply.PartOfLabelValue {
			t.Errorf("%s %s lacks label %s=%s", o.GetKind(), o.GetName(), apply.PartOfLabelKey, apply.PartOfLabelValue)
		}
		switch o.GetKind() {
		case "Klusterlet":
			mode, _, _ := unstructured.NestedString(o.Object, "spec", "deployOption", "mode")
			cluster, _, _ := unstructured.NestedString(o.Object, "spec", "clusterName")
			if mode != "Hosted" || cluster != "c2" {
				t.Errorf("Klusterlet mode %q cluster %q, want Hosted c2", mode, cluster)
			}
		case "Deployment":
			args, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			text := fmt.Sprint(args)
			for _, want := range []string{"--managed-kubeconfig-secret=" + ManagedKubeconfigSecret, "--klusterlet-name=klusterlet-c2", "--cluster-name=c2"} {
				if !strings.Contains(text, want) {
					t.Errorf("agent Deployment lacks argument %s", want)
				}
			}
		case "Secret":
			if o.GetName() == ManagedKubeconfigSecret {
				data, _, _ := unstructured.NestedString(o.Object, "data", "kubeconfig")
				if data != base64.StdEncoding.EncodeToString([]byte("managed")) {
					t.Errorf("Secret %s holds %q, want the managed kubeconfig", ManagedKubeconfigSecret, data)
				}
			}
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestClusterBootstrapObjects(t *testing.T) {
	_, err := ClusterBootstrapObjects("Bad_Name")
	assert.ErrorContains(t, err, "is not a DNS-1123 label", "ClusterBootstrapObjects with an invalid name")
	_, err = ClusterBootstrapObjects("registration")
	assert.ErrorContains(t, err, "is reserved", "ClusterBootstrapObjects with a reserved name")
	objs, err := ClusterBootstrapObjects("c1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
		if o.GetLabels()["open-cluster-management.io/cluster-name"] != "c1" || o.GetLabels()[apply.PartOfLabelKey] != apply.PartOfLabelValue {
			t.Errorf("%s %s lacks the cluster-name or part-of label: %v", o.GetKind(), o.GetName(), o.GetLabels())
		}
	}
	// No binding: the bootstrap role is bound once to the namespace's group.
	want := []string{"ServiceAccount open-cluster-management-cluster-bootstrap/agent-registration-bootstrap-c1"}
	if !slices.Equal(got, want) {
		t.Errorf("ClusterBootstrapObjects(c1) = %v, want %v", got, want)
	}
}

// TestClusterBootstrapPolicyMatchesIdentity checks that the admission policy
// restricts every ServiceAccount of the namespace the bootstrap role is
// bound to, and takes the cluster from the user names
// identity.ClusterBootstrapUser gives.
func TestClusterBootstrapPolicyMatchesIdentity(t *testing.T) {
	objs, err := Render("hub", HubValues{}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() != "ValidatingAdmissionPolicy" || o.GetName() != "cluster-bootstrap.open-cluster-management.io" {
			continue
		}
		conds, _, _ := unstructured.NestedSlice(o.Object, "spec", "matchConditions")
		if len(conds) != 1 || !strings.Contains(fmt.Sprint(conds[0]), "startsWith('system:serviceaccount:open-cluster-management-cluster-bootstrap:')") {
			t.Errorf("matchConditions = %v", conds)
		}
		vars, _, _ := unstructured.NestedSlice(o.Object, "spec", "variables")
		if len(vars) == 0 || !strings.Contains(fmt.Sprint(vars[0]), "substring(size('"+identity.ClusterBootstrapUser("")+"'))") {
			t.Errorf("variables = %v", vars)
		}
		return
	}
	t.Fatal("hub objects lack the cluster-bootstrap admission policy")
}

// TestControllerImage checks that the default image is the one of the
// build's version, never latest, for release and development versions.
func TestControllerImage(t *testing.T) {
	tests := []struct {
		version, registry, want string
	}{
		{"v0.1.0", DefaultImageRegistry, "quay.io/kubectl-ocm/ocm-controller:v0.1.0"},
		{"v0.1.0-3-gabc1234-dirty", "localhost:5000/", "localhost:5000/ocm-controller:v0.1.0-3-gabc1234-dirty"},
		{"v0.2.0+meta", "registry.example.com/mirror", "registry.example.com/mirror/ocm-controller:v0.2.0-meta"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			if got := ControllerImage(tt.registry, tt.version); got != tt.want {
				t.Errorf("ControllerImage(%q) = %q, want %q", tt.registry, got, tt.want)
			}
		})
	}
	if got, want := DefaultImage(), "quay.io/kubectl-ocm/ocm-controller:"+version.ImageTag(version.Version); got != want {
		t.Errorf("DefaultImage() = %q, want %q", got, want)
	}
}
