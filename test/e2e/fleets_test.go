package e2e

import "testing"

// The tests with fleets of their own run side by side once the tests that
// share one have ended, and start in the order they are declared here
// (parallel): longest first, as make test's last two runs measured them,
// so that the longest do not start last and hold the package, the longest
// of make test, after the others. TestStandbyHub
// comes first although others use more CPU: three of its minutes are the
// agent's hub connection timeout, idle, beside the next test. Each body is
// in the file of its subject.

func TestStandbyHub(t *testing.T) { testStandbyHub(t) }

func TestLargePayload(t *testing.T) { testLargePayload(t) }

func TestWorkFlowFaults(t *testing.T) { testWorkFlowFaults(t) }

func TestImportFromTheHub(t *testing.T) { testImportFromTheHub(t) }

func TestWorkloadFailover(t *testing.T) { testWorkloadFailover(t) }

func TestClusteradmQuickStart(t *testing.T) { testClusteradmQuickStart(t) }

func TestRestarts(t *testing.T) { testRestarts(t) }

func TestPrivateRegistryInstall(t *testing.T) { testPrivateRegistryInstall(t) }

func TestClientCertificateRotation(t *testing.T) { testClientCertificateRotation(t) }

func TestHubCARotation(t *testing.T) { testHubCARotation(t) }

func TestGitOps(t *testing.T) { testGitOps(t) }

func TestRegistrationOperatorGuide(t *testing.T) { testRegistrationOperatorGuide(t) }

func TestDeclarativeInstall(t *testing.T) { testDeclarativeInstall(t) }

func TestPreviousReleaseHub(t *testing.T) { testPreviousReleaseHub(t) }

func TestHostedMode(t *testing.T) { testHostedMode(t) }

func TestJoinThroughAProxy(t *testing.T) { testJoinThroughAProxy(t) }

func TestHubControllerKilledMidRollout(t *testing.T) { testHubControllerKilledMidRollout(t) }

func TestHubFailover(t *testing.T) { testHubFailover(t) }
