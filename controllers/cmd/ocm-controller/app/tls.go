package app

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
)

// The TLS profile: the ConfigMap ocm-tls-profile in the controller's own
// namespace, read at start and watched.
// +kubebuilder:rbac:groups="",namespace="{{ .Namespace }}",resources=configmaps,verbs=get;list;watch,resourceNames=ocm-tls-profile

// TLSOptions are the TLS profile flags of the hub and agent modes. The
// profile is read at start from the flags and the ConfigMap
// ocm-tls-profile in the controller's namespace (flags win, key by key);
// a bad profile at start stops the controller with the reason, as OCM's
// components do. The hub also runs the watcher Load returns: a later
// change of the ConfigMap applies to new connections without a restart,
// and an invalid change is logged and ignored.
type TLSOptions struct {
	// MinVersion is --tls-min-version; empty: the ConfigMap's.
	MinVersion string
	// CipherSuites is --tls-cipher-suites; empty: the ConfigMap's.
	CipherSuites []string
}

// AddFlags registers --tls-min-version and --tls-cipher-suites. endpoints
// names the mode's TLS endpoints and reads says how it reads the ConfigMap,
// for the usage.
func (o *TLSOptions) AddFlags(fs *pflag.FlagSet, endpoints, reads string) {
	fs.StringVar(&o.MinVersion, tlsprofile.MinVersionFlag, "",
		"Minimum TLS version of "+endpoints+": "+tlsprofile.VersionUsage+". Overrides key "+tlsprofile.MinTLSVersionKey+
			" of ConfigMap "+tlsprofile.ConfigMapName+" in the controller's namespace, "+reads+". Default: that key, else VersionTLS12.")
	fs.StringSliceVar(&o.CipherSuites, tlsprofile.CipherSuitesFlag, nil,
		"Cipher suites of TLS 1.0 to 1.2 for "+endpoints+", IANA names separated by commas (Go fixes TLS 1.3's); insecure suites only with a minimum below VersionTLS12. Overrides key "+
			tlsprofile.CipherSuitesKey+" of ConfigMap "+tlsprofile.ConfigMapName+". Default: that key, else Go's defaults.")
}

// Validate checks each flag on its own; whether they fit the ConfigMap is
// checked when it is read.
func (o *TLSOptions) Validate() error {
	if o.MinVersion != "" {
		if _, err := tlsprofile.ParseVersion(o.MinVersion); err != nil {
			return fmt.Errorf("--%s: %w", tlsprofile.MinVersionFlag, err)
		}
	}
	if _, err := tlsprofile.ParseCipherSuites(o.CipherSuites); err != nil {
		return fmt.Errorf("--%s: %w", tlsprofile.CipherSuitesFlag, err)
	}
	return nil
}

// Load reads the profile in namespace with the flags over it and returns
// it, with the watcher that keeps it current; add the watcher to the
// manager when it is not nil. An empty namespace means the flags alone, and
// so do flags that set both keys (as an operator passing a whole profile
// does): the ConfigMap could change nothing, so it is neither read nor
// watched. check, when set, names what a valid profile leaves unserved on
// this mode, logged as a warning (see tlsprofile.Watcher.Check).
func (o *TLSOptions) Load(ctx context.Context, cfg *rest.Config, namespace string, check func(tlsprofile.Profile) string, log logr.Logger) (*tlsprofile.Dynamic, *tlsprofile.Watcher, error) {
	flags := tlsprofile.FromFlags(o.MinVersion, o.CipherSuites)
	if namespace == "" || (flags.MinVersion.IsSet() && flags.CipherSuites.IsSet()) {
		p, err := flags.Profile()
		if err != nil {
			return nil, nil, err
		}
		return tlsprofile.NewDynamic(p), nil, nil
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("client for the TLS profile: %w", err)
	}
	p, err := tlsprofile.Load(ctx, c, namespace, flags)
	if err != nil {
		return nil, nil, fmt.Errorf("TLS profile: %w", err)
	}
	log.Info("TLS profile", "configMap", namespace+"/"+tlsprofile.ConfigMapName, "profile", p.String())
	if check != nil {
		if warning := check(p); warning != "" {
			log.Info("Warning: "+warning, "profile", p.String())
		}
	}
	d := tlsprofile.NewDynamic(p)
	return d, &tlsprofile.Watcher{Client: c, Namespace: namespace, Overrides: flags, Profile: d, Log: log, Check: check}, nil
}

// servesECDSA returns the check that warns of a profile under which server,
// whose certificate has an ECDSA key (servingcert makes them with
// certs.NewPrivateKey), serves TLS 1.3 clients only.
func servesECDSA(server string) func(tlsprofile.Profile) string {
	return func(p tlsprofile.Profile) string {
		if p.AllowsECDSA() {
			return ""
		}
		return "no cipher suite of the profile fits the ECDSA certificate of " + server + ", so it serves TLS 1.3 clients only: add TLS_ECDHE_ECDSA_ suites to serve TLS 1.2 clients"
	}
}
