package placement

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

func TestParseSelector(t *testing.T) {
	tests := []struct {
		name, in string
		claims   bool
		want     metav1.LabelSelector
		wantErr  string
	}{
		{"equality to matchLabels", "env=prod,tier==web", false, metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod", "tier": "web"}}, ""},
		{"set operators", "region in (us,eu),zone notin (a),canary,!legacy,x!=y", false, metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "canary", Operator: metav1.LabelSelectorOpExists, Values: []string{}},
			{Key: "legacy", Operator: metav1.LabelSelectorOpDoesNotExist, Values: []string{}},
			{Key: "region", Operator: metav1.LabelSelectorOpIn, Values: []string{"eu", "us"}},
			{Key: "x", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"y"}},
			{Key: "zone", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"a"}},
		}}, ""},
		{"claims have no matchLabels", "platform.open-cluster-management.io=AWS", true, metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "platform.open-cluster-management.io", Operator: metav1.LabelSelectorOpIn, Values: []string{"AWS"}},
		}}, ""},
		{"syntax error", "env in (a", false, metav1.LabelSelector{}, `--label-selectors "env in (a" is not a selector`},
		{"gt unsupported", "cpu>4", false, metav1.LabelSelector{}, "operator gt is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSelector("--label-selectors", tt.in, tt.claims)
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
			if tt.wantErr == "" && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseSelector(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParsePrioritizer(t *testing.T) {
	builtIn := func(name string, w int32) clusterv1beta1.PrioritizerConfig {
		return clusterv1beta1.PrioritizerConfig{Weight: w, ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{Type: "BuiltIn", BuiltIn: name}}
	}
	tests := []struct {
		in      string
		want    clusterv1beta1.PrioritizerConfig
		wantErr string
	}{
		{"BuiltIn:Balance:2", builtIn("Balance", 2), ""},
		{"builtin:resourceallocatablecpu", builtIn("ResourceAllocatableCPU", 1), ""},
		{"BuiltIn:Steady:-10", builtIn("Steady", -10), ""},
		{"AddOn:demo:cpuratio:3", clusterv1beta1.PrioritizerConfig{Weight: 3, ScoreCoordinate: &clusterv1beta1.ScoreCoordinate{
			Type: "AddOn", AddOn: &clusterv1beta1.AddOnScore{ResourceName: "demo", ScoreName: "cpuratio"}}}, ""},
		{"BuiltIn:Spread:1", clusterv1beta1.PrioritizerConfig{}, `unknown built-in prioritizer "Spread"`},
		{"BuiltIn:Balance:11", clusterv1beta1.PrioritizerConfig{}, "from -10 to 10"},
		{"AddOn:demo", clusterv1beta1.PrioritizerConfig{}, "AddOn:RESOURCE:SCORE[:WEIGHT]"},
		{"AddOn::score:1", clusterv1beta1.PrioritizerConfig{}, "needs the AddOnPlacementScore and the score name"},
		{"Balance", clusterv1beta1.PrioritizerConfig{}, "write BuiltIn:NAME[:WEIGHT]"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePrioritizer(tt.in)
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
			if tt.wantErr == "" && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParsePrioritizer(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseSpread(t *testing.T) {
	tests := []struct {
		in      string
		want    clusterv1beta1.SpreadConstraintsTerm
		wantErr string
	}{
		{"region:1", clusterv1beta1.SpreadConstraintsTerm{TopologyKey: "region", TopologyKeyType: "Label", MaxSkew: 1, WhenUnsatisfiable: "ScheduleAnyway"}, ""},
		{"example.com/zone:2:DoNotSchedule", clusterv1beta1.SpreadConstraintsTerm{TopologyKey: "example.com/zone", TopologyKeyType: "Label", MaxSkew: 2, WhenUnsatisfiable: "DoNotSchedule"}, ""},
		{"platform.open-cluster-management.io:1:claim:scheduleanyway", clusterv1beta1.SpreadConstraintsTerm{TopologyKey: "platform.open-cluster-management.io", TopologyKeyType: "Claim", MaxSkew: 1, WhenUnsatisfiable: "ScheduleAnyway"}, ""},
		{"region", clusterv1beta1.SpreadConstraintsTerm{}, "write KEY:MAXSKEW"},
		{"region:0", clusterv1beta1.SpreadConstraintsTerm{}, "maxSkew \"0\" must be a whole number of at least 1"},
		{"region:1:Sometimes", clusterv1beta1.SpreadConstraintsTerm{}, `"Sometimes" is neither DoNotSchedule`},
		{"region:1:claim:label", clusterv1beta1.SpreadConstraintsTerm{}, `"label" is neither`},
		{"bad key!:1", clusterv1beta1.SpreadConstraintsTerm{}, "is not a label key or claim name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSpread(tt.in)
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
			if tt.wantErr == "" && got != tt.want {
				t.Errorf("ParseSpread(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseToleration(t *testing.T) {
	const unreachable = "cluster.open-cluster-management.io/unreachable"
	tests := []struct {
		in      string
		want    clusterv1beta1.Toleration
		wantErr string
	}{
		{"gpu", clusterv1beta1.Toleration{Key: "gpu", Operator: "Exists"}, ""},
		{"gpu=true:NoSelect", clusterv1beta1.Toleration{Key: "gpu", Operator: "Equal", Value: "true", Effect: clusterv1.TaintEffectNoSelect}, ""},
		{unreachable + ":NoSelect:300", clusterv1beta1.Toleration{Key: unreachable, Operator: "Exists", Effect: clusterv1.TaintEffectNoSelect, TolerationSeconds: ptr.To[int64](300)}, ""},
		{"maint:60", clusterv1beta1.Toleration{Key: "maint", Operator: "Exists", TolerationSeconds: ptr.To[int64](60)}, ""},
		{"*", clusterv1beta1.Toleration{Operator: "Exists"}, ""},
		{"*=x", clusterv1beta1.Toleration{}, "takes no value"},
		{"", clusterv1beta1.Toleration{}, "write KEY[=VALUE][:EFFECT][:SECONDS]"},
		{"gpu:NoExecute", clusterv1beta1.Toleration{}, `"NoExecute" is neither an effect nor a number of seconds`},
		{"gpu:NoSelectIfNew:30", clusterv1beta1.Toleration{}, "seconds apply to NoSelect and PreferNoSelect taints only"},
		{"gpu:-1", clusterv1beta1.Toleration{}, "must not be negative"},
		{"a:b:c:d", clusterv1beta1.Toleration{}, "write KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseToleration(tt.in)
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
			if tt.wantErr == "" && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseToleration(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

// parseCreate parses args with `placement create` and runs Complete and
// Validate, returning the options and Validate's error.
func parseCreate(t *testing.T, args ...string) (*CreateOptions, error) {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.Namespace = ptr.To("apps")
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags.KubeConfig = &kubeconfig
	o := NewCreateOptions(flags, genericiooptions.NewTestIOStreamsDiscard())
	cmd := newCmdCreateWith(o, flags)
	if err := cmd.ParseFlags(args); err != nil {
		return nil, err
	}
	if err := o.Complete(cmd, cmd.Flags().Args()); err != nil {
		return nil, err
	}
	return o, o.Validate()
}

func TestCreateFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    func(p *clusterv1beta1.Placement) bool
		wantErr []string
	}{
		{"every flag", []string{"web", "--clustersets", "prod,dev", "--label-selectors", "env=prod,region in (eu,us)", "--label-selectors", "tier=web",
			"--claim-selectors", "platform.open-cluster-management.io in (AWS)", "--cel", `managedCluster.metadata.name != "x"`, "--count", "2",
			"--prioritizers", "BuiltIn:Balance:2,AddOn:demo:cpu:1", "--prioritizer-mode", "Exact", "--spread", "region:1:DoNotSchedule", "--tolerate", "gpu=true:NoSelect"},
			func(p *clusterv1beta1.Placement) bool {
				s := p.Spec
				sel := s.Predicates[0].RequiredClusterSelector
				return p.Namespace == "apps" && p.Name == "web" && reflect.DeepEqual(s.ClusterSets, []string{"prod", "dev"}) &&
					*s.NumberOfClusters == 2 && len(s.Predicates) == 1 &&
					reflect.DeepEqual(sel.LabelSelector.MatchLabels, map[string]string{"env": "prod", "tier": "web"}) &&
					len(sel.LabelSelector.MatchExpressions) == 1 && len(sel.ClaimSelector.MatchExpressions) == 1 &&
					len(sel.CelSelector.CelExpressions) == 1 && len(s.PrioritizerPolicy.Configurations) == 2 &&
					s.PrioritizerPolicy.Mode == "Exact" && s.SpreadPolicy.SpreadConstraints[0].WhenUnsatisfiable == "DoNotSchedule" &&
					s.Tolerations[0].Value == "true"
			}, nil},
		{"no flags selects every bound cluster", []string{"all"}, func(p *clusterv1beta1.Placement) bool {
			return p.Spec.NumberOfClusters == nil && len(p.Spec.Predicates) == 0 && len(p.Spec.Tolerations) == 0
		}, nil},
		{"count 0 is kept", []string{"none", "--count", "0"}, func(p *clusterv1beta1.Placement) bool { return *p.Spec.NumberOfClusters == 0 }, nil},
		{"negative count", []string{"web", "--count", "-1"}, nil, []string{"--count -1 must not be negative"}},
		{"several errors at once", []string{"web", "--prioritizers", "BuiltIn:Nope", "--tolerate", "gpu:Never", "--spread", "region"},
			nil, []string{"--prioritizers", "--tolerate", "--spread"}},
		{"prioritizer twice", []string{"web", "--prioritizers", "BuiltIn:Balance:1,BuiltIn:balance:2"}, nil, []string{"BuiltIn:Balance is given twice"}},
		{"conflicting labels", []string{"web", "--label-selectors", "env=a", "--label-selectors", "env=b"}, nil, []string{"label env must equal both a and b"}},
		{"bad mode", []string{"web", "--prioritizer-mode", "Sum"}, nil, []string{`--prioritizer-mode "Sum" is not supported`}},
		{"bad cluster set", []string{"web", "--clustersets", "Prod"}, nil, []string{`--clustersets: "Prod" is not a cluster set name`}},
		{"empty cel", []string{"web", "--cel", " "}, nil, []string{"--cel: an expression is empty"}},
		{"too many spreads", []string{"web", "--spread", "a:1,b:1,c:1,d:1,e:1,f:1,g:1,h:1,i:1"}, nil, []string{"at most 8 spread constraints"}},
		{"cel that does not compile", []string{"web", "--cel", "managedCluster.metadata.name ==== 1"}, nil, []string{"the hub would mark this placement misconfigured", "celSelector expression 0", "correct --cel"}},
		{"bad output", []string{"web", "-o", "wide"}, nil, []string{`--output "wide" is not supported`}},
		{"bad dry run", []string{"web", "--dry-run=yes"}, nil, []string{"--dry-run yes is not supported"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseCreate(t, tt.args...)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if !tt.want(o.Placement) {
					t.Errorf("placement spec not as expected: %+v", o.Placement.Spec)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; want one containing %q", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

func TestDeleteValidate(t *testing.T) {
	tests := []struct {
		name, dryRun, wantErr string
	}{
		{"no dry run", cli.DryRunNone, ""},
		{"client", cli.DryRunClient, ""},
		{"server", cli.DryRunServer, ""},
		{"unknown", "yes", "--dry-run yes is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &DeleteOptions{NamedOptions: NamedOptions{Name: "web"}, DryRun: tt.dryRun}
			err := o.Validate()
			if tt.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}
