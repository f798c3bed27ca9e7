package tlsprofile

import (
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
)

// The names OCM gives the profile: the ConfigMap, its keys and the flags
// that override them.
const (
	// ConfigMapName is the ConfigMap holding the profile, in the
	// component's own namespace.
	ConfigMapName = "ocm-tls-profile"
	// MinTLSVersionKey is the ConfigMap key of the minimum TLS version.
	MinTLSVersionKey = "minTLSVersion"
	// CipherSuitesKey is the ConfigMap key of the cipher suites, IANA names
	// separated by commas.
	CipherSuitesKey = "cipherSuites"
	// MinVersionFlag is the flag that overrides MinTLSVersionKey.
	MinVersionFlag = "tls-min-version"
	// CipherSuitesFlag is the flag that overrides CipherSuitesKey.
	CipherSuitesFlag = "tls-cipher-suites"
)

// DefaultMinVersion is the minimum TLS version when nothing sets one.
const DefaultMinVersion = tls.VersionTLS12

// Profile is a parsed TLS profile. The zero Profile is the default one:
// TLS 1.2 or later with Go's default cipher suites.
type Profile struct {
	// MinVersion is the minimum TLS version, a crypto/tls constant; 0
	// means DefaultMinVersion.
	MinVersion uint16
	// CipherSuites are the cipher suites allowed with TLS 1.0 to 1.2, in
	// order; empty means Go's defaults.
	CipherSuites []uint16
}

// versions are the accepted spellings of each version: Kubernetes' and
// OCM's first, OpenSSL's second.
var versions = []struct {
	names   [2]string
	version uint16
}{
	{[2]string{"VersionTLS10", "TLSv1.0"}, tls.VersionTLS10},
	{[2]string{"VersionTLS11", "TLSv1.1"}, tls.VersionTLS11},
	{[2]string{"VersionTLS12", "TLSv1.2"}, tls.VersionTLS12},
	{[2]string{"VersionTLS13", "TLSv1.3"}, tls.VersionTLS13},
}

// VersionUsage lists the accepted versions, for errors and flag usage.
const VersionUsage = "VersionTLS10, VersionTLS11, VersionTLS12 or VersionTLS13 (also TLSv1.0 to TLSv1.3)"

// ParseVersion returns the crypto/tls constant of a version name; an empty
// name is DefaultMinVersion.
func ParseVersion(name string) (uint16, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return DefaultMinVersion, nil
	}
	for _, v := range versions {
		if name == v.names[0] || name == v.names[1] {
			return v.version, nil
		}
	}
	return 0, fmt.Errorf("%q is not a TLS version: use %s", name, VersionUsage)
}

// VersionName returns the name of a crypto/tls version constant as
// Kubernetes and OCM spell it, or its hexadecimal value.
func VersionName(version uint16) string {
	for _, v := range versions {
		if v.version == version {
			return v.names[0]
		}
	}
	return fmt.Sprintf("0x%04x", version)
}

// ParseCipherSuites returns the IDs of cipher suites given by their IANA
// names, in order. Blank names (as in a trailing comma) are skipped; an
// unknown name is an error listing the names crypto/tls knows. Whether an
// insecure suite may be used depends on the minimum version: see
// Profile.Validate.
func ParseCipherSuites(names []string) ([]uint16, error) {
	var unknown []string
	var out []uint16
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		s := suiteByName(name)
		if s == nil {
			unknown = append(unknown, name)
			continue
		}
		out = append(out, s.ID)
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("unknown %s: use IANA names that Go's crypto/tls supports: %s",
			suites(unknown), strings.Join(secureSuiteNames(), ", "))
	}
	return out, nil
}

// SplitCipherSuites splits a ConfigMap's comma-separated cipher suites.
func SplitCipherSuites(value string) []string {
	if strings.TrimSpace(value) == "" {
		return nil
	}
	return strings.Split(value, ",")
}

// CipherSuiteNames returns the IANA names of ids.
func CipherSuiteNames(ids []uint16) []string {
	names := make([]string, 0, len(ids))
	for _, id := range ids {
		names = append(names, tls.CipherSuiteName(id))
	}
	return names
}

// Validate checks the combination of version and suites: no insecure suite
// with a minimum of TLS 1.2 or later, and below TLS 1.3 at least one suite
// that TLS 1.2 or earlier can use. The error names the suites and the fix.
func (p Profile) Validate() error {
	minVersion := p.minVersion()
	if minVersion >= tls.VersionTLS12 {
		var insecure []string
		for _, id := range p.CipherSuites {
			if s := suiteByID(id); s != nil && s.Insecure {
				insecure = append(insecure, s.Name)
			}
		}
		if len(insecure) > 0 {
			remove := "remove it"
			if len(insecure) > 1 {
				remove = "remove them"
			}
			return fmt.Errorf("insecure %s (crypto/tls.InsecureCipherSuites) refused with a minimum of %s: %s, or set the minimum version to VersionTLS10 or VersionTLS11 to admit legacy clients on purpose",
				suites(insecure), VersionName(minVersion), remove)
		}
	}
	if minVersion < tls.VersionTLS13 && len(p.CipherSuites) > 0 && !slices.ContainsFunc(p.CipherSuites, belowTLS13) {
		return fmt.Errorf("only TLS 1.3 %s, which Go does not configure, so connections below TLS 1.3 would have no cipher suite with a minimum of %s: add TLS 1.2 suites or set the minimum version to VersionTLS13",
			suites(CipherSuiteNames(p.CipherSuites)), VersionName(minVersion))
	}
	return nil
}

// AllowsECDSA reports whether a server whose certificate has an ECDSA key
// can serve TLS 1.2 with p: p requires TLS 1.3, leaves the suites to Go,
// or lists a TLS_ECDHE_ECDSA_ suite. A profile of RSA suites only is valid
// (OCM's examples list such profiles) but leaves such a server to TLS 1.3
// clients.
func (p Profile) AllowsECDSA() bool {
	if p.minVersion() >= tls.VersionTLS13 || len(p.CipherSuites) == 0 {
		return true
	}
	return slices.ContainsFunc(p.CipherSuites, func(id uint16) bool {
		return belowTLS13(id) && strings.Contains(tls.CipherSuiteName(id), "_ECDSA_")
	})
}

// String describes p for logs: its minimum version and its cipher suites.
func (p Profile) String() string {
	if len(p.CipherSuites) == 0 {
		return VersionName(p.minVersion()) + " with Go's default cipher suites"
	}
	return VersionName(p.minVersion()) + " with " + strings.Join(CipherSuiteNames(p.CipherSuites), ",")
}

// Equal reports whether p and o allow the same handshakes.
func (p Profile) Equal(o Profile) bool {
	return p.minVersion() == o.minVersion() && slices.Equal(p.CipherSuites, o.CipherSuites)
}

// Apply sets c's minimum version and cipher suites from p, for a server or
// a client: MinVersion always, CipherSuites to p's suites that TLS 1.2 or
// earlier can use, or nil (Go's defaults) when p lists none. A MaxVersion
// below p's minimum is raised to it, so that the configuration can still
// shake hands.
func (p Profile) Apply(c *tls.Config) {
	c.MinVersion = p.minVersion()
	if c.MaxVersion != 0 && c.MaxVersion < c.MinVersion {
		c.MaxVersion = c.MinVersion
	}
	c.CipherSuites = nil
	for _, id := range p.CipherSuites {
		if belowTLS13(id) {
			c.CipherSuites = append(c.CipherSuites, id)
		}
	}
}

// Option returns Apply as a TLS option, as controller-runtime's webhook and
// metrics servers take them (TLSOpts).
func (p Profile) Option() func(*tls.Config) {
	return p.Apply
}

func (p Profile) minVersion() uint16 {
	if p.MinVersion == 0 {
		return DefaultMinVersion
	}
	return p.MinVersion
}

// suiteByName returns the suite crypto/tls knows by name, secure or not.
func suiteByName(name string) *tls.CipherSuite {
	for _, s := range allSuites() {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func suiteByID(id uint16) *tls.CipherSuite {
	for _, s := range allSuites() {
		if s.ID == id {
			return s
		}
	}
	return nil
}

func allSuites() []*tls.CipherSuite {
	return append(tls.CipherSuites(), tls.InsecureCipherSuites()...)
}

// belowTLS13 reports whether a version before TLS 1.3 can use suite id.
func belowTLS13(id uint16) bool {
	s := suiteByID(id)
	return s != nil && slices.ContainsFunc(s.SupportedVersions, func(v uint16) bool { return v < tls.VersionTLS13 })
}

func secureSuiteNames() []string {
	var names []string
	for _, s := range tls.CipherSuites() {
		names = append(names, s.Name)
	}
	return names
}

// suites names cipher suites in an error: `cipher suite "A"` or
// `cipher suites "A", "B"`.
func suites(names []string) string {
	if len(names) == 1 {
		return "cipher suite " + quoteAll(names)
	}
	return "cipher suites " + quoteAll(names)
}

func quoteAll(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(quoted, ", ")
}
