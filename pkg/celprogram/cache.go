// Package celprogram keeps compiled CEL programs: a bounded cache, keyed by
// environment and expression, shared by the placement scheduler's CEL
// selectors and the work agent's condition rules. Compiling an expression
// costs far more than evaluating it, and the same expressions come back on
// every reconcile.
package celprogram

import (
	"fmt"

	"github.com/google/cel-go/cel"
	"k8s.io/utils/lru"
)

// CostLimit bounds the cost of one evaluation of a program from a Cache, so
// that a runaway comprehension cannot stall a controller.
const CostLimit = 1_000_000

// DefaultSize is a size for NewCache that holds the expressions of
// thousands of placements or condition rules.
const DefaultSize = 4096

// Program is a compiled expression.
type Program struct {
	cel.Program
	// OutputType is the type the expression was checked to return.
	OutputType *cel.Type
}

// Cache compiles each expression once per environment and keeps the
// outcome, a Program or the compile error, for the size most recently used
// ones. It is safe for concurrent use.
type Cache struct {
	entries *lru.Cache
}

// key identifies a compiled expression: the same text means another
// program in another environment.
type key struct {
	env  *cel.Env
	expr string
}

// entry is the outcome of compiling one expression.
type entry struct {
	prg Program
	err error
}

// NewCache returns a Cache that holds at most size programs.
func NewCache(size int) *Cache {
	return &Cache{entries: lru.New(size)}
}

// Program returns the program of expr in env, compiling it on first use.
// The program's evaluations are bounded by CostLimit. An expression that
// does not compile returns the same error every time without being compiled
// again.
func (c *Cache) Program(env *cel.Env, expr string) (Program, error) {
	k := key{env: env, expr: expr}
	if v, ok := c.entries.Get(k); ok {
		e := v.(entry)
		return e.prg, e.err
	}
	// Two callers may compile the same expression at once; both get an
	// equivalent program and the last one is kept.
	e := compile(env, expr)
	c.entries.Add(k, e)
	return e.prg, e.err
}

// Len returns the number of expressions kept.
func (c *Cache) Len() int { return c.entries.Len() }

// compile parses, checks and plans expr in env.
func compile(env *cel.Env, expr string) entry {
	ast, issues := env.Compile(expr)
	if issues != nil && issues.Err() != nil {
		return entry{err: fmt.Errorf("compilation failed: %s", issues.String())}
	}
	prg, err := env.Program(ast, cel.CostLimit(CostLimit))
	if err != nil {
		return entry{err: fmt.Errorf("instantiation failed: %w", err)}
	}
	return entry{prg: Program{Program: prg, OutputType: ast.OutputType()}}
}
