// Package mcptest connects the MCP Go SDK's client to a kubectl ocm mcp
// server in a test and calls its tools.
package mcptest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// Connect returns a client session of srv over an in-memory connection, or
// over transport when srv is nil; both close with t.
func Connect(ctx context.Context, t *testing.T, srv *mcp.Server, transport mcp.Transport) *mcp.ClientSession {
	t.Helper()
	if srv != nil {
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		kit.Must(t, "connect the server", err)
		t.Cleanup(func() { _ = ss.Close() })
		transport = ct
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, transport, nil)
	kit.Must(t, "connect the client", err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// Call calls tool with args and decodes its structured result into out,
// failing t when the call fails.
func Call(ctx context.Context, t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, out any) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	kit.Must(t, "call "+tool, err)
	if res.IsError {
		t.Fatalf("%s: %s", tool, Text(res))
	}
	data, err := json.Marshal(res.StructuredContent)
	kit.Must(t, "encode", err)
	kit.Must(t, "decode the result of "+tool, json.Unmarshal(data, out))
}

// CallError calls tool, which must fail, and returns the text of its error
// result.
func CallError(ctx context.Context, t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	kit.Must(t, "call "+tool, err)
	if !res.IsError {
		t.Fatalf("%s succeeded: %s", tool, Text(res))
	}
	return Text(res)
}

// Text returns the text content of res.
func Text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
