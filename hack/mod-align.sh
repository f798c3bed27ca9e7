#!/usr/bin/env bash
# mod-align.sh keeps the modules that build the sandbox's binaries on the
# dependency versions the product itself uses, so that a cold machine
# compiles each shared package once: kube-bins builds with the product's Go
# toolchain (hack/kube-bins.sh), and a package compiled with the same
# toolchain, flags and dependency versions is found in the Go build cache.
#
#   - test/kube (Kubernetes, etcd) and the product's module: every module
#     both use is raised to the newer of their two versions, so "make build"
#     after "make kube-bins" finds client-go, apimachinery, api and their
#     dependencies compiled (about 700 of its 1,000 packages);
#   - test/kube/netpol (kube-network-policies) follows test/kube's versions
#     (about 55 packages left to compile instead of about 600).
#
# Run it after changing any of these modules' versions; "go mod tidy"
# follows each edit. Modules whose newer release breaks a dependency stay
# where they are: KEEP lists them.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KUBE="$ROOT/test/kube"
NETPOL="$ROOT/test/kube/netpol"
export GOTOOLCHAIN=go$(sed -n 's/^go //p' "$ROOT/go.mod")
# containerd/nri (through kube-network-policies) needs this runtime-spec.
KEEP=" github.com/opencontainers/runtime-spec "

# mods DIR prints "module version" for DIR's build list, the version a
# replace directive names where there is one; replaced modules (Kubernetes'
# staging modules in test/kube) are marked with a trailing "=" and never edited.
mods() { (cd "$1" && go list -m -f '{{.Path}} {{with .Replace}}{{.Version}}={{else}}{{.Version}}{{end}}' all) | sort; }
# diffs A B prints "module versionA versionB" for the modules both use at
# different versions.
diffs() { join <(mods "$1") <(mods "$2") | awk '{ a = $2; b = $3; sub(/=$/, "", a); sub(/=$/, "", b) } a != b && a != "" && b != "" { print $1, $2, $3 }'; }
# edits MINE THEIRS turns diffs lines into go mod edit flags that require
# the version in field THEIRS, but for kept modules and for modules replaced
# in field MINE's module.
edits() {
	awk -v keep="$KEEP" -v mine="$1" -v theirs="$2" '
		index(keep, " " $1 " ") == 0 && $mine !~ /=$/ { v = $theirs; sub(/=$/, "", v); print "-require=" $1 "@" v }'
}
# follow A B requires, in A, B's version of every module they share.
follow() {
	local reqs
	mapfile -t reqs < <(diffs "$1" "$2" | edits 2 3)
	if ((${#reqs[@]} > 0)); then
		(cd "$1" && go mod edit "${reqs[@]}" && go mod tidy)
	fi
}
# newer A B raises, in A and in B, every module they share to the newer of
# their two versions, never lowering one (sort -V orders the versions; a
# pre-release of the same version would sort after its release, which no
# module here has).
newer() {
	local d mod va vb max a=() b=()
	d=$(diffs "$1" "$2")
	while read -r mod va vb; do
		[[ -n $mod ]] || continue
		[[ $KEEP != *" $mod "* ]] || continue
		max=$(printf '%s\n%s\n' "${va%=}" "${vb%=}" | sort -V | tail -1)
		if [[ $va != *= && ${va%=} != "$max" ]]; then a+=("-require=$mod@$max"); fi
		if [[ $vb != *= && ${vb%=} != "$max" ]]; then b+=("-require=$mod@$max"); fi
	done <<<"$d"
	((${#a[@]} == 0)) || (cd "$1" && go mod edit "${a[@]}" && go mod tidy)
	((${#b[@]} == 0)) || (cd "$2" && go mod edit "${b[@]}" && go mod tidy)
}
report() {
	local left
	left=$(diffs "$2" "$3")
	echo "mod-align: $1: $(grep -c . <<<"$left" || true) modules differ (kept, required newer by a dependency, or used by no package one side builds):"
	[[ -z $left ]] || echo "$left" | sed 's/^/  /'
}

# Twice: a raised module can raise others through its own requirements.
for _ in 1 2; do
	newer "$KUBE" "$ROOT"
done
follow "$NETPOL" "$KUBE"
report "test/kube and the product" "$KUBE" "$ROOT"
report "test/kube/netpol and test/kube" "$NETPOL" "$KUBE"
