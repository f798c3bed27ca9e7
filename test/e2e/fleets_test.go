package e2e

import "testing"

// The tests with fleets of their own run side by side once the tests that
// share one have ended (parallel), and go test starts them in the order it
// finds them: here, longest first (as make test measured them), so that the
// longest do not start last and hold the package, the longest of make test,
// minutes after the others. Each body is in the file of its subject.

func TestStandbyHub(t *testing.T) { testStandbyHub(t) }

func TestLargePayload(t *testing.T) { testLargePayload(t) }

func TestPrivateRegistryInstall(t *testing.T) { testPrivateRegistryInstall(t) }

func TestDeclarativeInstall(t *testing.T) { testDeclarativeInstall(t) }

func TestPreviousReleaseHub(t *testing.T) { testPreviousReleaseHub(t) }

func TestWorkloadFailover(t *testing.T) { testWorkloadFailover(t) }

func TestWorkFlowFaults(t *testing.T) { testWorkFlowFaults(t) }

func TestHubCARotation(t *testing.T) { testHubCARotation(t) }

func TestHostedMode(t *testing.T) { testHostedMode(t) }

func TestRestarts(t *testing.T) { testRestarts(t) }

func TestImportFromTheHub(t *testing.T) { testImportFromTheHub(t) }

func TestGitOps(t *testing.T) { testGitOps(t) }

func TestClusteradmQuickStart(t *testing.T) { testClusteradmQuickStart(t) }

func TestClientCertificateRotation(t *testing.T) { testClientCertificateRotation(t) }

func TestJoinThroughAProxy(t *testing.T) { testJoinThroughAProxy(t) }

func TestRegistrationOperatorGuide(t *testing.T) { testRegistrationOperatorGuide(t) }

func TestHubControllerKilledMidRollout(t *testing.T) { testHubControllerKilledMidRollout(t) }

func TestHubFailover(t *testing.T) { testHubFailover(t) }
