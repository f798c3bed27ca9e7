// Package certs holds the client-certificate rules that the registration
// agent (and later the add-on registration agents) share: the certificate
// subject of an agent identity, whether a pending certificate request still
// fits the agent's key and identity, whether a certificate is still usable,
// and when it must be rotated.
//
// Key generation and parsing come from k8s.io/client-go/util/keyutil and
// certificate parsing from k8s.io/client-go/util/cert; callers make their
// certificate requests with cert.MakeCSR and parse certificate chains with
// cert.ParseCertsPEM.
package certs
