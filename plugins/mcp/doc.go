// Package mcp implements `kubectl ocm mcp`, a Model Context Protocol server
// that shows the fleet to AI assistants through the hub, with the caller's
// own hub identity: over stdio the user's kubeconfig, as every other verb;
// over streamable HTTP (--listen) the bearer token each request carries,
// used as is and never stored or logged.
//
// Without --allow-writes its tools are read-only. Its reads call the
// libraries the verbs call (pkg/rollout/setstate, pkg/workreport,
// pkg/placement/explain, pkg/hubtunnel); its writes, and work_diff, which
// writes probe ManifestWorks, run the verbs' own Validate and Run, so that
// a write has one path. Each tool answers with JSON (structured content)
// bounded in size: a result cut to fit says how many items it shows and how
// to narrow the query. Every call has a timeout. What clusters report
// (conditions, claims, messages) is returned as data, never acted on.
package mcp
