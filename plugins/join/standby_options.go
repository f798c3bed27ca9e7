package join

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// Hub is one standby hub of repeated --hub-apiserver, --hub-token and
// --ca-file.
type Hub struct {
	// APIServer is the hub's API server URL.
	APIServer string
	// Token is its bootstrap token.
	Token string
	// CAFile is a file with its CA bundle; empty: learn it from the hub
	// and check it against --ca-cert-hash (discovery.go).
	CAFile string
	// ca is the content of CAFile.
	ca []byte
}

// addHubFlags are the flags that apply with --add-hub, besides kubectl's.
var addHubFlags = []string{"add-hub", "hub-apiserver", "hub-token", "ca-file", "ca-cert-hash", "insecure-skip-ca-verification", "cluster-name", "hub-connection-timeout-seconds", "proxy-url", "proxy-ca-file"}

// completeHubs splits the repeated hub flags into the first hub and the
// standby hubs, and reads the standby hubs' CA files.
func (o *Options) completeHubs() error {
	if len(o.hubAPIServers) > 0 {
		o.HubAPIServer = o.hubAPIServers[0]
	}
	if len(o.hubTokens) > 0 {
		o.HubToken = o.hubTokens[0]
	}
	if len(o.caFiles) > 0 {
		o.CAFile = o.caFiles[0]
	}
	at := func(list []string, i int) string {
		if i < len(list) {
			return list[i]
		}
		return ""
	}
	for i := 1; i < max(len(o.hubAPIServers), len(o.hubTokens)); i++ {
		o.StandbyHubs = append(o.StandbyHubs, Hub{APIServer: at(o.hubAPIServers, i), Token: at(o.hubTokens, i), CAFile: at(o.caFiles, i)})
	}
	for i := range o.StandbyHubs {
		h := &o.StandbyHubs[i]
		if h.CAFile == "" {
			continue
		}
		data, err := os.ReadFile(h.CAFile)
		if err != nil {
			return fmt.Errorf("read --ca-file of hub %d: %w", i+2, err)
		}
		h.ca = data
	}
	return nil
}

// validateStandbyHubs checks the standby hubs of a join, one line per
// problem.
func (o *Options) validateStandbyHubs() []error {
	var errs []error
	hubs := 1 + len(o.StandbyHubs)
	if len(o.hubAPIServers) > 1 || len(o.hubTokens) > 1 {
		if len(o.hubAPIServers) != len(o.hubTokens) {
			errs = append(errs, fmt.Errorf("%d --hub-apiserver but %d --hub-token: give one --hub-token per --hub-apiserver, in the same order", len(o.hubAPIServers), len(o.hubTokens)))
		}
	}
	if len(o.caFiles) > 1 && len(o.caFiles) != hubs {
		errs = append(errs, fmt.Errorf("--ca-file given %d times for %d hubs: give it once per --hub-apiserver, in the same order, or not at all", len(o.caFiles), hubs))
	}
	if len(o.caFiles) == 1 && hubs > 1 {
		errs = append(errs, fmt.Errorf("--ca-file given once for %d hubs: give it once per --hub-apiserver, in the same order, or not at all (each hub's CA is then checked against --ca-cert-hash)", hubs))
	}
	seen := []string{o.HubAPIServer}
	for i, h := range o.StandbyHubs {
		errs = append(errs, validateHubURL(h.APIServer, i+2)...)
		if h.APIServer != "" && slices.Contains(seen, h.APIServer) {
			errs = append(errs, fmt.Errorf("--hub-apiserver %s is named twice: name each hub once", h.APIServer))
		}
		seen = append(seen, h.APIServer)
	}
	if t := o.HubConnectionTimeoutSeconds; t != 0 {
		if t < operatorv1.MinHubConnectionTimeoutSeconds {
			errs = append(errs, fmt.Errorf("--hub-connection-timeout-seconds %d is below the minimum of %d", t, operatorv1.MinHubConnectionTimeoutSeconds))
		}
		if len(o.StandbyHubs) == 0 && !o.AddHub {
			errs = append(errs, errors.New("--hub-connection-timeout-seconds only applies with standby hubs: repeat --hub-apiserver and --hub-token"))
		}
	}
	if len(o.StandbyHubs) > 0 && o.ForceInternalEndpointLookup {
		errs = append(errs, errors.New("--force-internal-endpoint-lookup applies to one hub only: drop it, or the standby hubs"))
	}
	return errs
}

// validateHubURL checks the URL of the n-th hub.
func validateHubURL(server string, n int) []error {
	if server == "" {
		return []error{fmt.Errorf("hub %d has a --hub-token but no --hub-apiserver", n)}
	}
	if u, err := url.Parse(server); err != nil || u.Scheme != "https" || u.Host == "" {
		return []error{fmt.Errorf("--hub-apiserver %q (hub %d) is not an https URL such as https://hub.example.com:6443", server, n)}
	}
	return nil
}

// validateAddHub checks the flags of --add-hub: the hubs to add, and no
// flag of a full join.
func (o *Options) validateAddHub() error {
	var errs []error
	for _, f := range o.changed {
		if !slices.Contains(addHubFlags, f) {
			errs = append(errs, fmt.Errorf("--%s does not apply with --add-hub, which only adds hubs to the agent installed already; drop it", f))
		}
	}
	if o.HubAPIServer == "" || o.HubToken == "" {
		errs = append(errs, errors.New("--add-hub needs --hub-apiserver and --hub-token of the hub to add: run `kubectl ocm hub token` on that hub to get them"))
	}
	// The hubs to add are the first hub and the standby hubs of the flags.
	errs = append(errs, validateHubURL(o.HubAPIServer, 1)...)
	errs = append(errs, o.validateCA()...)
	errs = append(errs, o.validateStandbyHubs()...)
	if o.ClusterName != "" {
		if err := identity.ValidateClusterName(o.ClusterName); err != nil {
			errs = append(errs, fmt.Errorf("--cluster-name: %w", err))
		}
	}
	errs = append(errs, o.validateProxy()...)
	return errors.Join(errs...)
}

// forHub returns a copy of o for preflight checks of hub h.
func (o *Options) forHub(h Hub) *Options {
	c := *o
	c.HubAPIServer, c.HubToken, c.CAFile, c.hubCA, c.ForceInternalEndpointLookup = h.APIServer, h.Token, h.CAFile, h.ca, false
	return &c
}

// hubs returns the hubs of the flags: the first, then the standby hubs.
func (o *Options) hubs() []Hub {
	return append([]Hub{{APIServer: o.HubAPIServer, Token: o.HubToken, CAFile: o.CAFile, ca: o.hubCA}}, o.StandbyHubs...)
}
