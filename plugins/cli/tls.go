package cli

import (
	"github.com/spf13/pflag"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
)

// AddTLSFlags registers --tls-min-version and --tls-cipher-suites, which
// set the spec.tlsProfile of resource (ClusterManager or Klusterlet) for
// the TLS endpoints of what; config.TLSProfileFromFlags checks them. The
// usage follows ocm-controller's flags of the same names.
func AddTLSFlags(fs *pflag.FlagSet, minVersion *string, cipherSuites *[]string, resource, what, operator string) {
	fs.StringVar(minVersion, tlsprofile.MinVersionFlag, "",
		"Minimum TLS version of "+what+": VersionTLS12 or VersionTLS13 (also TLSv1.2, TLSv1.3). Sets the "+resource+"'s spec.tlsProfile.minTLSVersion, which overrides key "+
			tlsprofile.MinTLSVersionKey+" of ConfigMap "+tlsprofile.ConfigMapName+" in the "+operator+"'s namespace. Default: that key, else VersionTLS12.")
	fs.StringSliceVar(cipherSuites, tlsprofile.CipherSuitesFlag, nil,
		"Cipher suites of TLS 1.2 for "+what+", IANA names separated by commas (Go fixes TLS 1.3's); insecure suites are refused. Sets the "+resource+"'s spec.tlsProfile.cipherSuites, which overrides key "+
			tlsprofile.CipherSuitesKey+" of ConfigMap "+tlsprofile.ConfigMapName+". Default: that key, else Go's defaults.")
}
