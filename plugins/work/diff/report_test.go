package diff

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// manifest returns a manifest of the given JSON.
func manifest(s string) workv1.Manifest {
	return workv1.Manifest{RawExtension: runtime.RawExtension{Raw: []byte(s)}}
}

func TestRemoved(t *testing.T) {
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, meta.RESTScopeNamespace)
	mapper.Add(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, meta.RESTScopeNamespace)
	cm := manifest(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"namespace":"default","name":"cm"}}`)
	web := manifest(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"namespace":"default","name":"web"}}`)
	widget := manifest(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"namespace":"default","name":"w"}}`)
	type work struct {
		opt       *workv1.DeleteOption
		manifests []workv1.Manifest
	}
	current := func(opt *workv1.DeleteOption, manifests ...workv1.Manifest) work {
		return work{opt: opt, manifests: manifests}
	}
	selective := func(rules ...workv1.OrphaningRule) *workv1.DeleteOption {
		return &workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeSelectivelyOrphan,
			SelectivelyOrphan: &workv1.SelectivelyOrphan{OrphaningRules: rules}}
	}
	keepWeb := []workv1.Manifest{web}
	tests := []struct {
		name    string
		current work
		want    []string
	}{
		{"Foreground deletes what is left out", current(nil, cm, web), []string{"ConfigMap cm"}},
		{"Orphan deletes nothing", current(&workv1.DeleteOption{PropagationPolicy: workv1.DeletePropagationPolicyTypeOrphan}, cm, web), nil},
		{"an orphaning rule keeps its object", current(selective(workv1.OrphaningRule{Resource: "configmaps", Namespace: "default", Name: "cm"}), cm, web), nil},
		{"a rule of another resource does not", current(selective(workv1.OrphaningRule{Resource: "secrets", Namespace: "default", Name: "cm"}), cm, web), []string{"ConfigMap cm"}},
		{"a rule of another group does not", current(selective(workv1.OrphaningRule{Group: "apps", Resource: "configmaps", Namespace: "default", Name: "cm"}), cm, web), []string{"ConfigMap cm"}},
		{"an unknown kind is listed as unknown", current(selective(), widget, web), []string{"Widget w unknown"}},
		{"an unknown kind without orphaning rules is deleted", current(nil, widget, web), []string{"Widget w"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, m := range removed(tt.current.manifests, keepWeb, tt.current.opt, mapper) {
				assert.Equal(t, ResultDeleted, m.Result)
				line := m.Kind + " " + m.Name
				assert.Contains(t, m.Diff, "the new manifests leave it out")
				if strings.Contains(m.Diff, "unknown here") {
					line += " unknown"
				}
				got = append(got, line)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}
