package celprogram

import (
	"sync"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/stretchr/testify/require"
)

// newEnv returns an environment with the variable x of type t.
func newEnv(t *testing.T, typ *cel.Type) *cel.Env {
	t.Helper()
	env, err := cel.NewEnv(cel.Variable("x", typ))
	if err != nil {
		t.Fatal(err)
	}
	return env
}

func TestProgram(t *testing.T) {
	intEnv := newEnv(t, cel.IntType)
	tests := []struct {
		name    string
		expr    string
		input   any
		want    any
		wantOut *cel.Type
		wantErr string
	}{
		{name: "bool", expr: "x > 1", input: int64(2), want: true, wantOut: cel.BoolType},
		{name: "int", expr: "x + 1", input: int64(2), want: int64(3), wantOut: cel.IntType},
		{name: "syntax error", expr: "x >", wantErr: "compilation failed: ERROR: <input>:1:4: Syntax error"},
		{name: "type error", expr: `x + "a"`, wantErr: "compilation failed: ERROR: <input>:1:3: found no matching overload for '_+_'"},
		{name: "cost limit", expr: "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a + b + c + d + e + f + x > 0))))))",
			input: int64(1), wantOut: cel.BoolType, wantErr: "actual cost limit exceeded"},
	}
	c := NewCache(DefaultSize)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prg, err := c.Program(intEnv, tt.expr)
			if err == nil {
				if !prg.OutputType.IsExactType(tt.wantOut) {
					t.Errorf("output type %s, want %s", prg.OutputType, tt.wantOut)
				}
				var out interface{ Value() any }
				out, _, err = prg.Eval(map[string]any{"x": tt.input})
				if err == nil && out.Value() != tt.want {
					t.Errorf("= %v, want %v", out.Value(), tt.want)
				}
			}
			if tt.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

func TestProgramKeyedByEnvironmentAndExpression(t *testing.T) {
	intEnv, stringEnv := newEnv(t, cel.IntType), newEnv(t, cel.StringType)
	c := NewCache(DefaultSize)
	p1, _ := c.Program(intEnv, "x == x")
	p2, _ := c.Program(intEnv, "x == x")
	if p1.Program != p2.Program {
		t.Errorf("the same expression in the same environment was compiled twice")
	}
	p3, _ := c.Program(stringEnv, "x == x")
	if p3.Program == p1.Program {
		t.Errorf("the same expression in another environment shares a program")
	}
	_, err1 := c.Program(stringEnv, "x + 1")
	_, err2 := c.Program(stringEnv, "x + 1")
	if err1 == nil || err1 != err2 {
		t.Errorf("errors %v and %v: want the kept compile error", err1, err2)
	}
	if _, err := c.Program(intEnv, "x + 1"); err != nil {
		t.Errorf("x + 1 with an int x: %v", err)
	}
	if n := c.Len(); n != 4 {
		t.Errorf("%d expressions kept, want 4", n)
	}
}

func TestProgramBounded(t *testing.T) {
	env := newEnv(t, cel.IntType)
	c := NewCache(2)
	first, _ := c.Program(env, "x == 1")
	second, _ := c.Program(env, "x == 2")
	_, _ = c.Program(env, "x == 1") // now the most recently used
	_, _ = c.Program(env, "x == 3") // drops x == 2
	if c.Len() != 2 {
		t.Errorf("%d expressions kept, want 2", c.Len())
	}
	if p, _ := c.Program(env, "x == 1"); p.Program != first.Program {
		t.Errorf("the most recently used program was dropped instead of the least")
	}
	if p, _ := c.Program(env, "x == 2"); p.Program == second.Program {
		t.Errorf("the least recently used program was kept beyond the size")
	}
}

func TestProgramConcurrent(t *testing.T) {
	env := newEnv(t, cel.IntType)
	c := NewCache(8)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 32 {
				expr := []string{"x == 1", "x == 2", "x > 3", "x < 4"}[(i+j)%4]
				prg, err := c.Program(env, expr)
				if err != nil {
					t.Errorf("%s: %v", expr, err)
					return
				}
				if _, _, err := prg.Eval(map[string]any{"x": int64(j)}); err != nil {
					t.Errorf("%s: %v", expr, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if c.Len() != 4 {
		t.Errorf("%d expressions kept, want 4", c.Len())
	}
}
