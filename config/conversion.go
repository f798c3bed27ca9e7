package config

import (
	"fmt"
	"net"
	"net/url"
	"strconv"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
)

// WebhookBindAddress is the address the hub controller serves its
// conversion webhook on: :9443, or the port of ConversionWebhookURL (on its
// host when that is a loopback address).
func (v HubValues) WebhookBindAddress() string {
	host, port, err := webhookHostPort(v.ConversionWebhookURL)
	if err != nil || port == "" {
		return ":" + strconv.Itoa(conversion.Port)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return net.JoinHostPort(host, port)
	}
	return ":" + port
}

// WebhookHost is the host of ConversionWebhookURL, which the serving
// certificate must name besides the Service's names; empty without a URL.
func (v HubValues) WebhookHost() string {
	host, _, _ := webhookHostPort(v.ConversionWebhookURL)
	return host
}

// webhookHostPort splits a conversion webhook URL into its host and port
// (443 when the URL names none); both are empty for an empty URL.
func webhookHostPort(raw string) (host, port string, err error) {
	if raw == "" {
		return "", "", nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", err
	}
	port = u.Port()
	if port == "" {
		port = "443"
	}
	return u.Hostname(), port, nil
}

// ValidateConversionWebhookURL checks a ConversionWebhookURL: empty, or an
// https URL with a host, as the API server accepts in a CRD's clientConfig.
func ValidateConversionWebhookURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return fmt.Errorf("conversion webhook URL %q: %w", raw, err)
	case u.Scheme != "https" || u.Hostname() == "":
		return fmt.Errorf("conversion webhook URL %q must be https://<host>[:<port>]/<path>", raw)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("conversion webhook URL %q must not hold user information, a query or a fragment", raw)
	}
	return nil
}

// WebhookPort is the container port of the conversion webhook: the port of
// WebhookBindAddress.
func (v HubValues) WebhookPort() string {
	_, port, err := net.SplitHostPort(v.WebhookBindAddress())
	if err != nil {
		return strconv.Itoa(conversion.Port)
	}
	return port
}
