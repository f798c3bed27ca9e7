// Package agent is the registration agent of a managed cluster: it joins the
// cluster to its hub and keeps it joined.
//
// The agent runs against its management cluster (its controller-runtime
// manager: the managed cluster itself, or in Hosted mode a hosting cluster
// that reaches the managed cluster through a kubeconfig Secret, see spoke.go)
// and talks to the hub with a client it rebuilds whenever its credential
// changes, without restarting:
//
//  1. Bootstrap. With the bootstrap kubeconfig from Secret
//     bootstrap-hub-kubeconfig it creates its ManagedCluster, generates a
//     private key (kept in a Secret, so that a restart reuses the key and the
//     pending request), creates a CertificateSigningRequest for its identity
//     and waits until a hub administrator accepts the cluster and the request
//     is issued. It then writes Secret hub-kubeconfig-secret.
//  2. Connected. With that certificate it renews the cluster's Lease on the
//     hub, reports the cluster's status (joined, available, version, capacity,
//     claims) and rotates the certificate before it expires, through a renewal
//     request the hub approves by itself.
//  3. When the hub credential becomes invalid (deleted, corrupted, expired or
//     rejected by the hub) it bootstraps again.
//
// The agent reports its own state as conditions of the Klusterlet on the
// management cluster, with messages that name the cause and the fix.
package agent
