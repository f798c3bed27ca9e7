package config

import (
	"crypto/tls"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
)

// TLSConfigHashAnnotation is the pod-template annotation of a Deployment an
// operator passes a TLS profile to: a hash of the flags it passes
// (tlsprofile.Settings.Hash), so that a change of the profile rolls the
// Deployment out.
const TLSConfigHashAnnotation = "operator.open-cluster-management.io/tls-config-hash"

// ReasonInvalidTLSProfile is the reason of the Applied condition of a
// ClusterManager or Klusterlet whose TLS profile (its spec.tlsProfile, or
// ConfigMap ocm-tls-profile in the operator's namespace) is invalid.
const ReasonInvalidTLSProfile = tlsprofile.ReasonInvalid

// TLSValues are the TLS profile an operator passes to the component it
// renders: the component's --tls-min-version and --tls-cipher-suites, and
// the pod-template annotation TLSConfigHashAnnotation.
type TLSValues struct {
	// TLS is the effective profile (ResolveTLSProfile); the settings it
	// leaves unset render no flag.
	TLS tlsprofile.Settings
}

// TLSArgs are the component's TLS flags, none when TLS sets nothing.
func (v TLSValues) TLSArgs() []string { return v.TLS.Args() }

// TLSConfigHash is the value of TLSConfigHashAnnotation, empty (no
// annotation) when TLS sets nothing.
func (v TLSValues) TLSConfigHash() string {
	if len(v.TLS.Args()) == 0 {
		return ""
	}
	return v.TLS.Hash()
}

// TLSConfigHashAnnotation is the annotation's key, for the templates.
func (TLSValues) TLSConfigHashAnnotation() string { return TLSConfigHashAnnotation }

// ResolveTLSProfile returns the TLS profile an operator passes to the
// components of the object kind/name: per key, spec's field when set, else
// the key of cm (ConfigMap ocm-tls-profile in the operator's namespace; nil
// when there is none), else nothing, which leaves the component's default.
// A bad value, in either place, is a *FieldError with reason
// ReasonInvalidTLSProfile naming where it is and what is accepted.
func ResolveTLSProfile(kind, name string, spec *operatorv1.TLSProfile, cm *corev1.ConfigMap) (tlsprofile.Settings, error) {
	var fields tlsprofile.Settings
	if spec != nil {
		fields = tlsprofile.FromSpec(fmt.Sprintf("spec.tlsProfile of %s %s", kind, name), spec.MinTLSVersion, spec.CipherSuites)
	}
	s, _, err := tlsprofile.Resolve(cm, fields)
	if err != nil {
		return tlsprofile.Settings{}, &FieldError{Reason: ReasonInvalidTLSProfile, Message: fmt.Sprintf(
			"TLS profile: %v; fix it there (each field of spec.tlsProfile wins over the same key of ConfigMap %s)", err, tlsprofile.ConfigMapName)}
	}
	return s, nil
}

// TLSProfileFromFlags returns the spec.tlsProfile that `kubectl ocm hub
// init` and `kubectl ocm join` write for their --tls-min-version and
// --tls-cipher-suites, nil when both are empty. It refuses, naming the flag,
// what the operator would refuse and what the field cannot hold: a version
// other than VersionTLS12 or VersionTLS13 (TLSv1.2 and TLSv1.3 are written
// as those), an unknown or insecure cipher suite.
func TLSProfileFromFlags(minVersion string, cipherSuites []string) (*operatorv1.TLSProfile, error) {
	flags := tlsprofile.FromFlags(minVersion, cipherSuites)
	if !flags.MinVersion.IsSet() && !flags.CipherSuites.IsSet() {
		return nil, nil
	}
	// The field admits no minimum below TLS 1.2, so no insecure suite.
	for _, s := range tls.InsecureCipherSuites() {
		for _, name := range cipherSuites {
			if strings.TrimSpace(name) == s.Name {
				return nil, fmt.Errorf("--%s: insecure cipher suite %q refused: spec.tlsProfile admits no minimum below VersionTLS12; remove it, or set a legacy profile in ConfigMap %s instead",
					tlsprofile.CipherSuitesFlag, s.Name, tlsprofile.ConfigMapName)
			}
		}
	}
	p, err := flags.Profile()
	if err != nil {
		return nil, err
	}
	out := &operatorv1.TLSProfile{}
	if flags.MinVersion.IsSet() {
		if p.MinVersion < tls.VersionTLS12 {
			return nil, fmt.Errorf("--%s %s: spec.tlsProfile takes VersionTLS12 or VersionTLS13; a lower minimum can be set only in ConfigMap %s", tlsprofile.MinVersionFlag, minVersion, tlsprofile.ConfigMapName)
		}
		out.MinTLSVersion = tlsprofile.VersionName(p.MinVersion)
	}
	if flags.CipherSuites.IsSet() {
		for _, name := range tlsprofile.SplitCipherSuites(flags.CipherSuites.Value) {
			if name = strings.TrimSpace(name); name != "" {
				out.CipherSuites = append(out.CipherSuites, name)
			}
		}
	}
	return out, nil
}
