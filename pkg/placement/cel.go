package placement

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/runtime"
	apitypes "k8s.io/apimachinery/pkg/types"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/celprogram"
)

// CELVariable is the name under which a CEL selector sees the ManagedCluster,
// as a JSON-like map (metadata, spec, status).
const CELVariable = "managedCluster"

// clusterCacheSize bounds the number of clusters kept converted for CEL.
const clusterCacheSize = 20000

// celCache compiles CEL selector expressions once and shares the programs,
// and keeps the clusters converted for CEL. It is safe for concurrent use.
type celCache struct {
	once     sync.Once
	env      *cel.Env
	envErr   error
	programs *celprogram.Cache
	mu       sync.RWMutex
	// clusters are the clusters converted for CEL, by name.
	clusters map[string]cachedCluster
}

// newCELEnv builds the environment of CEL selectors: the managedCluster
// variable, its scores("<AddOnPlacementScore name>") member function,
// parseJSON(string), and the cel-go string, list and set extensions.
func newCELEnv() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable(CELVariable, cel.MapType(cel.StringType, cel.DynType)),
		cel.Function("scores",
			cel.MemberOverload("managedcluster_scores_string",
				[]*cel.Type{cel.DynType, cel.StringType}, cel.ListType(cel.DynType),
				cel.BinaryBinding(clusterScores))),
		cel.Function("parseJSON",
			cel.Overload("parsejson_string", []*cel.Type{cel.StringType}, cel.DynType,
				cel.UnaryBinding(parseJSON))),
		ext.Strings(),
		ext.Lists(),
		ext.Sets(),
	)
}

// program returns the compiled program of expr, which must yield a bool,
// compiling it on first use.
func (c *celCache) program(expr string) (cel.Program, error) {
	c.once.Do(func() {
		c.env, c.envErr = newCELEnv()
		c.programs = celprogram.NewCache(celprogram.DefaultSize)
	})
	if c.envErr != nil {
		return nil, fmt.Errorf("building the CEL environment: %w", c.envErr)
	}
	prg, err := c.programs.Program(c.env, expr)
	if err != nil {
		return nil, err
	}
	if out := prg.OutputType; !out.IsExactType(cel.BoolType) && !out.IsExactType(cel.DynType) {
		return nil, fmt.Errorf("compilation failed: expression must return a bool, not %s", out)
	}
	return prg.Program, nil
}

// clusterValue is the managedCluster variable: the cluster as a JSON-like map
// that also carries the AddOnPlacementScores of the cluster's namespace, read
// by scores().
type clusterValue struct {
	traits.Mapper
	namespace string
	scores    map[scoreKey]*clusterv1alpha1.AddOnPlacementScore
}

// newClusterValue converts a cluster for CEL. scores are the run's
// AddOnPlacementScores by namespace and name.
func (c *celCache) newClusterValue(mc *clusterv1.ManagedCluster, scores map[scoreKey]*clusterv1alpha1.AddOnPlacementScore) (*clusterValue, error) {
	m, err := c.clusterMap(mc)
	if err != nil {
		return nil, err
	}
	return &clusterValue{Mapper: m, namespace: mc.Name, scores: scores}, nil
}

// cachedCluster is a cluster converted for CEL, valid for one resourceVersion.
type cachedCluster struct {
	uid             apitypes.UID
	resourceVersion string
	mapper          traits.Mapper
}

// clusterMap converts a cluster to a CEL map, reusing the conversion of the
// same resourceVersion: the conversion costs far more than evaluating most
// expressions. The maps are only read, so runs share them.
func (c *celCache) clusterMap(mc *clusterv1.ManagedCluster) (traits.Mapper, error) {
	cacheable := mc.ResourceVersion != ""
	if cacheable {
		c.mu.RLock()
		e, ok := c.clusters[mc.Name]
		c.mu.RUnlock()
		if ok && e.uid == mc.UID && e.resourceVersion == mc.ResourceVersion {
			return e.mapper, nil
		}
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(mc)
	if err != nil {
		return nil, fmt.Errorf("converting cluster %s for CEL: %w", mc.Name, err)
	}
	m := types.NewStringInterfaceMap(types.DefaultTypeAdapter, obj)
	if cacheable {
		c.mu.Lock()
		if c.clusters == nil || len(c.clusters) >= clusterCacheSize {
			c.clusters = map[string]cachedCluster{}
		}
		c.clusters[mc.Name] = cachedCluster{uid: mc.UID, resourceVersion: mc.ResourceVersion, mapper: m}
		c.mu.Unlock()
	}
	return m, nil
}

// clusterScores implements managedCluster.scores(name): the scores of the
// AddOnPlacementScore name in the cluster's namespace as a list of
// {name, value} maps. A missing AddOnPlacementScore is an evaluation error,
// so the expression does not select the cluster.
func clusterScores(recv, arg ref.Val) ref.Val {
	cv, ok := recv.(*clusterValue)
	if !ok {
		return types.NewErr("scores() must be called on %s", CELVariable)
	}
	name, ok := arg.Value().(string)
	if !ok {
		return types.NewErr("scores() takes the name of an AddOnPlacementScore")
	}
	score, ok := cv.scores[scoreKey{namespace: cv.namespace, name: name}]
	if !ok {
		return types.NewErr("AddOnPlacementScore %q not found", name)
	}
	items := make([]ref.Val, len(score.Status.Scores))
	for i, s := range score.Status.Scores {
		items[i] = types.NewStringInterfaceMap(types.DefaultTypeAdapter, map[string]any{
			"name":  s.Name,
			"value": int64(s.Value),
		})
	}
	return types.NewDynamicList(types.DefaultTypeAdapter, items)
}

// parseJSON implements parseJSON(string): the JSON document as a CEL value.
func parseJSON(arg ref.Val) ref.Val {
	s, ok := arg.Value().(string)
	if !ok {
		return types.NewErr("parseJSON() takes a string")
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return types.NewErr("parseJSON: %v", err)
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}

// evalCEL evaluates a compiled program for one cluster. It reports whether the
// expression returned true and, when it did not, why.
func evalCEL(prg cel.Program, cv *clusterValue) (bool, string) {
	out, _, err := prg.Eval(map[string]any{CELVariable: cv})
	if err != nil {
		return false, "failed: " + err.Error()
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Sprintf("returned %v, not a bool", out.Value())
	}
	if !b {
		return false, "evaluated to false"
	}
	return true, ""
}
