#!/usr/bin/env bash
# verify-code-patterns.sh fails on code patterns the project has a rule
# against (docs/development.md, "One rule, one place"; STYLE.md, Tests),
# listing file:line of every hit with the rule and its fix.
#
#   hack/verify-code-patterns.sh [DIR]    check DIR (default: the repository)
#   hack/verify-code-patterns.sh --self-test
#                                         plant one violation of each ban in a
#                                         temporary tree and check that each
#                                         ban finds it
#
# make verify runs both. To add a ban, add a call to ban below; to give a
# literal a home, add a row to CONTRACT_LITERALS.
set -o errexit -o nounset -o pipefail

# CONTRACT_LITERALS: a string that names a contract is spelled once, in its
# home; everything else uses the home's constant. One row per literal:
#   'LITERAL|HOME_PATH [HOME_PATH...]|CONSTANT'
# HOME_PATHs are files or directories where the literal may appear (Go
# files only are checked).
CONTRACT_LITERALS=(
  # pkg/podsecurity's own test spells the key: pkg/apply imports
  # pkg/podsecurity, so the test cannot import pkg/apply. The example
  # add-ons stand for a user's own code, which labels its objects itself
  # (with a value of its own).
  '"app.kubernetes.io/part-of"|pkg/apply pkg/podsecurity/podsecurity_test.go examples|apply.PartOfLabelKey'
  # Tests may spell these two (*_test.go), as an oracle independent of the
  # code under test; so may the test framework, which builds clusters the
  # way kubeadm does.
  '"cluster-info"|pkg/clusterinfo *_test.go test/framework|clusterinfo.Name (its names come from k8s.io/cluster-bootstrap)'
  '"kube-public"|*_test.go test/framework|metav1.NamespacePublic (or certs.HubCABundleNamespace, clusterinfo.Namespace)'
)

# START_ALLOWED: the directories of test/integration that start a test
# environment by hand (framework.StartForTest, framework.Start,
# runner.StartForTest) rather than through the test kit's hubtest.Start,
# hubtest.StartWith, hubtest.StartRunner or agenttest.StartFleet
# (test/kit/hubtest, test/kit/agenttest). One row per directory:
#   'DIR|REASON'
START_ALLOWED=(
  'test/integration/conversion|installs the CRDs itself, with its own conversion webhook'
  'test/integration/crds|installs the CRDs itself, one version at a time'
  'test/integration/podcauses|runs hub init on clusters with nodes'
  'test/integration/work|installs the hub with hubtest.Install without the ClusterManager or the conversion webhook, which hubtest.Start does not take, and the agent objects on cluster1'
  'test/integration/addonexample|runs the example add-on agent binary, which hubtest.StartRunner does not build'
  'test/integration/addonframework|runs the example add-on agent binary, which hubtest.StartRunner does not build'
)

# found is set when any ban has a hit.
found=0

# ban NAME ERE MESSAGE -- PATHSPEC... reports every line of the Go files
# matched by the git pathspecs whose text matches the extended regular
# expression ERE.
ban() {
  local name=$1 re=$2 msg=$3
  shift 4
  local hits
  hits=$(git grep --no-index --exclude-standard -nE "$re" -- "$@" || true)
  if [[ -n $hits ]]; then
    found=1
    printf '%s: %s\n' "$name" "$msg"
    # shellcheck disable=SC2001
    sed 's/^/  /' <<<"$hits"
  fi
}

check() {
  ban want-error-text \
    'strings\.Contains\([[:alnum:]_.]*\.Error\(\)|(assert|require)\.Contains\(t, [[:alnum:]_.]*\.Error\(\)' \
    "a want-error check tests the message with require.ErrorContains or assert.ErrorContains (which also fail on a nil error); a check of an error's kind uses apierrors.IsX or errors.Is" \
    -- ':(glob)**/*_test.go'

  ban pointer-helper \
    'func [[:alnum:]_]*Ptr\(|func (ptr|ptrTo|toPtr|newBool|newString|newInt[0-9]*)[[(]' \
    'take a pointer to a value with ptr.To from k8s.io/utils/ptr, not a local helper' \
    -- ':(glob)**/*.go'

  ban cmp-or-helper \
    'func cmpOr[[(]' \
    'use cmp.Or from the standard library; for values cmp.Or cannot compare (slices), or a choice between two other values, write the if where it is used' \
    -- ':(glob)**/*.go'

  ban apply-helper \
    'func [mM]ustApply[[:alnum:]_]*\(' \
    'apply objects in a test with apply.Apply under kit.Must, or install a hub with hubtest.Install and its InstallOptions (test/kit/hubtest)' \
    -- ':(glob)test/**/*.go'

  ban e2e-parallel \
    '\.Parallel\(\)' \
    'an end-to-end test runs beside others through parallel(t) in test/e2e/shared_test.go, which admits them in order under -test.parallel; TestMain lifts the go command limit for the package, so a t.Parallel of its own would run unbounded' \
    -- ':(glob)test/e2e/**/*.go' ':(exclude)test/e2e/shared_test.go'

  local start_excludes=() row
  for row in "${START_ALLOWED[@]}"; do
    start_excludes+=(":(exclude,glob)${row%%|*}/**")
  done
  ban hand-started-environment \
    '(framework|runner)\.StartForTest|framework\.Start\(' \
    'start an integration test environment with the test kit (test/kit): hubtest.Start, hubtest.StartWith, hubtest.StartRunner or agenttest.StartFleet; a directory that must start one by hand is listed with its reason in START_ALLOWED (hack/verify-code-patterns.sh)' \
    -- ':(glob)test/integration/**/*.go' "${start_excludes[@]}"

  local literal homes constant home home_excludes
  for row in "${CONTRACT_LITERALS[@]}"; do
    IFS='|' read -r literal homes constant <<<"$row"
    home_excludes=()
    for home in $homes; do
      home_excludes+=(":(exclude)$home")
    done
    ban contract-literal \
      "$(sed 's/[][\.*^$+?(){}|]/\\&/g' <<<"$literal")" \
      "$literal is spelled once, in $homes: use $constant" \
      -- ':(glob)**/*.go' "${home_excludes[@]}"
  done
}

# self_test plants one violation of each ban, and one use of each helper the
# bans point to, in a temporary tree and checks that the script reports
# exactly the violations.
self_test() {
  local dir out want line
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' RETURN
  mkdir -p "$dir/pkg/x" "$dir/pkg/apply" "$dir/test/integration/foo" "$dir/test/integration/work" "$dir/test/e2e"
  cat >"$dir/test/e2e/x_test.go" <<'EOF'
package e2e
func TestX(t *testing.T) { t.Parallel() }
EOF
  cat >"$dir/test/e2e/shared_test.go" <<'EOF'
package e2e
func parallel(t *testing.T) { t.Parallel() }
EOF
  cat >"$dir/pkg/x/x_test.go" <<'EOF'
package x
func TestX(t *testing.T) {
	if err == nil || !strings.Contains(err.Error(), "boom") {
	}
	assert.Contains(t, err.Error(), "boom")
	require.ErrorContains(t, err, "boom")
}
EOF
  cat >"$dir/pkg/x/x.go" <<'EOF'
package x
func boolPtr(b bool) *bool { return &b }
func ptrTo[T any](v T) *T { return &v }
func cmpOr(a, b string) string { return a }
var label = "app.kubernetes.io/part-of"
var fine = ptr.To(true)
EOF
  cat >"$dir/pkg/apply/labels.go" <<'EOF'
package apply
const PartOfLabelKey = "app.kubernetes.io/part-of"
EOF
  cat >"$dir/test/integration/foo/foo_test.go" <<'EOF'
package foo
func mustApply(ctx context.Context, t *testing.T) {}
var env = framework.StartForTest(t, "hub")
var r = runner.StartForTest(t, nil)
EOF
  cat >"$dir/test/integration/work/helpers_test.go" <<'EOF'
package work
var env = framework.StartForTest(t, "hub")
EOF
  out=$("$0" "$dir" 2>&1) && {
    echo "self-test: the planted violations passed the check" >&2
    return 1
  }
  want=(
    'pkg/x/x_test.go:3:'
    'pkg/x/x_test.go:5:'
    'pkg/x/x.go:2:'
    'pkg/x/x.go:3:'
    'pkg/x/x.go:4:'
    'pkg/x/x.go:5:'
    'test/integration/foo/foo_test.go:2:'
    'test/integration/foo/foo_test.go:3:'
    'test/integration/foo/foo_test.go:4:'
    'test/e2e/x_test.go:2:'
  )
  for line in "${want[@]}"; do
    if ! grep -q "^  $line" <<<"$out"; then
      printf 'self-test: no hit at %s in:\n%s\n' "$line" "$out" >&2
      return 1
    fi
  done
  if [[ $(grep -c '^  ' <<<"$out") -ne ${#want[@]} ]]; then
    printf 'self-test: want %d hits, got:\n%s\n' "${#want[@]}" "$out" >&2
    return 1
  fi
  for line in want-error-text pointer-helper cmp-or-helper apply-helper e2e-parallel hand-started-environment contract-literal; do
    if ! grep -q "^$line: " <<<"$out"; then
      printf 'self-test: ban %s reported nothing in:\n%s\n' "$line" "$out" >&2
      return 1
    fi
  done
  echo "self-test: every ban found its planted violation"
}

if [[ ${1:-} == --self-test ]]; then
  self_test
  exit
fi

cd "${1:-$(dirname "$0")/..}"
check
if [[ $found -ne 0 ]]; then
  echo "code patterns: fix the lines above (hack/verify-code-patterns.sh)"
  exit 1
fi
