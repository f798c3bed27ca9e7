// Package registration benchmarks cluster registration on real local control
// planes from test/framework: a hub and managed clusters, with the
// ocm-controller binary built from this source tree and run by the component
// runner as its shipped ServiceAccount, exactly as the end-to-end tests run it.
//
// The benchmarks print figures and assert nothing about speed:
//
//   - BenchmarkJoinToAvailable: seconds from the creation of the agent
//     Deployment (what `kubectl ocm join` installs last) to the ManagedCluster
//     being Available on the hub, with the hub admin's accept done as soon as
//     the agent's certificate signing request appears; several fresh joins,
//     reported as p50 and max with a per-stage breakdown.
//   - BenchmarkJoinToAvailableToken: the same with the token registration
//     driver (join --registration-auth token) on a hub whose controller
//     manager signs no client certificates.
//   - BenchmarkLeaseExpiry: seconds from stopping the agent to the hub marking
//     the cluster's availability Unknown, for a stated lease duration, and
//     seconds from restarting it to Available again.
//   - BenchmarkHubCARotation: a fleet follows a rotation of the hub's serving
//     CA, then of its client-signing CA: seconds for every agent to trust the
//     published new CA, to renew after the hub serves with it, to drop the
//     old one, and to hold a certificate of the new signer once announced;
//     the largest gap between two lease renewals and the clusters seen other
//     than Available meanwhile.
//   - BenchmarkHubFailover: a fleet joined with a standby hub loses its
//     primary hub's API server: seconds to every cluster Available on the
//     standby and to every work applied there, and the applied objects
//     deleted or recreated meanwhile.
//   - BenchmarkLeaderTakeover: two hub controllers with leader election on
//     one hub; the leader is killed: seconds from the kill to the standby's
//     acquisition of the Lease, the killed leader's last renewal to that
//     acquisition in lease durations, and seconds from the kill to the new
//     leader accepting a ManagedCluster created after it.
//   - BenchmarkHubMemory: resident memory of the ocm-controller hub process
//     with 2 registered clusters (real agents) and with 100 (the rest
//     lightweight simulated agents that speak the real protocol).
//
// Everything lives in _test.go files and runs only with -bench; the package is
// skipped under -short. test/bench/README.md shows how to run it.
package registration
