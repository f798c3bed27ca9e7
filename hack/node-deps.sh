#!/usr/bin/env bash
# Install what the local clusters' nodes need from Debian when it is missing:
# runc, the CNI plugins (containernetworking-plugins), iptables for
# kube-proxy, busybox-static, of which the sandbox's busybox image is
# made, and openssl, the TLS client the end-to-end tests check the hub's
# TLS profile with. containerd and the Kubernetes binaries are built from source by
# `make kube-bins`. Needs root on Debian; elsewhere it says what to install.
#
#   hack/node-deps.sh
set -euo pipefail

# package -> a file it installs.
declare -A FILES=(
	[runc]=/usr/sbin/runc
	[containernetworking-plugins]=/usr/lib/cni/bridge
	[iptables]=/usr/sbin/iptables
	[busybox-static]=/bin/busybox
	[openssl]=/usr/bin/openssl
)

missing=()
for pkg in "${!FILES[@]}"; do
	[[ -e ${FILES[$pkg]} ]] || missing+=("$pkg")
done
if [[ ${#missing[@]} -eq 0 ]]; then
	echo "node-deps: runc, CNI plugins, iptables, busybox-static and openssl are installed"
	exit 0
fi

if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
	echo "node-deps: the local clusters' nodes need the Debian packages: ${missing[*]}" >&2
	echo "node-deps: install them as root (apt-get install ${missing[*]}), or run the product on kind: see docs/install.md#on-kind-where-docker-is-available" >&2
	exit 1
fi

echo "node-deps: installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "node-deps: installed ${missing[*]}"
