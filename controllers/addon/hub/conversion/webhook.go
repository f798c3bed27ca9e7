package conversion

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	ctrlconversion "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/servingcert"
)

// Options configure the webhook.
type Options struct {
	// Namespace is the hub controller's namespace: the Secret's and the
	// Service's.
	Namespace string
	// BindAddress is where the webhook listens, host:port. Default: :9443.
	BindAddress string
	// Hosts are names or addresses the serving certificate holds besides
	// the Service's (conversion.ServiceHosts); a specific host of
	// BindAddress is added.
	Hosts []string
	// CAValidity and ServingValidity are the lifetimes of new certificates;
	// 0 means servingcert's defaults.
	CAValidity, ServingValidity time.Duration
	// Resync bounds the time between two checks of the Secret and the CRDs.
	Resync time.Duration
	// TLSOpts adjust the server's TLS configuration after the webhook set
	// its certificate.
	TLSOpts []func(*tls.Config)
}

// Webhook is the conversion webhook: its TLS server and the keeper of its
// certificate.
type Webhook struct {
	// Keeper keeps the certificate and the CRDs' caBundle.
	Keeper *Keeper
	// Server serves Path with the certificate Keeper holds.
	Server webhook.Server
	// Port is the port Server listens on.
	Port int
}

// New returns the webhook for opts. c writes and reader reads the Secret and
// the CRDs; when nil, SetupWithManager fills them from the manager.
func New(c client.Client, reader client.Reader, opts Options, log logr.Logger) (*Webhook, error) {
	if opts.BindAddress == "" {
		opts.BindAddress = ":" + strconv.Itoa(conversion.Port)
	}
	host, portText, err := net.SplitHostPort(opts.BindAddress)
	if err != nil {
		return nil, fmt.Errorf("webhook bind address %q: %w", opts.BindAddress, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port <= 0 {
		return nil, fmt.Errorf("webhook bind address %q: the port must be a positive number", opts.BindAddress)
	}
	hosts := append(conversion.ServiceHosts(opts.Namespace), opts.Hosts...)
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		hosts = append(hosts, host)
	}
	slices.Sort(hosts)
	k := &Keeper{
		Client: c, Reader: reader, Namespace: opts.Namespace, Resync: opts.Resync, Log: log,
		Certs: servingcert.Options{
			CommonName: conversion.ServiceName, Hosts: slices.Compact(hosts),
			CAValidity: opts.CAValidity, ServingValidity: opts.ServingValidity,
		},
	}
	srv := webhook.NewServer(webhook.Options{
		Host: host, Port: port,
		TLSOpts: append([]func(*tls.Config){func(c *tls.Config) { c.GetCertificate = k.GetCertificate }}, opts.TLSOpts...),
	})
	srv.Register(conversion.Path, ctrlconversion.NewWebhookHandler(apis.Scheme, ctrlconversion.NewRegistry()))
	return &Webhook{Keeper: k, Server: srv, Port: port}, nil
}

// SetupWithManager adds the keeper and the server to mgr, whose webhook
// server must be w.Server (manager.Options.WebhookServer), and makes the
// manager ready only once the server answers TLS with a certificate. Without
// clients of its own, the keeper writes with the manager's client and reads
// with its API reader (not its cache, which would watch every Secret of the
// hub).
func (w *Webhook) SetupWithManager(mgr manager.Manager) error {
	if mgr.GetWebhookServer() != w.Server {
		return errors.New("the manager's webhook server is not the conversion webhook's: build it with manager.Options.WebhookServer")
	}
	if err := mgr.AddReadyzCheck("conversion-webhook", w.Server.StartedChecker()); err != nil {
		return fmt.Errorf("add the conversion webhook's readiness check: %w", err)
	}
	if w.Keeper.Client == nil {
		w.Keeper.Client = mgr.GetClient()
	}
	if w.Keeper.Reader == nil {
		w.Keeper.Reader = mgr.GetAPIReader()
	}
	if err := mgr.Add(w.Keeper); err != nil {
		return fmt.Errorf("add the conversion webhook's certificate keeper: %w", err)
	}
	return nil
}

// Start runs the keeper and the server without a manager until ctx ends.
func (w *Webhook) Start(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	keeper := make(chan error, 1)
	go func() { keeper <- w.Keeper.Start(ctx) }()
	err := w.Server.Start(ctx)
	cancel()
	return errors.Join(err, <-keeper)
}
