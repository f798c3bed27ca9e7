package payload

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestChunksPresent(t *testing.T) {
	p := Progress{Chunks: 380, Bytes: 50 << 20, PresentChunks: 212, PresentBytes: 28 << 20}
	tests := []struct {
		name                string
		message             string
		wantPresent, wantOf int64
		wantOK              bool
	}{
		{"a progress", p.String(), 212, 380, true},
		{"in the agent's message", fmt.Sprintf("generation 5: %s; waiting for [sha256-ab]; the cluster keeps generation 4", p), 212, 380, true},
		{"none present", Progress{Chunks: 3, Bytes: 100}.String(), 0, 3, true},
		{"no progress", "generation 5 refused: ManifestChunk sha256-ab is not the chunk its name promises", 0, 0, false},
		{"empty", "", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			present, of, ok := ChunksPresent(tt.message)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantPresent, present)
			assert.Equal(t, tt.wantOf, of)
		})
	}
}
