package unjoin

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// TestDryRun runs the client dry run against a cluster that holds the
// agent of cluster1 and its operator: it names the Klusterlet and each
// installed object, and every one of them is still there afterwards.
func TestDryRun(t *testing.T) {
	ctx := context.Background()
	agent, err := config.AgentObjects(config.AgentValues{ClusterName: "cluster1"})
	if err != nil {
		t.Fatal(err)
	}
	operator, err := config.KlusterletOperatorObjects(config.KlusterletOperatorValues{})
	if err != nil {
		t.Fatal(err)
	}
	var installed []client.Object
	for _, obj := range append(agent, operator...) {
		if obj.GetKind() != "CustomResourceDefinition" && obj.GetKind() != "Klusterlet" {
			installed = append(installed, obj.DeepCopy())
		}
	}
	k := &operatorv1.Klusterlet{ObjectMeta: metav1.ObjectMeta{Name: operatorv1.KlusterletName}, Spec: operatorv1.KlusterletSpec{ClusterName: "cluster1"}}
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(append(installed, k)...).Build()

	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	o := NewOptions(nil, streams)
	o.ClusterName, o.DryRun = "cluster1", cli.DryRunClient
	tgt, err := o.target()
	if err != nil {
		t.Fatal(err)
	}
	if err := o.dryRun(ctx, c, tgt, k); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	for _, want := range []string{"Klusterlet klusterlet deleted (dry run)", "Namespace " + config.AgentNamespace + " deleted (dry run)",
		"Deployment " + operatorv1.OperatorNamespace + "/" + config.KlusterletOperatorName + " deleted (dry run)", "Then the CRDs no objects use any more would be deleted"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, obj := range installed {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(obj.GetObjectKind().GroupVersionKind())
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), u); err != nil {
			t.Errorf("%s is gone after a dry run: %v", apply.Describe(obj), err)
		}
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(k), &operatorv1.Klusterlet{}); err != nil {
		t.Errorf("the Klusterlet is gone after a dry run: %v", err)
	}
}
