package work

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/payload"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/internal/workpayload"
)

// configMaps returns n ConfigMap manifests of size bytes of data each.
func configMaps(t *testing.T, n, size int) []cli.Manifest {
	t.Helper()
	out := make([]cli.Manifest, n)
	for i := range out {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%d", i), "namespace": "default"},
			"data":     map[string]any{"v": strings.Repeat(fmt.Sprint(i), size)},
		}}
		raw, err := json.Marshal(obj.Object)
		require.NoError(t, err)
		out[i] = cli.Manifest{Object: obj, Source: "test", Size: len(raw)}
	}
	return out
}

func TestPackPayload(t *testing.T) {
	tests := []struct {
		name      string
		manifests []cli.Manifest
		large     bool
	}{
		{"a small work keeps its manifests", configMaps(t, 3, 1000), false},
		{"just under the limit of a ManifestWork", configMaps(t, 1, workv1.DefaultManifestsSizeLimit-200), false},
		{"over the limit of a ManifestWork", configMaps(t, 20, 100<<10), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &CreateOptions{Name: "web"}
			assert.Equal(t, tt.large, workpayload.SizeLimit(tt.manifests) > workv1.DefaultManifestsSizeLimit)
			require.NoError(t, cli.ValidateManifests(tt.manifests, workpayload.SizeLimit(tt.manifests)))
			for _, cluster := range []string{"cluster1", "cluster2"} {
				w := o.buildWork(cluster, tt.manifests, nil)
				require.NoError(t, o.packPayload(&w.Spec))
				p, err := payload.Of(&w.Spec)
				require.NoError(t, err)
				if !tt.large {
					assert.Nil(t, p)
					assert.Len(t, w.Spec.Workload.Manifests, len(tt.manifests))
					assert.Nil(t, o.payload)
					continue
				}
				require.NotNil(t, p)
				assert.Equal(t, int64(len(tt.manifests)), p.Spec.Manifests)
				assert.Len(t, o.payload.Chunks, len(p.Spec.Chunks))
			}
		})
	}
}
