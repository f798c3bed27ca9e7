// Package certs holds the client-certificate logic that the registration agent
// (and later the add-on registration agents) share: private keys, certificate
// signing requests for an agent identity, and the checks that decide whether a
// certificate is still usable and when it must be rotated.
package certs
