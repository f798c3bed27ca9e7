// Package mcpcli tests `kubectl ocm mcp`'s server against a real hub API
// server, as MCP clients use it: with the SDK's client over an in-memory
// connection (the stdio case, the caller's kubeconfig identity) and over
// streamable HTTP with each request's bearer token, as a user the hub gives
// rights to and as one it does not. It checks each tool's answer, the
// hub's refusals passed on as they are, the call timeout and the result
// bound. The tests start a control plane and are skipped under
// `go test -short`.
package mcpcli
