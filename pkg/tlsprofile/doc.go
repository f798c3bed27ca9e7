// Package tlsprofile reads the TLS profile of an OCM component and applies
// it to its TLS configurations.
//
// A profile is a minimum TLS version and the cipher suites of TLS 1.0 to
// 1.2. It comes, as in OCM, from the ConfigMap ocm-tls-profile in the
// component's namespace (keys minTLSVersion and cipherSuites) and from the
// flags --tls-min-version and --tls-cipher-suites, which win over the
// ConfigMap key for key. Without either the profile is Go's defaults with a
// minimum of TLS 1.2.
//
// Versions are spelled VersionTLS10 to VersionTLS13 (also TLSv1.0 to
// TLSv1.3); cipher suites by their IANA names, as crypto/tls names them. Bad
// input is an error naming the key or flag, the value and what is accepted;
// unlike OCM, which drops an unknown cipher suite with a warning, nothing of
// a bad profile is used.
//
// Insecure cipher suites (crypto/tls.InsecureCipherSuites) are accepted only
// in a profile whose minimum version is below TLS 1.2: such a profile (for
// example OpenShift's Old profile, which lists 3DES) already admits legacy
// clients on purpose. With a minimum of TLS 1.2 or later an insecure suite
// is refused, so that a modern profile cannot weaken itself by accident.
//
// Cipher suites do not apply to TLS 1.3, whose suites Go does not let a
// program configure; TLS 1.3 names are accepted in the list and have no
// effect.
package tlsprofile
