package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"

	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
)

func TestSteadyWeighted(t *testing.T) {
	builtIn := func(name string, weight int32) clusterv1beta1.PrioritizerConfig {
		return clusterv1beta1.PrioritizerConfig{Weight: weight,
			ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: clusterv1beta1.ScoreCoordinateTypeBuiltIn, BuiltIn: name}}
	}
	for _, tt := range []struct {
		name   string
		policy clusterv1beta1.PrioritizerPolicy
		want   bool
	}{
		{"additive default", clusterv1beta1.PrioritizerPolicy{}, true},
		{"additive, Steady off", clusterv1beta1.PrioritizerPolicy{Configurations: []clusterv1beta1.PrioritizerConfig{builtIn(clusterv1beta1.PrioritizerSteady, 0)}}, false},
		{"exact, Balance only", clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact,
			Configurations: []clusterv1beta1.PrioritizerConfig{builtIn(clusterv1beta1.PrioritizerBalance, 1)}}, false},
		{"exact, Steady", clusterv1beta1.PrioritizerPolicy{Mode: clusterv1beta1.PrioritizerPolicyModeExact,
			Configurations: []clusterv1beta1.PrioritizerConfig{builtIn(clusterv1beta1.PrioritizerSteady, 2)}}, true},
		{"misconfigured", clusterv1beta1.PrioritizerPolicy{Configurations: []clusterv1beta1.PrioritizerConfig{{Weight: 1}}}, false},
	} {
		assert.Equal(t, tt.want, SteadyWeighted(&tt.policy), tt.name)
	}
}
