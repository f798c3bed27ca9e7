package tlsprofile

import (
	"crypto/sha256"
	"encoding/hex"
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

// FromSpec returns the settings of a custom resource's TLS profile
// fields (the ClusterManager's or Klusterlet's spec.tlsProfile); path
// names the fields for errors, such as "spec.tlsProfile of Klusterlet
// klusterlet". An empty field sets nothing.
func FromSpec(path, minVersion string, cipherSuites []string) Settings {
	var s Settings
	if strings.TrimSpace(minVersion) != "" {
		s.MinVersion = Setting{Value: minVersion, Source: fieldSource(path, MinTLSVersionKey)}
	}
	if strings.TrimSpace(strings.Join(cipherSuites, "")) != "" {
		s.CipherSuites = Setting{Value: strings.Join(cipherSuites, ","), Source: fieldSource(path, CipherSuitesKey)}
	}
	return s
}

// fieldSource names field key of the fields at path: "spec.tlsProfile of
// Klusterlet k" and "minTLSVersion" give "spec.tlsProfile.minTLSVersion of
// Klusterlet k".
func fieldSource(path, key string) string {
	field, object, found := strings.Cut(path, " of ")
	if !found {
		return path + "." + key
	}
	return field + "." + key + " of " + object
}

// Resolve is the rule that merges the layers of a profile: the settings of
// the ConfigMap cm (nil: none), with each setting of overrides (the flags,
// or a custom resource's fields) in place of the ConfigMap's key. It
// returns the merged settings and their profile; a bad value in a setting
// that is used is an error naming its source, the value and what is
// accepted.
func Resolve(cm *corev1.ConfigMap, overrides Settings) (Settings, Profile, error) {
	var s Settings
	if cm != nil {
		var err error
		if s, err = FromConfigMap(cm); err != nil {
			return Settings{}, Profile{}, err
		}
	}
	s = s.Override(overrides)
	p, err := s.Profile()
	if err != nil {
		return Settings{}, Profile{}, err
	}
	return s, p, nil
}

// Args returns the flags that pass the settings that are set to a
// component: --tls-min-version=... and --tls-cipher-suites=..., in that
// order, the suites without blanks. Settings that are not set give no flag,
// so that the component's own defaults apply.
func (s Settings) Args() []string {
	var args []string
	if s.MinVersion.IsSet() {
		args = append(args, "--"+MinVersionFlag+"="+strings.TrimSpace(s.MinVersion.Value))
	}
	if s.CipherSuites.IsSet() {
		var names []string
		for _, n := range SplitCipherSuites(s.CipherSuites.Value) {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
		args = append(args, "--"+CipherSuitesFlag+"="+strings.Join(names, ","))
	}
	return args
}

// Hash returns a short hash of Args, which an operator puts in the pod
// template of the Deployments it passes them to, so that a change of the
// profile rolls them out and the profile in force can be compared at a
// glance.
func (s Settings) Hash() string {
	sum := sha256.Sum256([]byte(strings.Join(s.Args(), "\n")))
	return hex.EncodeToString(sum[:8])
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
