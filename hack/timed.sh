#!/usr/bin/env bash
# Run a command and record how long it took, for make demo's summary table.
#
#   hack/timed.sh FILE WHAT COMMAND [ARG...]
#
# It prints "== WHAT" before the command and "== WHAT: done in Ns" after it,
# appends the line "WHAT<TAB>N" to FILE, and exits with the command's status.
set -uo pipefail

[[ $# -ge 3 ]] || {
	echo "usage: $0 FILE WHAT COMMAND [ARG...]" >&2
	exit 2
}
file=$1 what=$2
shift 2
echo "== $what"
start=$SECONDS
"$@"
rc=$?
secs=$((SECONDS - start))
if ((rc == 0)); then
	echo "== $what: done in ${secs}s"
else
	echo "== $what: failed after ${secs}s" >&2
fi
printf '%s\t%d\n' "$what" "$secs" >>"$file"
exit "$rc"
