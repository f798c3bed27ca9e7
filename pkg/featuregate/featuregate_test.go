package featuregate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

func TestFromSpecAndFlagRoundTrip(t *testing.T) {
	reg := []operatorv1.FeatureGate{
		{Feature: ClusterProfile, Mode: operatorv1.FeatureGateModeTypeDisable},
		{Feature: "NoSuchFeature", Mode: operatorv1.FeatureGateModeTypeEnable},
	}
	work := []operatorv1.FeatureGate{
		{Feature: ManifestWorkReplicaSet, Mode: operatorv1.FeatureGateModeTypeDisable},
		{Feature: ManifestWorkReplicaSet, Mode: operatorv1.FeatureGateModeTypeEnable},
	}
	placement := []operatorv1.FeatureGate{
		{Feature: SIGPlacementDecision, Mode: operatorv1.FeatureGateModeTypeEnable},
	}
	s, unknown := FromSpec(Hub, reg, work, placement)
	assert.Equal(t, []string{"NoSuchFeature"}, unknown)
	assert.False(t, s.Enabled(ClusterProfile))
	assert.True(t, s.Enabled(ManifestWorkReplicaSet), "the last mention wins")
	assert.True(t, s.Enabled(AddonManagement), "unmentioned features keep their default")
	assert.True(t, s.Enabled(SIGPlacementDecision), "a feature off by default turns on")
	assert.False(t, Defaults(Hub).Enabled(SIGPlacementDecision), "SIGPlacementDecision is off by default")
	assert.Equal(t, "ClusterProfile=false,SIGPlacementDecision=true", s.Flag())

	parsed, err := Parse(Hub, s.Flag())
	require.NoError(t, err)
	assert.Equal(t, s.enabled, parsed.enabled)
}

func TestDefaultsRenderNoFlag(t *testing.T) {
	s, unknown := FromSpec(Agent, nil)
	assert.Empty(t, unknown)
	assert.Empty(t, s.Flag())
	assert.True(t, s.Enabled(ClusterClaim))
	assert.False(t, s.Enabled("NoSuchFeature"))
}

func TestParseRejects(t *testing.T) {
	for flag, want := range map[string]string{
		"ClusterClaim":                "is not Name=true|false",
		"ClusterClaim=maybe":          "must be true or false",
		"ManifestWorkReplicaSet=true": "unknown feature gate \"ManifestWorkReplicaSet\"; known: AddonManagement, ClusterClaim",
	} {
		_, err := Parse(Agent, flag)
		require.Error(t, err, flag)
		assert.ErrorContains(t, err, want, flag)
	}
	s, err := Parse(Agent, " ClusterClaim=false , AddonManagement=true,")
	require.NoError(t, err)
	assert.False(t, s.Enabled(ClusterClaim))
	assert.True(t, s.Enabled(AddonManagement))
}
