package payloadgen

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGenerate(t *testing.T) {
	first := Generate(Options{MiB: 5, Namespace: "ns"})
	require.Len(t, first.Manifests, len(first.Objects))
	size := 0
	for _, m := range first.Manifests {
		size += len(m.Raw)
	}
	assert.InDelta(t, 5<<20, size, 0.05*(5<<20), "the payload's size")
	assert.Equal(t, first, Generate(Options{MiB: 5, Namespace: "ns"}), "the same options give the same payload")

	second := Generate(Options{MiB: 5, Namespace: "ns", Generation: 2,
		Changed: func(i int) bool { return i == 3 }, Removed: func(i int) bool { return i == 5 }})
	raw := map[string]string{}
	for i, o := range second.Objects {
		raw[o.Key()] = string(second.Manifests[i].Raw)
	}
	require.Len(t, second.Objects, len(first.Objects)-1)
	for i, o := range first.Objects {
		t.Run(o.Key(), func(t *testing.T) {
			var obj struct {
				Metadata struct {
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
			}
			require.NoError(t, json.Unmarshal(first.Manifests[i].Raw, &obj))
			assert.Equal(t, "1", obj.Metadata.Labels[GenerationLabel])
			now, kept := raw[o.Key()]
			switch o.Name {
			case "payload-0003":
				assert.NotEqual(t, string(first.Manifests[i].Raw), now, "a changed ConfigMap holds other content")
				assert.Contains(t, now, `"`+GenerationLabel+`":"2"`)
				assert.Equal(t, 2, second.Generations()[o.Key()])
			case "payload-0005":
				assert.False(t, kept, "a removed ConfigMap is left out")
			default:
				assert.Equal(t, string(first.Manifests[i].Raw), now, "an object the generation does not change keeps its bytes")
			}
		})
	}
}
