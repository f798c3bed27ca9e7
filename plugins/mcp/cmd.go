package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Options are the options of `kubectl ocm mcp`.
type Options struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// Listen, when set, serves streamable HTTP on this address instead of stdio.
	Listen string
	// TLSCertFile and TLSKeyFile serve HTTPS; required off loopback.
	TLSCertFile, TLSKeyFile string
	// CallTimeout bounds each tool call.
	CallTimeout time.Duration
	// MaxResultBytes bounds each tool result.
	MaxResultBytes int
	// ShowSecretData returns Secrets' data where the caller may read it.
	ShowSecretData bool
	// AllowWrites adds the tools that write.
	AllowWrites bool
	// SessionTimeout closes a session over HTTP idle this long.
	SessionTimeout time.Duration
}

// NewCmdMCP returns `kubectl ocm mcp`. getter selects the hub.
func NewCmdMCP(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{IOStreams: streams, getter: getter, CallTimeout: DefaultCallTimeout, MaxResultBytes: DefaultMaxBytes, SessionTimeout: DefaultSessionTimeout}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the fleet to AI assistants: a Model Context Protocol server on the hub",
		Long: `Serve the Model Context Protocol (MCP) for AI assistants, with tools that read
the fleet through the hub:

  fleet_overview     every cluster's availability (and why not), version,
                     cluster set, labels, claims and add-ons
  cluster_status     one cluster's conditions, taints, capacity and add-ons
  list_works         a cluster's ManifestWorks and the state of each manifest
  placement_explain  why a Placement selects each cluster or not
  rollout_status     a ManifestWorkReplicaSet's rollout: stages, gates, clusters
  rollout_history    its kept revisions
  work_diff          what new manifests would change on each cluster
  cluster_list       kubectl get's table of a resource on a cluster
  cluster_get        one object of a cluster (Secrets' data withheld)
  cluster_events     a cluster's events, newest first
  pod_logs           a container's last log lines
  across_clusters    one object on many clusters: where it is, its images,
                     and which clusters differ from the others, in what

The cluster_ tools, pod_logs and across_clusters reach each cluster's API
server through the hub's tunnel with your own hub identity, as kubectl ocm
proxy does. With --allow-writes the server adds rollout_approve, rollout_pause, rollout_resume,
rollout_abort, rollout_undo and apply_work; the hub admits each write in a
server-side dry run first, shown in the result, and every write carries the
field manager kubectl-ocm-mcp/TOOL/CALLER. Results are bounded
(--max-result-bytes), with a note saying how to narrow a query that was cut;
every call has a timeout (--call-timeout).

The server holds no credential of its own. Over stdio (the default, what
desktop assistants start) it reads the hub with your kubeconfig, as every other
verb does. With --listen it serves the protocol's streamable HTTP transport,
and every request must carry its caller's hub bearer token, which each call
uses as is: it is never stored or logged. The hub is asked who each token is;
a request whose token it does not accept gets 401, and a session belongs to the
user who opened it (another user's token gets 403) and closes after
--session-timeout without a request. Plain HTTP is served on loopback only;
another address needs --tls-cert-file and --tls-key-file. A kubeconfig that
skips verifying the hub's certificate is refused with --listen: the callers'
tokens would go to an unverified server.

The HTTP server is meant for one user's assistants, or for callers who each
send a hub token of their own: a caller hands their hub token, with all its
rights, to whoever runs the server, so send it only to a server you trust as
you trust your kubeconfig, and prefer a token with only the rights the
assistant needs.`,
		Example: cli.Examples(`
			# The assistant starts the server over stdio, with the hub of context hub
			kubectl ocm mcp --context hub

			# Streamable HTTP on loopback; each request carries its caller's hub token
			kubectl ocm mcp --listen 127.0.0.1:8765 --context hub

			# With the tools that write (approve, pause, resume, abort, undo, apply_work)
			kubectl ocm mcp --context hub --allow-writes

			# Off loopback, over HTTPS only
			kubectl ocm mcp --listen 0.0.0.0:8765 --tls-cert-file tls.crt --tls-key-file tls.key`),
		Args: cobra.NoArgs,
		RunE: cli.RunE(o),
	}
	f := cmd.Flags()
	f.StringVar(&o.Listen, "listen", "", "Serve streamable HTTP on this address (host:port) instead of stdio; each request must carry its caller's hub bearer token.")
	f.StringVar(&o.TLSCertFile, "tls-cert-file", "", "With --listen: serve HTTPS with this certificate (PEM); required off loopback.")
	f.StringVar(&o.TLSKeyFile, "tls-key-file", "", "With --listen: the private key (PEM) of --tls-cert-file.")
	f.DurationVar(&o.CallTimeout, "call-timeout", DefaultCallTimeout, "Longest time one tool call may take.")
	f.IntVar(&o.MaxResultBytes, "max-result-bytes", DefaultMaxBytes, "Largest JSON result of one tool call; a longer one is cut, with a note saying how to narrow the query.")
	f.BoolVar(&o.AllowWrites, "allow-writes", false, "Add the tools that write, as the caller: rollout_approve, rollout_pause, rollout_resume, rollout_abort, rollout_undo and apply_work; each is admitted in a server-side dry run first.")
	f.DurationVar(&o.SessionTimeout, "session-timeout", DefaultSessionTimeout, "With --listen: close a session its client sent no request for this long; the client opens a new one.")
	f.BoolVar(&o.ShowSecretData, "show-secret-data", false, "Return Secrets' data where the caller may read it (cluster_get, across_clusters); without it, each value is withheld and says its size. work_diff never returns Secrets' values.")
	return cmd
}

// Complete implements cli.Verb.
func (o *Options) Complete(*cobra.Command, []string) error { return nil }

// Validate implements cli.Verb.
func (o *Options) Validate() error {
	if o.CallTimeout <= 0 {
		return fmt.Errorf("--call-timeout %s must be positive", o.CallTimeout)
	}
	if o.SessionTimeout <= 0 {
		return fmt.Errorf("--session-timeout %s must be positive", o.SessionTimeout)
	}
	if o.MaxResultBytes < 1024 {
		return fmt.Errorf("--max-result-bytes %d is below 1024: no result would fit", o.MaxResultBytes)
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		return errors.New("--tls-cert-file and --tls-key-file go together")
	}
	if o.Listen == "" {
		if o.TLSCertFile != "" {
			return errors.New("--tls-cert-file needs --listen: over stdio there is no listener")
		}
		return nil
	}
	return CheckListen(o.Listen, o.TLSCertFile != "")
}

// CheckListen refuses a listen address off loopback without TLS: a hub
// token sent in plain HTTP across a network can be read on the way.
func CheckListen(addr string, tls bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %w; give host:port, such as 127.0.0.1:8765", addr, err)
	}
	if tls {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--listen %s is not a loopback address: requests carry hub tokens, which plain HTTP would expose on the network; serve on 127.0.0.1, or give --tls-cert-file and --tls-key-file", addr)
}

// Run implements cli.Verb.
func (o *Options) Run(ctx context.Context) error {
	hub, err := o.getter.ToRESTConfig()
	if err != nil {
		return fmt.Errorf("read the hub's client configuration: %w", err)
	}
	cfg := Config{Hub: hub, HTTP: o.Listen != "", CallTimeout: o.CallTimeout, MaxBytes: o.MaxResultBytes, SecretData: o.ShowSecretData, AllowWrites: o.AllowWrites,
		SessionTimeout: o.SessionTimeout}
	srv := NewServer(cfg)
	if o.Listen == "" {
		t := &mcp.IOTransport{Reader: io.NopCloser(o.In), Writer: nopWriteCloser{o.Out}}
		if err := srv.Run(ctx, t); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
			return fmt.Errorf("serve MCP over stdio: %w", err)
		}
		return nil
	}
	return o.serveHTTP(ctx, srv, cfg)
}

// serveHTTP serves srv, configured by cfg, over streamable HTTP until ctx
// ends.
func (o *Options) serveHTTP(ctx context.Context, srv *mcp.Server, cfg Config) error {
	handler, err := Handler(srv, cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", o.Listen, err)
	}
	scheme := "http"
	if o.TLSCertFile != "" {
		scheme = "https"
	}
	fmt.Fprintf(o.ErrOut, "Serving MCP (streamable HTTP) on %s://%s/; each request must carry its caller's hub token (Authorization: Bearer <token>).\n", scheme, ln.Addr())
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() {
		if o.TLSCertFile != "" {
			errc <- hs.ServeTLS(ln, o.TLSCertFile, o.TLSKeyFile)
		} else {
			errc <- hs.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serve MCP on %s: %w", o.Listen, err)
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		return hs.Shutdown(shutdown)
	}
}

// nopWriteCloser makes a writer an io.WriteCloser whose Close does nothing.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
