#!/usr/bin/env bash
# Build the Kubernetes and container-runtime binaries the tests and dev-env
# use: kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
# kube-proxy, kubectl and etcd from the versions pinned in test/kube/go.mod,
# containerd with its runc shim from test/kube/containerd/go.mod and the
# nodes' NetworkPolicy enforcer kube-network-policies from test/kube/netpol
# (separate Go modules, see their doc.go). With --previous it builds instead
# the previous Kubernetes release's kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet and kube-proxy from test/kube/previous/go.mod into
# DIR/previous, for the tests' version matrix: the tests that run a cluster
# of the previous release build them when they start (test/framework
# EnsurePrevious), and nothing else needs them.
#
#   hack/kube-bins.sh [--previous] DIR
#
# The build is skipped when the target directory holds every binary and its
# .kube-bins.stamp matches a hash of the modules' go.mod and go.sum, this
# script and `go version`. A rebuild with a warm Go build cache only
# relinks. Each go build prints, every PROGRESS_EVERY seconds (default 15),
# how many packages it compiled of those it may have to and the time spent.
# Binaries are built in a scratch directory and moved into place when all
# are done, so the directory never holds a half-written binary. Concurrent
# runs for the same directory are serialised with a lock file.
#
# Environment: GO (default: go), SOURCE_DATE_EPOCH (fixes the stamped build date).

set -euo pipefail

usage() {
	echo "usage: $0 [--previous] DIR" >&2
	exit 2
}

PREVIOUS=false
if [[ ${1:-} == --previous ]]; then
	PREVIOUS=true
	shift
fi
[[ $# -eq 1 && -n $1 ]] || usage

GO=${GO:-go}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Every module builds with the product's Go toolchain (the main module's go
# line), whatever its own go line says: with the same toolchain, flags and
# dependency versions (hack/mod-align.sh), a package the product's build
# needs is compiled once, and "make build" after a cold kube-bins finds most
# of its packages in the build cache.
GOTOOLCHAIN=go$(sed -n 's/^go //p' "$ROOT/go.mod")
export GOTOOLCHAIN
MODDIR=$ROOT/test/kube
CTRDDIR=$ROOT/test/kube/containerd
NETPOLDIR=$ROOT/test/kube/netpol
PREVDIR=$ROOT/test/kube/previous
SCRIPT=$ROOT/hack/kube-bins.sh

mkdir -p "$1"
DIR=$(cd "$1" && pwd)
if [[ $PREVIOUS == true ]]; then
	mkdir -p "$DIR/previous"
	DIR=$DIR/previous
fi
STAMP=$DIR/.kube-bins.stamp
PROGRESS_EVERY=${PROGRESS_EVERY:-15}

# Binary name -> main package. Names and packages in the same order.
BINS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl etcd)
PKGS=(
	k8s.io/kubernetes/cmd/kube-apiserver
	k8s.io/kubernetes/cmd/kube-controller-manager
	k8s.io/kubernetes/cmd/kube-scheduler
	k8s.io/kubernetes/cmd/kubelet
	k8s.io/kubernetes/cmd/kube-proxy
	k8s.io/kubernetes/cmd/kubectl
	go.etcd.io/etcd/server/v3
)
# The nodes' container runtime, from its own module.
CTRD_BINS=(containerd containerd-shim-runc-v2)
CTRD_PKGS=(
	github.com/containerd/containerd/v2/cmd/containerd
	github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2
)
# The nodes' NetworkPolicy enforcer, from its own module (a main package
# around sigs.k8s.io/kube-network-policies, see its doc.go).
NETPOL_BIN=kube-network-policies
# The previous release's binaries of a cluster and its node, into previous/.
PREV_BINS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)
PREV_PKGS=("${PKGS[@]:0:5}")

die() {
	echo "kube-bins: $*" >&2
	exit 1
}

command -v "$GO" >/dev/null 2>&1 || die "'$GO' not found in PATH"
for d in "$MODDIR" "$CTRDDIR" "$NETPOLDIR" "$PREVDIR"; do
	[[ -f $d/go.mod && -f $d/go.sum ]] || die "$d/go.mod or go.sum missing"
done

# Versions come from the modules' go.mod, read by the go command itself.
mod_version() {
	(cd "$1" && "$GO" list -m -f '{{.Version}}' "$2")
}
KUBE_VERSION=$(mod_version "$MODDIR" k8s.io/kubernetes) || die "cannot read the k8s.io/kubernetes version from $MODDIR/go.mod"
ETCD_VERSION=$(mod_version "$MODDIR" go.etcd.io/etcd/server/v3) || die "cannot read the go.etcd.io/etcd/server/v3 version from $MODDIR/go.mod"
CTRD_VERSION=$(mod_version "$CTRDDIR" github.com/containerd/containerd/v2) || die "cannot read the containerd version from $CTRDDIR/go.mod"
PREV_VERSION=$(mod_version "$PREVDIR" k8s.io/kubernetes) || die "cannot read the k8s.io/kubernetes version from $PREVDIR/go.mod"
NETPOL_VERSION=$(mod_version "$NETPOLDIR" sigs.k8s.io/kube-network-policies) || die "cannot read the kube-network-policies version from $NETPOLDIR/go.mod"

wanted_stamp() {
	{
		if [[ $PREVIOUS == true ]]; then
			cat "$PREVDIR/go.mod" "$PREVDIR/go.sum"
		else
			cat "$MODDIR/go.mod" "$MODDIR/go.sum" "$CTRDDIR/go.mod" "$CTRDDIR/go.sum"
			cat "$NETPOLDIR/go.mod" "$NETPOLDIR/go.sum" "$NETPOLDIR"/*.go
		fi
		cat "$SCRIPT"
		(cd "$MODDIR" && "$GO" version)
	} | sha256sum | cut -d' ' -f1
}

all_present() {
	local b
	if [[ $PREVIOUS == true ]]; then
		for b in "${PREV_BINS[@]}"; do
			[[ -x $DIR/$b ]] || return 1
		done
		return 0
	fi
	for b in "${BINS[@]}" "${CTRD_BINS[@]}" "$NETPOL_BIN"; do
		[[ -x $DIR/$b ]] || return 1
	done
}

is_current() {
	all_present && [[ -f $STAMP && "$(cat "$STAMP")" == "$WANT" ]]
}

WANT=$(wanted_stamp)
WHAT=$KUBE_VERSION
[[ $PREVIOUS == true ]] && WHAT="$PREV_VERSION, the previous release"
if is_current; then
	echo "kube binaries in $DIR are current ($WHAT)"
	exit 0
fi

# Serialise concurrent runs for the same DIR; whoever waited re-checks the stamp.
exec 9>"$DIR/.kube-bins.lock"
if ! flock -n 9; then
	echo "kube-bins: another build into $DIR is running; waiting for it..."
	flock 9
	if is_current; then
		echo "kube binaries in $DIR are current ($WHAT)"
		exit 0
	fi
fi

if [[ -n ${SOURCE_DATE_EPOCH:-} ]]; then
	BUILD_DATE=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
else
	BUILD_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
fi

# kube_ldflags VERSION prints the linker flags that strip a Kubernetes binary
# and stamp VERSION into it.
kube_ldflags() {
	[[ $1 =~ ^v([0-9]+)\.([0-9]+)\.[0-9]+ ]] || die "unexpected k8s.io/kubernetes version '$1'"
	local flags="-s -w" pkg
	for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags+=" -X $pkg.gitVersion=$1"
		flags+=" -X $pkg.gitMajor=${BASH_REMATCH[1]}"
		flags+=" -X $pkg.gitMinor=${BASH_REMATCH[2]}"
		flags+=" -X $pkg.gitCommit="
		flags+=" -X $pkg.gitTreeState=clean"
		flags+=" -X $pkg.buildDate=$BUILD_DATE"
	done
	echo "$flags"
}
LDFLAGS=$(kube_ldflags "$KUBE_VERSION") || exit 1
PREV_LDFLAGS=$(kube_ldflags "$PREV_VERSION") || exit 1

WORK=$(mktemp -d "$DIR/.build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

CTRD_LDFLAGS="-s -w -X github.com/containerd/containerd/v2/version.Version=$CTRD_VERSION"
CTRD_LDFLAGS+=" -X github.com/containerd/containerd/v2/version.Package=github.com/containerd/containerd/v2"

fmt_secs() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# build LABEL MODULE_DIR OUT LDFLAGS PKG... runs one go build of PKGs in
# MODULE_DIR (the go command compiles the packages they share once and
# overlaps the links with compilation) and reports its progress: the number
# of packages compiled (go build -v names each) of those it may have to
# compile (their dependencies, fewer with a warm build cache), every
# PROGRESS_EVERY seconds. Lines that are not package names (errors) pass
# through.
build() {
	local label=$1 moddir=$2 out=$3 ldflags=$4
	shift 4
	local total start=$SECONDS
	total=$(cd "$moddir" && CGO_ENABLED=0 "$GO" list -deps "$@" 2>/dev/null | wc -l) || total=0
	echo "kube-bins: building $label ($total packages at most)"
	(
		cd "$moddir"
		CGO_ENABLED=0 "$GO" build -v -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out" "$@" 2>&1
	) | {
		local n=0 last=$SECONDS line
		while IFS= read -r line; do
			if [[ $line =~ ^[A-Za-z0-9._/~-]+$ ]]; then
				n=$((n + 1))
			else
				echo "$line"
			fi
			if ((SECONDS - last >= PROGRESS_EVERY)); then
				last=$SECONDS
				echo "kube-bins:   $label: $n of $total packages compiled, $(fmt_secs $((SECONDS - start))) elapsed"
			fi
		done
		echo "kube-bins:   $label: $n packages compiled, done in $(fmt_secs $((SECONDS - start)))"
	}
	return "${PIPESTATUS[0]}"
}

start=$SECONDS
build_ok=true
if [[ $PREVIOUS == true ]]; then
	echo "kube-bins: building Kubernetes $PREV_VERSION (${PREV_BINS[*]}) into $DIR: a cold build takes several minutes"
	build "Kubernetes $PREV_VERSION" "$PREVDIR" "$WORK/" "$PREV_LDFLAGS" "${PREV_PKGS[@]}" || build_ok=false
	ALL_BINS=("${PREV_BINS[@]}")
	ALL_PKGS=("${PREV_PKGS[@]}")
else
	echo "kube-bins: building Kubernetes $KUBE_VERSION, etcd $ETCD_VERSION, containerd $CTRD_VERSION and kube-network-policies $NETPOL_VERSION into $DIR: a cold build takes several minutes"
	# One go build per module, with three steps in all.
	build "1/3 Kubernetes $KUBE_VERSION and etcd $ETCD_VERSION" "$MODDIR" "$WORK/" "$LDFLAGS" "${PKGS[@]}" || build_ok=false
	build "2/3 containerd $CTRD_VERSION" "$CTRDDIR" "$WORK/" "$CTRD_LDFLAGS" "${CTRD_PKGS[@]}" || build_ok=false
	build "3/3 kube-network-policies $NETPOL_VERSION" "$NETPOLDIR" "$WORK/$NETPOL_BIN" "-s -w" . || build_ok=false
	ALL_BINS=("${BINS[@]}" "${CTRD_BINS[@]}")
	ALL_PKGS=("${PKGS[@]}" "${CTRD_PKGS[@]}")
fi

failed=()
if [[ $PREVIOUS != true ]]; then
	if [[ -f $WORK/$NETPOL_BIN ]]; then
		printf 'kube-bins:   built %-24s %4d MB  (%s %s)\n' "$NETPOL_BIN" "$(($(stat -c %s "$WORK/$NETPOL_BIN") / 1048576))" sigs.k8s.io/kube-network-policies "$NETPOL_VERSION"
	else
		failed+=("$NETPOL_BIN ($NETPOLDIR)")
	fi
fi
for i in "${!ALL_BINS[@]}"; do
	b=${ALL_BINS[$i]}
	pkg=${ALL_PKGS[$i]}
	out=$WORK/$(basename "$pkg")
	if [[ $pkg =~ /v[0-9]+$ ]]; then
		# go build names a /vN module root after the element before /vN.
		out=$WORK/$(basename "$(dirname "$pkg")")
	fi
	if [[ -f $out ]]; then
		[[ $out == "$WORK/$b" ]] || mv "$out" "$WORK/$b"
		printf 'kube-bins:   built %-24s %4d MB  (%s)\n' "$b" "$(($(stat -c %s "$WORK/$b") / 1048576))" "$pkg"
	else
		failed+=("$b ($pkg)")
	fi
done

if [[ $build_ok != true || ${#failed[@]} -gt 0 ]]; then
	if [[ ${#failed[@]} -gt 0 ]]; then
		die "build failed after $((SECONDS - start))s for: ${failed[*]} (see the go build errors above; nothing in $DIR was changed)"
	fi
	die "go build failed after $((SECONDS - start))s (see the errors above; nothing in $DIR was changed)"
fi

rm -f "$STAMP"
[[ $PREVIOUS == true ]] || ALL_BINS+=("$NETPOL_BIN")
for b in "${ALL_BINS[@]}"; do
	mv -f "$WORK/$b" "$DIR/$b"
done
echo "$WANT" >"$STAMP"

echo "kube-bins: done in $((SECONDS - start))s ($(fmt_secs $((SECONDS - start)))): $WHAT in $DIR"
