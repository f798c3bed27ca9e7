#!/usr/bin/env bash
# The deploy targets of OCM's registration-operator, with kubectl-ocm: the same
# make targets and variables, so that its guide works as written.
#
#   hack/deploy.sh deploy|deploy-hub|deploy-spoke|clean-deploy|clean-hub|clean-spoke
#
#   deploy        the hub and a Klusterlet on the one cluster of KUBECONFIG,
#                 registering as MANAGED_CLUSTER (deploy-hub, then deploy-spoke)
#   deploy-hub    the ClusterManager operator and the hub, on the current
#                 context of KUBECONFIG (kubectl ocm hub init --wait)
#   deploy-spoke  the Klusterlet operator and the agent on the cluster of
#                 KLUSTERLET_KUBECONFIG_CONTEXT (default: the current context),
#                 registering as MANAGED_CLUSTER with a bootstrap token of the
#                 hub (kubectl ocm hub token, kubectl ocm join)
#   clean-deploy  clean-spoke, then clean-hub
#   clean-hub     the hub, with every cluster still registered (hub clean --force)
#   clean-spoke   the agent of MANAGED_CLUSTER (kubectl ocm unjoin)
#
# As in OCM's guide, deploy-spoke leaves the registration to the hub admin:
# the agent's certificate request waits to be approved (kubectl get csr;
# kubectl certificate approve NAME) and the cluster to be accepted
# (kubectl patch managedcluster NAME -p '{"spec":{"hubAcceptsClient":true}}'
# --type=merge), or both at once with kubectl ocm accept.
#
# Environment: KUBECONFIG (default ./.kubeconfig, as OCM's Makefile),
# MANAGED_CLUSTER (default cluster1), KLUSTERLET_KUBECONFIG_CONTEXT,
# OLM_NAMESPACE (the operators are installed without OLM: ignored, and said),
# KUBECTL_OCM (default bin/kubectl-ocm).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export KUBECONFIG=${KUBECONFIG:-./.kubeconfig}
MANAGED_CLUSTER=${MANAGED_CLUSTER:-cluster1}
KUBECTL_OCM=${KUBECTL_OCM:-$ROOT/bin/kubectl-ocm}

die() {
	echo "deploy: $*" >&2
	exit 1
}

usage() {
	echo "usage: $0 deploy|deploy-hub|deploy-spoke|clean-deploy|clean-hub|clean-spoke" >&2
	exit 2
}

[[ $# -eq 1 ]] || usage
[[ -x $KUBECTL_OCM ]] || die "$KUBECTL_OCM not found: run 'make build' first"
[[ -f $KUBECONFIG || $KUBECONFIG == *:* ]] || die "no kubeconfig at $KUBECONFIG: set KUBECONFIG, or write the cluster's kubeconfig there (kind get kubeconfig --name cluster1 > ./.kubeconfig)"
if [[ -n ${OLM_NAMESPACE:-} ]]; then
	echo "deploy: OLM_NAMESPACE=$OLM_NAMESPACE is ignored: kubectl-ocm installs the operators directly, without OLM"
fi

# spoke_context is the --context flag for the managed cluster, if any.
spoke_context=()
if [[ -n ${KLUSTERLET_KUBECONFIG_CONTEXT:-} ]]; then
	spoke_context=(--context "$KLUSTERLET_KUBECONFIG_CONTEXT")
fi

deploy_hub() {
	echo "+ kubectl ocm hub init --wait"
	"$KUBECTL_OCM" hub init --wait >/dev/null
	echo "deploy: the hub runs on the current context of $KUBECONFIG"
}

deploy_spoke() {
	local out token hub pin
	out=$("$KUBECTL_OCM" hub token) || die "kubectl ocm hub token failed on the current context of $KUBECONFIG: is the hub deployed (make deploy-hub)?"
	token=$(grep -o -- '--hub-token [^ ]*' <<<"$out" | head -1 | cut -d' ' -f2)
	hub=$(grep -o -- '--hub-apiserver [^ ]*' <<<"$out" | head -1 | cut -d' ' -f2)
	pin=$(grep -o -- '--ca-cert-hash sha256:[0-9a-fA-F]*' <<<"$out" | head -1 | cut -d' ' -f2)
	[[ -n $token && -n $hub && -n $pin ]] || die "kubectl ocm hub token printed no join command with the hub's CA pin:"$'\n'"$out"
	echo "+ kubectl ocm join --hub-token ... --hub-apiserver $hub --ca-cert-hash $pin --cluster-name $MANAGED_CLUSTER ${spoke_context[*]}"
	"$KUBECTL_OCM" join --hub-token "$token" --hub-apiserver "$hub" --ca-cert-hash "$pin" --cluster-name "$MANAGED_CLUSTER" "${spoke_context[@]}"
	cat <<-EOT
		deploy: the Klusterlet of $MANAGED_CLUSTER is deployed. On the hub, approve its
		certificate request and accept it:
		  kubectl get csr
		  kubectl certificate approve <csr name>
		  kubectl patch managedcluster $MANAGED_CLUSTER -p='{"spec":{"hubAcceptsClient":true}}' --type=merge
	EOT
}

clean_spoke() {
	echo "+ kubectl ocm unjoin --cluster-name $MANAGED_CLUSTER ${spoke_context[*]}"
	"$KUBECTL_OCM" unjoin --cluster-name "$MANAGED_CLUSTER" "${spoke_context[@]}"
}

clean_hub() {
	echo "+ kubectl ocm hub clean --force"
	"$KUBECTL_OCM" hub clean --force
}

case $1 in
deploy)
	spoke_context=()
	deploy_hub
	deploy_spoke
	;;
deploy-hub) deploy_hub ;;
deploy-spoke) deploy_spoke ;;
clean-deploy)
	spoke_context=()
	clean_spoke
	clean_hub
	;;
clean-hub) clean_hub ;;
clean-spoke) clean_spoke ;;
*) usage ;;
esac
