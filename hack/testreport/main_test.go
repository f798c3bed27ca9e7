package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// run feeds events to a report as go test -json would and returns what it
// printed.
func run(t *testing.T, events ...event) (*report, string) {
	t.Helper()
	var out bytes.Buffer
	r := newReport(&out)
	for _, e := range events {
		// Round-trip through JSON, as the events arrive.
		b, err := json.Marshal(e)
		require.NoError(t, err)
		var got event
		require.NoError(t, json.Unmarshal(b, &got))
		r.add(got)
	}
	r.finish(2)
	return r, out.String()
}

func TestReport(t *testing.T) {
	const ok, bad = "example.com/m/pkg/ok", "example.com/m/test/bad"
	r, out := run(t,
		event{Action: "start", Package: ok},
		event{Action: "run", Package: ok, Test: "TestA"},
		event{Action: "output", Package: ok, Test: "TestA", Output: "    a_test.go:9: a passing test's log\n"},
		event{Action: "pass", Package: ok, Test: "TestA", Elapsed: 1.5},
		event{Action: "output", Package: ok, Output: "PASS\n"},
		event{Action: "output", Package: ok, Output: "ok  \texample.com/m/pkg/ok\t1.6s\n"},
		event{Action: "pass", Package: ok, Elapsed: 1.6},
		event{Action: "start", Package: bad},
		event{Action: "run", Package: bad, Test: "TestB"},
		event{Action: "output", Package: bad, Test: "TestB", Output: "    b_test.go:3: what went wrong\n"},
		event{Action: "run", Package: bad, Test: "TestB/step"},
		event{Action: "fail", Package: bad, Test: "TestB/step", Elapsed: 9},
		event{Action: "fail", Package: bad, Test: "TestB", Elapsed: 9.5},
		event{Action: "pass", Package: bad, Test: "TestC", Elapsed: 0.1},
		event{Action: "output", Package: bad, Output: "FAIL\texample.com/m/test/bad\t10s\n"},
		event{Action: "fail", Package: bad, Elapsed: 10},
	)
	assert.True(t, r.failed)
	assert.Contains(t, out, "ok  \texample.com/m/pkg/ok\t1.6s\n")
	assert.NotContains(t, out, "a passing test's log", "a passing package prints its summary line only")
	assert.NotContains(t, out, "PASS\n")
	assert.Contains(t, out, "what went wrong", "a failed package prints its whole output")
	assert.Contains(t, out, "FAIL\texample.com/m/test/bad\t10s\n")
	assert.Contains(t, out, "     9.5s  fail  test/bad  TestB\n")
	assert.Contains(t, out, "     1.5s  pass  pkg/ok  TestA\n")
	assert.NotContains(t, out, "TestC", "only the slowest 2 top-level tests are listed")
	assert.NotContains(t, out, "TestB/step  ", "subtests are not listed")

	file := t.TempDir() + "/times.tsv"
	require.NoError(t, r.writeTimes(file))
}

func TestReportCountsFromTheTurn(t *testing.T) {
	const e2e = "example.com/m/test/e2e"
	r, out := run(t,
		event{Action: "start", Package: e2e},
		event{Action: "run", Package: e2e, Test: "TestFleet"},
		event{Action: "output", Package: e2e, Test: "TestFleet", Output: "    shared_test.go:131: waited for its turn: 100.0s\n"},
		event{Action: "pass", Package: e2e, Test: "TestFleet", Elapsed: 130},
		event{Action: "output", Package: e2e, Output: "ok  \texample.com/m/test/e2e\t131s\n"},
		event{Action: "pass", Package: e2e, Elapsed: 131},
	)
	assert.False(t, r.failed)
	assert.Contains(t, out, "    30.0s  pass  test/e2e  TestFleet\n", "the test's time less its wait for a turn")
}

func TestReportPassing(t *testing.T) {
	r, out := run(t,
		event{Action: "start", Package: "example.com/m/pkg/none"},
		event{Action: "output", Package: "example.com/m/pkg/none", Output: "?   \texample.com/m/pkg/none\t[no test files]\n"},
		event{Action: "skip", Package: "example.com/m/pkg/none"},
	)
	assert.False(t, r.failed)
	assert.Equal(t, "?   \texample.com/m/pkg/none\t[no test files]\n", out)
}

func TestReportBuildFailure(t *testing.T) {
	r, out := run(t,
		event{Action: "build-output", ImportPath: "example.com/m/pkg/x [example.com/m/pkg/x.test]", Output: "pkg/x/x.go:3:1: syntax error\n"},
		event{Action: "build-fail", ImportPath: "example.com/m/pkg/x [example.com/m/pkg/x.test]"},
	)
	assert.True(t, r.failed)
	assert.Contains(t, out, "syntax error")
}

func TestReportUnfinishedPackage(t *testing.T) {
	r, out := run(t,
		event{Action: "start", Package: "example.com/m/test/e2e"},
		event{Action: "output", Package: "example.com/m/test/e2e", Test: "TestSlow", Output: "    slow_test.go:5: still waiting\n"},
	)
	assert.True(t, r.failed, "a package that never ended fails the run")
	assert.Contains(t, out, "example.com/m/test/e2e did not end")
	assert.Contains(t, out, "still waiting")
}
