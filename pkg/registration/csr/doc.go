// Package csr is the approval policy for the client certificate requests of
// managed-cluster agents, in one place for both approvers: the hub
// controller, which approves renewals and first joins from auto-approved
// identities, and `kubectl ocm accept`, the administrator's approval of a
// first join.
//
// A request is approvable only when it is an agent certificate request for
// the cluster its open-cluster-management.io/cluster-name label names
// (Validate): signer kubernetes.io/kube-apiserver-client; usages client auth
// plus, optionally, digital signature and key encipherment; common name
// system:open-cluster-management:<cluster>:<agent-id>; organizations exactly
// system:open-cluster-management:<cluster>, optionally with
// system:open-cluster-management:managed-clusters; no subject alternative
// names; an ECDSA (P-256 or larger), RSA (2048 bits or more) or Ed25519 key
// and a valid self-signature. On top of that the requester must be one that
// may ask for that cluster (CheckRequester): a bootstrap identity, or a
// cluster-bound bootstrap identity or agent identity of that same cluster.
//
// Add-on agents' requests (labeled open-cluster-management.io/addon-name)
// follow their own rule (ValidateAddon, DecideAddon): the same signer,
// usages, key and signature rules, a subject within the identities of the
// labeled add-on on the labeled cluster that equals the subject of one of
// the registrations of its ManagedClusterAddOn, and the cluster's own agent
// identity as requester.
//
// A cluster's identity is its agent's key (agentkey.go): a request of an
// auto-approved bootstrap identity for a cluster accepted before is approved
// only with the key on record, or when it is the very request, by UID, that
// accepted the cluster (Decide).
//
// The functions here are pure: they look at a request and at facts the
// caller gathered, and say what to do and why.
package csr
