#!/usr/bin/env bash
# Runs every fuzz target of test/fuzz/targets for FUZZTIME (default 1000000x,
# one million executions) and copies the inputs the fuzzer found interesting
# into the target's checked-in corpus, <package>/testdata/fuzz/<target>/,
# which go test replays. Usage: hack/fuzz.sh [target-name-filter]
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-1000000x}
cache=$(go env GOCACHE)/fuzz/$(go list -m)
grep -v '^#' test/fuzz/targets | while read -r pkg target; do
	[ -n "$pkg" ] || continue
	if [ -n "${1:-}" ] && [[ $target != *"$1"* ]]; then continue; fi
	echo "== $pkg $target ($FUZZTIME)"
	go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" 2>&1 | tail -n 3
	src=$cache/${pkg#./}/$target
	dst=$pkg/testdata/fuzz/$target
	if [ -d "$src" ]; then
		mkdir -p "$dst"
		cp -n "$src"/* "$dst"/ 2>/dev/null || true
		echo "corpus: $(ls "$dst" | wc -l) inputs in $dst"
	fi
done
