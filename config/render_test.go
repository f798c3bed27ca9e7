package config

import (
	"strings"
	"testing"
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
	if _, err := AgentObjects(AgentValues{}); err == nil || !strings.Contains(err.Error(), "cluster name") {
		t.Errorf("AgentObjects without a cluster name: err = %v, want one naming the cluster name", err)
	}
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
			got, err := decodeDocuments([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if len(got) != tt.want {
				t.Errorf("got %d objects, want %d", len(got), tt.want)
			}
		})
	}
}
