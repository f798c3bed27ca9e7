// Package certs holds the client-certificate rules that the registration
// agent and the add-on registration agent share: the certificate subject of
// an agent or add-on identity, the pending certificate request an agent
// files and waits for (kept with its key, so that a restarted agent reuses
// it), whether a certificate is still usable, and when it must be rotated;
// and the CA bundle the hub publishes in kube-public: its names, its reader
// (ReadHubCABundle) and how an agent follows it (UpdateTrust).
//
// Key generation and parsing come from k8s.io/client-go/util/keyutil and
// certificate parsing from k8s.io/client-go/util/cert; callers make their
// certificate requests with cert.MakeCSR and parse certificate chains with
// cert.ParseCertsPEM.
package certs
