package e2e

import (
	"testing"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// TestSharedFleet runs the tests that share one fleet (sharedFleet), one
// after the other, in a lane of their own beside the tests with fleets of
// their own, and stops the fleet when the last has ended. Each leaves the
// fleet as it found it. Each body is in the file of its subject.
func TestSharedFleet(t *testing.T) {
	framework.SkipIfShort(t)
	t.Parallel()
	t.Cleanup(func() {
		if err := stopShared(); err != nil {
			t.Errorf("stop the shared fleet: %v", err)
		}
	})
	for _, tc := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"OCMShapedAddonRuns", testOCMShapedAddonRuns},
		{"Addon", testAddon},
		{"HubTunnel", testHubTunnel},
		{"MCPWithARealClient", testMCPWithARealClient},
		{"AgentNetworkPolicies", testAgentNetworkPolicies},
		{"Registration", testRegistration},
		{"PlacementRollout", testPlacementRollout},
		{"StagedRolloutDiffUndo", testStagedRolloutDiffUndo},
		{"TLSProfileOnNodes", testTLSProfileOnNodes},
		{"VersionMatrix", testVersionMatrix},
	} {
		t.Run(tc.name, tc.run)
	}
}

// The tests with fleets of their own take their turns (parallel) in the
// order they are declared here: longest first, as make test measured them,
// so that the longest do not start last and hold the package, the longest
// of make test, minutes after the others.

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
