package tlsprofile

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Setting is one setting as text and where it came from, so that an error
// can name it.
type Setting struct {
	// Value is the text as given.
	Value string
	// Source names where Value came from, such as "--tls-min-version" or
	// "key minTLSVersion of ConfigMap ns/ocm-tls-profile"; empty when
	// nothing set it.
	Source string
}

// IsSet reports whether something set s.
func (s Setting) IsSet() bool { return s.Source != "" }

// Settings are a profile as text: from the ConfigMap, from the flags, or
// from both merged by Override.
type Settings struct {
	// MinVersion is the minimum TLS version.
	MinVersion Setting
	// CipherSuites are IANA cipher suite names separated by commas.
	CipherSuites Setting
}

// FromConfigMap returns the settings of the ConfigMap cm (ocm-tls-profile).
// Keys other than MinTLSVersionKey and CipherSuitesKey are left alone, as
// OCM leaves them, except one that differs from them only in case: that is
// a misspelling and an error, since it would silently leave the default in
// force.
func FromConfigMap(cm *corev1.ConfigMap) (Settings, error) {
	where := "ConfigMap " + cm.Namespace + "/" + cm.Name
	var s Settings
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := cm.Data[k]
		switch {
		case k == MinTLSVersionKey:
			s.MinVersion = Setting{Value: v, Source: "key " + k + " of " + where}
		case k == CipherSuitesKey:
			s.CipherSuites = Setting{Value: v, Source: "key " + k + " of " + where}
		case strings.EqualFold(k, MinTLSVersionKey):
			return Settings{}, fmt.Errorf("%s: key %q is not read: spell it %s", where, k, MinTLSVersionKey)
		case strings.EqualFold(k, CipherSuitesKey):
			return Settings{}, fmt.Errorf("%s: key %q is not read: spell it %s", where, k, CipherSuitesKey)
		}
	}
	return s, nil
}

// FromFlags returns the settings of --tls-min-version and
// --tls-cipher-suites; an empty flag sets nothing.
func FromFlags(minVersion string, cipherSuites []string) Settings {
	var s Settings
	if strings.TrimSpace(minVersion) != "" {
		s.MinVersion = Setting{Value: minVersion, Source: "--" + MinVersionFlag}
	}
	if strings.TrimSpace(strings.Join(cipherSuites, "")) != "" {
		s.CipherSuites = Setting{Value: strings.Join(cipherSuites, ","), Source: "--" + CipherSuitesFlag}
	}
	return s
}

// Override returns s with each setting that o sets replaced by o's: flags
// override the ConfigMap key by key.
func (s Settings) Override(o Settings) Settings {
	if o.MinVersion.IsSet() {
		s.MinVersion = o.MinVersion
	}
	if o.CipherSuites.IsSet() {
		s.CipherSuites = o.CipherSuites
	}
	return s
}

// Profile parses and validates s. The error names the setting at fault
// (its flag or ConfigMap key), its value and what is accepted.
func (s Settings) Profile() (Profile, error) {
	version, err := ParseVersion(s.MinVersion.Value)
	if err != nil {
		return Profile{}, fmt.Errorf("%s: %w", s.MinVersion.Source, err)
	}
	suites, err := ParseCipherSuites(SplitCipherSuites(s.CipherSuites.Value))
	if err != nil {
		return Profile{}, fmt.Errorf("%s: %w", s.CipherSuites.Source, err)
	}
	p := Profile{MinVersion: version, CipherSuites: suites}
	if err := p.Validate(); err != nil {
		return Profile{}, fmt.Errorf("%s: %w", s.sources(), err)
	}
	return p, nil
}

// sources names the settings that are set, for an error about both.
func (s Settings) sources() string {
	var set []string
	for _, v := range []Setting{s.MinVersion, s.CipherSuites} {
		if v.IsSet() {
			set = append(set, v.Source)
		}
	}
	return strings.Join(set, " with ")
}
