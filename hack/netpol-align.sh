#!/usr/bin/env bash
# netpol-align.sh pins every module test/kube/netpol shares with test/kube
# to the version test/kube resolves, so that a cold "make kube-bins" finds
# most of kube-network-policies' packages already compiled by the Kubernetes
# build (about 55 packages left to compile instead of about 600). Run it
# after changing either module's versions; "go mod tidy" follows.
#
# Modules whose newer release breaks kube-network-policies' own
# dependencies stay where they are: KEEP lists them.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KUBE="$ROOT/test/kube"
NETPOL="$ROOT/test/kube/netpol"
export GOTOOLCHAIN=${GOTOOLCHAIN:-auto}
# containerd/nri (through kube-network-policies) needs this runtime-spec.
KEEP=" github.com/opencontainers/runtime-spec "

mods() { (cd "$1" && go list -m -f "{{.Path}} {{.Version}}" all) | sort; }
diffs() { join <(mods "$NETPOL") <(mods "$KUBE") | awk '$2 != $3 && $3 != ""'; }
mapfile -t reqs < <(diffs | awk -v keep="$KEEP" 'index(keep, " " $1 " ") == 0 { print "-require=" $1 "@" $3 }')
if ((${#reqs[@]} > 0)); then
	(cd "$NETPOL" && go mod edit "${reqs[@]}" && go mod tidy)
fi
# What still differs is required newer by kube-network-policies' own
# dependencies (go mod tidy raises it again), or is kept on purpose.
left=$(diffs)
echo "netpol-align: $(wc -l <<<"$left") modules differ from test/kube's (kept, or required newer by kube-network-policies):"
echo "$left" | sed 's/^/  /'
