// Package addon benchmarks the add-on lifecycle on real local control planes
// from test/framework: the hub add-on manager of `ocm-controller hub` and the
// add-on side of `ocm-controller agent`, both built from this source tree and
// run by the component runner as their shipped ServiceAccounts, with the
// example add-on examples/addons/helloworld (a template add-on whose health
// is its Deployment's availability, read through status feedback).
//
// Two managed clusters are joined by real agents, which run the add-on's
// agent helloworld-addon; the others are simulated clusters whose
// lightweight agents register with the real protocol, renew their lease and
// acknowledge their ManifestWorks as a work agent would (benchkit.SimAgent).
// The benchmarks print figures and assert nothing about speed:
//
//   - BenchmarkAddonEnable: `kubectl ocm addon enable` of the example add-on
//     on every cluster → every ManagedClusterAddOn Available.
//   - BenchmarkAddonConfigRollout: a change of the add-on's default
//     AddOnDeploymentConfig → rolled out to every cluster (Progressing
//     Completed, lastAppliedConfig = desiredConfig).
//   - BenchmarkAddonRegistration: N copies of the example add-on enabled on
//     every cluster → each add-on × cluster through its hub registration
//     (registrations, CSR, approval, certificate or token infrastructure,
//     hub-kubeconfig Secret) to Available.
//
// Everything lives in _test.go files and runs only with -bench; the package is
// skipped under -short. test/bench/README.md shows how to run it.
package addon
