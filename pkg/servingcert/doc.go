// Package servingcert keeps a webhook's serving certificate and the private
// certificate authority that signs it, both held in one Secret:
//
//   - ca.crt: the CA bundle clients trust (the current signer first, then
//     earlier CAs that are still valid, so that a certificate they signed
//     keeps being trusted while it is served);
//   - ca.key: the private key of the current signer;
//   - tls.crt and tls.key: the serving certificate and its key.
//
// Plan computes what the Secret must hold at a given time: a new CA when
// there is none or when less than the rotation fraction of its lifetime
// remains, a new serving certificate when it is missing, is not signed by a
// CA of the bundle, does not name every host, or is due for rotation. A
// serving certificate never outlives its CA, and the previous CA stays in the
// bundle until it expires, so clients trust the served certificate
// throughout a rotation.
package servingcert
