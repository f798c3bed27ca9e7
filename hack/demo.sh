#!/usr/bin/env bash
# The getting-started flow on the `make dev-env` clusters, each step shown as a
# user would type it: install the hub from a values file (TLS 1.3 only, and a
# TLS 1.2 handshake shown refused; NetworkPolicies; images from a registry that
# requires credentials), join cluster1, import cluster2 from the hub, accept them, list them, show what an
# agent's and a bootstrap token's credentials may not do, upgrade the hub and cluster1's agent, deliver a ManifestWork to
# cluster1 and read its Pod's log through the hub, deliver a payload of 3.7 MiB
# to cluster1 as ManifestChunks, roll a workload out to both clusters through a placement (and a
# second version, rolled back) and the large payload too, its chunks kept once
# on the hub, give
# every cluster of the default set a namespace, then
# install the example add-ons on both: one the hub deploys from an
# AddOnTemplate, one with a manager of its own; install a standby hub,
# hub2, and add it to cluster1; last, join the hub cluster as a hosted
# cluster whose agent runs on cluster1, and whose add-on the hub hosts on
# the cluster its agent reports.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEV_ENV_DIR=$(realpath -m "${DEV_ENV_DIR:-$ROOT/.dev-env}")
# The values files are named as in the docs, from the repository's root.
cd "$ROOT"
export KUBECONFIG=$DEV_ENV_DIR/kubeconfig
# kubectl finds the kubectl-ocm plugin on PATH; bin/kube has a kubectl of its own.
export PATH=$ROOT/bin:$ROOT/bin/kube:$PATH

if [[ ! -f $KUBECONFIG ]]; then
	echo "no development environment in $DEV_ENV_DIR: run 'make dev-env' first" >&2
	exit 1
fi

bold='' reset='' dim=''
if [[ -t 1 ]]; then
	bold=$(tput bold 2>/dev/null || true)
	reset=$(tput sgr0 2>/dev/null || true)
	dim=$(tput dim 2>/dev/null || true)
fi

# DEMO_TIMINGS, when set, is a file of "<what>\t<seconds>" lines that make
# demo wrote for the steps before this script (builds, the clusters' start);
# the summary at the end lists them before this script's phases.
DEMO_TIMINGS=${DEMO_TIMINGS:-}

# phase starts a phase of the demo, named for the summary table: each runs
# until the next one starts.
PHASES=() PHASE_STARTS=()
phase() {
	PHASES+=("$1")
	PHASE_STARTS+=("$EPOCHREALTIME")
	printf '\n%s== %s%s\n' "$bold" "$1" "$reset"
}

# elapsed prints the time since START (an $EPOCHREALTIME) as seconds with one
# decimal.
elapsed() {
	awk -v s="$1" -v e="$EPOCHREALTIME" 'BEGIN { printf "%.1fs", e - s }'
}

# step prints a command as typed (with the token shortened), runs it and
# prints how long it took.
step() {
	local shown=$*
	local token start rc=0
	for token in ${TOKEN:-} ${BOUND_TOKEN:-} ${STANDBY_TOKEN:-}; do
		shown=${shown//$token/${token:0:12}...}
	done
	printf '\n%s$ %s%s\n' "$bold" "$shown" "$reset"
	start=$EPOCHREALTIME
	"$@" || rc=$?
	printf '%s[%s]%s\n' "$dim" "$(elapsed "$start")" "$reset"
	return "$rc"
}

# summary prints the table of make demo's steps and this script's phases
# with their times.
summary() {
	local end=$EPOCHREALTIME i total=0
	printf '\n%-58s %10s\n' "step" "time"
	if [[ -n $DEMO_TIMINGS && -s $DEMO_TIMINGS ]]; then
		while IFS=$'\t' read -r what secs; do
			printf '%-58s %9ss\n' "$what" "$secs"
			total=$((total + secs))
		done <"$DEMO_TIMINGS"
	fi
	for i in "${!PHASES[@]}"; do
		local next=${PHASE_STARTS[$((i + 1))]:-$end}
		printf '%-58s %9ss\n' "demo: ${PHASES[$i]}" "$(awk -v s="${PHASE_STARTS[$i]}" -v e="$next" 'BEGIN { printf "%.0f", e - s }')"
	done
	# The wall-clock time since make demo began (steps side by side count
	# once), else the sum.
	if [[ -n $DEMO_TIMINGS && -s $DEMO_TIMINGS.start ]]; then
		total=$(($(date +%s) - $(cat "$DEMO_TIMINGS.start")))
	elif ((${#PHASES[@]} > 0)); then
		total=$(awk -v t="$total" -v s="${PHASE_STARTS[0]}" -v e="$end" 'BEGIN { printf "%.0f", t + e - s }')
	fi
	printf '%-58s %9ss (%dm%02ds)\n' "total" "$total" $((total / 60)) $((total % 60))
}

# refused is step for a command that must fail: it shows the error, and the
# demo stops if the command succeeds.
refused() {
	if step "$@"; then
		echo "the command above should have been refused" >&2
		exit 1
	fi
}

phase "the fleet"
# The fleet: each cluster a real control plane with a node of its own.
for c in hub cluster1 cluster2 hub2; do
	step kubectl get nodes --context "$c"
done
phase "install the hub"
# The hub from a values file, one for the CLI, Helm and GitOps
# (examples/values/sandbox-hub.yaml): TLS 1.3 only (the ClusterManager's
# tlsProfile, which the operator passes to the hub controller), the hub
# controller behind NetworkPolicies, and the images from the sandbox's
# registry that requires credentials, which hub init hands to the nodes.
step cat examples/values/sandbox-hub.yaml
step kubectl ocm hub init --context hub --wait --values-file examples/values/sandbox-hub.yaml --image-pull-credentials "$DEV_ENV_DIR/private-registry.json" | tee "$DEV_ENV_DIR/hub-init.out"
step kubectl get deployments --all-namespaces --selector app.kubernetes.io/part-of=kubectl-ocm --context hub -o custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,IMAGE:.spec.template.spec.containers[0].image,PULL-SECRETS:.spec.template.spec.imagePullSecrets[*].name
TOKEN=$(grep -o -- '--hub-token [^ ]*' "$DEV_ENV_DIR/hub-init.out" | head -1 | cut -d' ' -f2)
HUB=$(grep -o -- '--hub-apiserver [^ ]*' "$DEV_ENV_DIR/hub-init.out" | head -1 | cut -d' ' -f2)
# The pin of the hub's CA: join checks the hub against it before it sends the token.
HUB_PIN=$(grep -o -- '--ca-cert-hash sha256:[0-9a-fA-F]*' "$DEV_ENV_DIR/hub-init.out" | head -1 | cut -d' ' -f2)
if [[ -z $TOKEN || -z $HUB || -z $HUB_PIN ]]; then
	echo "hub init printed no join command" >&2
	exit 1
fi

phase "join cluster1, import cluster2, accept both"
# cluster1 joins with the shared token hub init printed. cluster2 is imported
# from the hub instead: no command runs against it, the hub's importer
# installs its agent with a credential of cluster2 (ocm-importer, the
# ClusterImporter gate). Its values give it a token the hub lets register
# cluster2 only, and the environment's HTTP proxy to the hub, by a hub name
# that only the proxy resolves: its agent reaches the hub that way or not at
# all. cluster2 registers with the token driver: its hub credential is a
# ServiceAccount token, as on a hub that signs no client certificates
# (Amazon EKS), where cluster1's way would not work.
# A pin that is not the hub's CA's (a hub impersonated on the way, say):
# join stops before it sends the token, and installs nothing.
refused kubectl ocm join --hub-token "$TOKEN" --hub-apiserver "$HUB" --ca-cert-hash "sha256:$(printf '0%.0s' $(seq 64))" --cluster-name cluster1 --context cluster1
# cluster1 joins from a values file too (examples/values/sandbox-klusterlet.yaml):
# its agent runs behind default-deny NetworkPolicies that let it reach only
# its hub, its cluster's API server and DNS (the nodes enforce them), with
# TLS 1.3 only, from the registry that requires credentials.
step kubectl ocm join --hub-token "$TOKEN" --hub-apiserver "$HUB" --ca-cert-hash "$HUB_PIN" --cluster-name cluster1 --context cluster1 --values-file examples/values/sandbox-klusterlet.yaml --image-pull-credentials "$DEV_ENV_DIR/private-registry.json"
step kubectl ocm hub token --cluster-name cluster2 --context hub | tee "$DEV_ENV_DIR/hub-token.out"
BOUND_TOKEN=$(grep -o -- '--hub-token [^ ]*' "$DEV_ENV_DIR/hub-token.out" | head -1 | cut -d' ' -f2)
if [[ -z $BOUND_TOKEN ]]; then
	echo "hub token --cluster-name cluster2 printed no join command" >&2
	exit 1
fi
PROXY_URL=$(cat "$DEV_ENV_DIR/proxy-url")
HUB_VIA_PROXY=$(cat "$DEV_ENV_DIR/hub-url-via-proxy")
# The importer on, rendering each cluster's Klusterlet from the hub's settings
# and then from the cluster's own values (OCM's renderers).
step kubectl patch clustermanager cluster-manager --context hub --type=merge -p '{"spec":{"registrationConfiguration":{"featureGates":[{"feature":"ClusterImporter","mode":"Enable"}],"importerConfiguration":{"renderers":["render-auto","render-from-config-secret"]}}}}'
step kubectl wait --for=create deployment/ocm-importer -n open-cluster-management-hub --context hub --timeout=1m
step kubectl rollout status deployment/ocm-importer -n open-cluster-management-hub --context hub --timeout=3m
# cluster2's values, the klusterlet chart's: the bootstrap kubeconfig with
# the proxy and the bound token, and the token driver.
HUB_CA=$(kubectl get configmap kube-root-ca.crt -n kube-public --context hub -o jsonpath='{.data.ca\.crt}' | base64 -w0)
CLUSTER2_VALUES=$DEV_ENV_DIR/cluster2-values.yaml
cat >"$CLUSTER2_VALUES" <<EOF
bootstrapHubKubeConfig: |
  apiVersion: v1
  kind: Config
  clusters:
  - name: hub
    cluster:
      server: $HUB_VIA_PROXY
      proxy-url: $PROXY_URL
      certificate-authority-data: $HUB_CA
  users:
  - name: bootstrap
    user:
      token: $BOUND_TOKEN
  contexts:
  - name: bootstrap
    context: {cluster: hub, user: bootstrap}
  current-context: bootstrap
klusterlet:
  registrationConfiguration:
    registrationDriver:
      authType: token
EOF
# Shown as cat shows it, with the token and the CA shortened.
printf '\n%s$ cat %s%s\n' "$bold" "$CLUSTER2_VALUES" "$reset"
VALUES_SHOWN=$(<"$CLUSTER2_VALUES")
VALUES_SHOWN=${VALUES_SHOWN//$BOUND_TOKEN/${BOUND_TOKEN:0:12}...}
printf '%s\n' "${VALUES_SHOWN//$HUB_CA/${HUB_CA:0:12}...}"
# import takes a kubeconfig of cluster2 (here the context cluster2 of the
# environment's), writes it with the values on the hub, and waits for the
# importer.
step kubectl ocm import cluster2 --context hub --managed-cluster-kubeconfig "$KUBECONFIG" --managed-cluster-context cluster2 --values-file "$CLUSTER2_VALUES" --wait
step kubectl get managedcluster cluster2 --context hub -o jsonpath='{.status.conditions[?(@.type=="ManagedClusterImportSucceeded")].reason}{"\n"}'

step kubectl ocm accept --clusters cluster1,cluster2 --context hub --wait
step kubectl wait --for=condition=ManagedClusterConditionAvailable managedcluster/cluster1 managedcluster/cluster2 --context hub --timeout=2m
step kubectl ocm get clusters --context hub -o wide
step kubectl get networkpolicy -n open-cluster-management-hub --context hub
step kubectl get networkpolicy -n open-cluster-management-agent --context cluster1
phase "credentials, CA bundle, TLS profile"
# cluster1's request got a certificate; cluster2's a sealed token.
step kubectl get csr -l open-cluster-management.io/cluster-name --context hub -o custom-columns=NAME:.metadata.name,CLUSTER:.metadata.labels.open-cluster-management\\.io/cluster-name,SIGNER:.spec.signerName
step sh -c "kubectl ocm get klusterlet --context cluster2 | grep -E 'Cluster|Registration'"
# Every agent follows the CA bundle the hub publishes and reports the CAs it
# trusts: the check a hub CA rotation waits on before the hub switches CA.
step kubectl ocm hub rotate-ca --check --wait --timeout 2m --context hub
# clusteradm's spellings run the native verbs: get hub-info is hub status.
step kubectl ocm get hub-info --context hub
# cluster2's agent keeps the proxy in the hub kubeconfig it wrote.
step sh -c "kubectl get secret hub-kubeconfig-secret -n open-cluster-management-agent --context cluster2 -o jsonpath='{.data.kubeconfig}' | base64 -d | grep -E 'server|proxy-url'"
step kubectl ocm version --context hub
# The hub controller's TLS server (conversion webhook, hub tunnel) refuses a
# TLS 1.2 handshake and completes a TLS 1.3 one, through a port-forward.
kubectl port-forward deployment/ocm-hub-controller :9443 --namespace open-cluster-management-hub --context hub >"$DEV_ENV_DIR/tls-port-forward.out" 2>&1 &
FORWARD_PID=$!
TLS_PORT=
for _ in $(seq 1 60); do
	TLS_PORT=$(grep -o 'Forwarding from 127.0.0.1:[0-9]*' "$DEV_ENV_DIR/tls-port-forward.out" | head -1 | cut -d: -f2 || true)
	[[ -n $TLS_PORT ]] && break
	sleep 1
done
if [[ -z $TLS_PORT ]]; then
	echo "kubectl port-forward to the hub controller printed no port:" >&2
	cat "$DEV_ENV_DIR/tls-port-forward.out" >&2
	kill "$FORWARD_PID" 2>/dev/null || true
	exit 1
fi
# openssl checks the server's certificate against the CA of the webhook's
# Secret, for the name the hub's API server dials.
kubectl get secret ocm-hub-controller-webhook-serving-cert -n open-cluster-management-hub --context hub \
	-o jsonpath='{.data.ca\.crt}' | base64 -d >"$DEV_ENV_DIR/hub-webhook-ca.crt"
WEBHOOK_NAME=ocm-hub-controller-webhook.open-cluster-management-hub.svc
refused openssl s_client -connect "127.0.0.1:$TLS_PORT" -tls1_2 -brief -CAfile "$DEV_ENV_DIR/hub-webhook-ca.crt" -verify_hostname "$WEBHOOK_NAME" -servername "$WEBHOOK_NAME" </dev/null
step openssl s_client -connect "127.0.0.1:$TLS_PORT" -tls1_3 -brief -CAfile "$DEV_ENV_DIR/hub-webhook-ca.crt" -verify_hostname "$WEBHOOK_NAME" -servername "$WEBHOOK_NAME" -verify_return_error </dev/null
kill "$FORWARD_PID" 2>/dev/null || true
wait "$FORWARD_PID" 2>/dev/null || true

phase "what each credential may not do"
# The hub keys every rule on what only it hands out. cluster1's agent
# (impersonated here, with its certificate's user and groups) reads its
# ManagedCluster and writes only its status: relabeling itself for a
# Placement is refused, and so is the same certificate without the
# managed-clusters group.
AGENT1=(--as system:open-cluster-management:cluster1:agent1 --as-group system:open-cluster-management:cluster1)
refused kubectl label managedcluster cluster1 env=prod --context hub "${AGENT1[@]}" --as-group system:open-cluster-management:managed-clusters
refused kubectl label managedcluster cluster1 env=prod --context hub "${AGENT1[@]}"
# A bootstrap-token holder registers a cluster named after a hub namespace
# that holds someone's data. Accepting it stops with NamespaceInUse and
# writes nothing there; deleting the rogue cluster leaves the namespace and
# its data.
step kubectl create namespace payments --context hub
step kubectl create configmap ledger -n payments --from-literal=balance=42 --context hub
printf 'apiVersion: cluster.open-cluster-management.io/v1\nkind: ManagedCluster\nmetadata:\n  name: payments\n' >"$DEV_ENV_DIR/payments.yaml"
step kubectl create -f "$DEV_ENV_DIR/payments.yaml" --context hub --as system:serviceaccount:open-cluster-management:agent-registration-bootstrap --as-group system:serviceaccounts
step kubectl patch managedcluster payments --type=merge -p '{"spec":{"hubAcceptsClient":true}}' --context hub
step kubectl wait --for=jsonpath='{.status.conditions[?(@.type=="HubAcceptedManagedCluster")].reason}'=NamespaceInUse managedcluster/payments --context hub --timeout=1m
step kubectl delete managedcluster payments --context hub --wait --timeout=1m
step kubectl get configmap ledger -n payments --context hub
step kubectl delete namespace payments --context hub --wait=false

phase "upgrade the hub and cluster1's agent"
# Upgrade the hub, then cluster1's agent, to the second controller image make
# node-images built (stamped with another version, in dist/upgrade), and show
# that version running.
UPGRADE_TAG=$(grep -o '"org.opencontainers.image.ref.name": *"[^"]*"' "$ROOT/dist/upgrade/layout/index.json" | head -1 | sed 's/.*: *"\(.*\)"/\1/')
if [[ -z $UPGRADE_TAG ]]; then
	echo "no second controller image in $ROOT/dist/upgrade: run 'make node-images' first" >&2
	exit 1
fi
UPGRADE_IMAGE=quay.io/kubectl-ocm/ocm-controller:$UPGRADE_TAG
step kubectl ocm upgrade hub --image "$UPGRADE_IMAGE" --context hub
step kubectl ocm upgrade klusterlet --image "$UPGRADE_IMAGE" --context cluster1 --hub-context hub
# The new agent reports its version in a cluster claim once it runs.
step kubectl wait --for=jsonpath='{.status.clusterClaims[?(@.name=="agentversion.kubectl-ocm.io")].value}'="$UPGRADE_TAG" managedcluster/cluster1 --context hub --timeout=2m
step kubectl ocm version --context hub
step kubectl get pods -A --context hub

phase "a ManifestWork, and its Pod's log through the hub"
# Deliver a workload to cluster1 through the hub.
step kubectl apply -f "$ROOT/examples/manifestwork-hello.yaml" --context hub
step kubectl wait --for=condition=Applied manifestwork/mw-01 -n cluster1 --context hub --timeout=1m
step kubectl ocm work status mw-01 --clusters cluster1 --context hub
step kubectl wait --for=condition=Ready pod/hello -n default --context cluster1 --timeout=2m
step kubectl logs hello -n default --context cluster1

# The same logs through the hub, with the hub credential alone: cluster1's
# agent keeps a tunnel attached to the hub (a hub behind which cluster1 sat
# behind NAT could not dial it), the hub's API server lets the admin proxy to
# every cluster (managedclusters/proxy), and cluster1's own RBAC decides what
# the admin may do there as ocm:hub:<admin>: read Pods and logs in default.
HUB_USER=$(kubectl auth whoami --context hub -o jsonpath='{.status.userInfo.username}')
VIA_HUB=$DEV_ENV_DIR/cluster1-via-hub.kubeconfig
step kubectl create rolebinding hub-admin-view -n default --clusterrole=view --user="ocm:hub:$HUB_USER" --context cluster1
for _ in $(seq 60); do
	kubectl get --raw /apis/proxy.kubectl-ocm.io/v1alpha1/managedclusters/cluster1/proxy/version --context hub >/dev/null 2>&1 && break
	sleep 1
done
step kubectl ocm proxy kubeconfig cluster1 --namespace default --context hub --output-file "$VIA_HUB"
step kubectl --kubeconfig "$VIA_HUB" get pods
step kubectl --kubeconfig "$VIA_HUB" logs hello

phase "a large payload"
# A release over a ManifestWork's 500 KiB: 24 ConfigMaps of about 155 KiB,
# 3.7 MiB in all, generated here in the environment's directory. work create
# cuts it into content-addressed ManifestChunks in cluster1's namespace and
# writes a work whose one manifest lists them; cluster1's agent applies it
# only once every chunk is there and verified (PayloadStaged), all or nothing.
PAYLOAD=$DEV_ENV_DIR/large-payload.yaml
for i in $(seq -w 1 24); do
	echo ---
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: large-payload-%s\n  namespace: default\n  labels:\n    demo: large-payload\ndata:\n  settings.txt: |\n' "$i"
	seq -f "    setting %g of ConfigMap $i: generated, as rendered configuration often is" 1 2000
done >"$PAYLOAD"
step ls -lh "$PAYLOAD"
step kubectl ocm work create large-payload -f "$PAYLOAD" --clusters cluster1 --context hub
step kubectl get manifestchunks -n cluster1 --context hub
step kubectl wait --for=condition=Applied manifestwork/large-payload -n cluster1 --context hub --timeout=2m
step kubectl get manifestwork large-payload -n cluster1 --context hub -o jsonpath='{range .status.conditions[?(@.type=="PayloadStaged")]}{.type}={.status} {.reason}: {.message}{"\n"}{end}{range .status.conditions[?(@.type=="Applied")]}{.type}={.status} {.reason}{"\n"}{end}'
step kubectl get configmaps -n default -l demo=large-payload --context cluster1

phase "a placement rollout: stages, diff, undo"
# Roll a workload out to every cluster of the default set through a placement,
# one cluster at a time.
step kubectl create namespace demo --context hub
step kubectl ocm clusterset bind default --namespace demo --context hub
step kubectl ocm placement create all-clusters -n demo --context hub
step kubectl wait --for=condition=PlacementSatisfied placement/all-clusters -n demo --context hub --timeout=1m
step kubectl ocm placement decisions all-clusters -n demo --context hub
step kubectl wait --for=create clusterprofile/cluster1 clusterprofile/cluster2 -n demo --context hub --timeout=1m
step kubectl get clusterprofiles -n demo --context hub -L multicluster.x-k8s.io/clusterset
step kubectl ocm work create hello-fleet -f "$ROOT/examples/rollout/configmap.yaml" --placement demo/all-clusters --rollout Progressive --max-concurrency 1 --context hub
step kubectl wait --for=condition=PlacementRolledOut manifestworkreplicaset/hello-fleet -n demo --context hub --timeout=2m
step kubectl ocm work get --replicaset hello-fleet -n demo --context hub
step kubectl get configmap hello-fleet -n default --context cluster2
# A second version: first what it would change on each cluster, computed by
# each cluster's agent as a dry run (exit status 1: something would change);
# then rolled out in stages of one cluster, each held until it is approved:
# cluster1 first, then cluster2.
sed 's/hello from the hub/hello again/' "$ROOT/examples/rollout/configmap.yaml" > "$DEV_ENV_DIR/hello-fleet-v2.yaml"
step sh -c "kubectl ocm work diff hello-fleet --replicaset -n demo -f '$DEV_ENV_DIR/hello-fleet-v2.yaml' --context hub; test \$? -eq 1"
step kubectl get configmap hello-fleet -n default --context cluster1 -o jsonpath='{.data.greeting}{"\n"}'
step kubectl ocm work create hello-fleet -f "$DEV_ENV_DIR/hello-fleet-v2.yaml" --placement demo/all-clusters --rollout Progressive --max-concurrency 1 --gates Before --stage-size 1 --overwrite --context hub
step kubectl wait --for=jsonpath='{.status.conditions[?(@.type=="PlacementRolledOut")].reason}'=AwaitingApproval manifestworkreplicaset/hello-fleet -n demo --context hub --timeout=1m
step kubectl ocm work rollout status hello-fleet -n demo --context hub
step kubectl ocm work rollout approve hello-fleet -n demo --context hub
step kubectl wait --for=jsonpath='{.data.greeting}'='hello again' configmap/hello-fleet -n default --context cluster1 --timeout=2m
step kubectl get configmap hello-fleet -n default --context cluster2 -o jsonpath='{.data.greeting}{"\n"}'
step kubectl ocm work rollout approve hello-fleet -n demo --stage batch-2 --message "cluster1 looks fine" --context hub
step kubectl wait --for=jsonpath='{.data.greeting}'='hello again' configmap/hello-fleet -n default --context cluster2 --timeout=2m
step kubectl ocm work rollout status hello-fleet -n demo --context hub
step kubectl get rolloutapprovals -n demo --context hub
# Rolled back: the hub keeps every template as a revision; undo rolls the
# previous one out again through the same gates, approved here ahead.
step kubectl ocm work rollout history hello-fleet -n demo --context hub
step kubectl ocm work rollout undo hello-fleet -n demo --context hub
step kubectl ocm work rollout approve hello-fleet -n demo --stage batch-1 --context hub
step kubectl ocm work rollout approve hello-fleet -n demo --stage batch-2 --context hub
step kubectl wait --for=jsonpath='{.data.greeting}'='hello from the hub' configmap/hello-fleet -n default --context cluster2 --timeout=2m
step kubectl ocm work get hello-fleet --replicaset -n demo --context hub
# The large payload again, renamed, through the placement: the set's chunks
# are kept once, in its namespace demo, and no cluster namespace holds a
# copy. Each placed cluster's agent reads them through the hub tunnel, which
# serves a chunk only to the agent of a cluster the set places now, and only
# a chunk the set's payload lists.
sed 's/large-payload/large-fleet/' "$PAYLOAD" >"$DEV_ENV_DIR/large-fleet.yaml"
step kubectl ocm work create large-fleet -f "$DEV_ENV_DIR/large-fleet.yaml" --placement demo/all-clusters --context hub
step kubectl wait --for=condition=PlacementRolledOut manifestworkreplicaset/large-fleet -n demo --context hub --timeout=3m
step sh -c "kubectl get manifestchunks -n demo --context hub --no-headers | wc -l"
step kubectl get manifestchunks -n cluster2 --context hub
step kubectl get configmaps -n default -l demo=large-fleet --context cluster2

phase "fleet namespaces"
# Fleet namespaces: every cluster of the default set gets namespace team-a,
# created by its agent and reported on its ManagedCluster.
step kubectl ocm clusterset set default --namespaces team-a --context hub
step kubectl wait --for=jsonpath='{.status.managedNamespaces[?(@.name=="team-a")].conditions[?(@.type=="NamespaceAvailable")].status}'=True managedcluster/cluster1 managedcluster/cluster2 --context hub --timeout=1m
step kubectl get namespace team-a --context cluster2 --show-labels

phase "add-ons"
# Register the example add-on (an AddOnTemplate: no controller of its own) and
# enable it on both clusters: the hub's add-on manager deploys its agent, which
# gets a hub credential of its own and copies its cluster's ConfigMaps.
ADDON_NS=open-cluster-management-agent-addon
step kubectl apply -f "$ROOT/examples/addons/helloworld/" --context hub
step kubectl ocm addon enable --names helloworld --clusters cluster1,cluster2 --context hub --wait
step kubectl ocm addon get helloworld --context hub
step kubectl create configmap greeting -n cluster1 --from-literal=value=hello-from-the-hub --context hub
step kubectl wait --for=create configmap/greeting -n "$ADDON_NS" --context cluster1 --timeout=1m
step kubectl get configmap greeting -n "$ADDON_NS" --context cluster1 -o jsonpath='{.data.value}{"\n"}'

# Register an add-on with a manager of its own on the hub, written the way
# OCM's addon-framework writes one: the hub installs it and rolls its
# configuration out, its manager registers and deploys its agent (the same
# agent, in namespace hellomanager) and reports it Available.
step kubectl apply -f "$ROOT/examples/addons/hellomanager/manager.yaml" --context hub
step kubectl rollout status deployment/hellomanager -n open-cluster-management-hellomanager --context hub --timeout=1m
step kubectl apply -f "$ROOT/examples/addons/hellomanager/clustermanagementaddon.yaml" --context hub
step kubectl ocm addon enable --names hellomanager --clusters cluster1,cluster2 --context hub --wait
step kubectl ocm addon get hellomanager --context hub
step kubectl wait --for=create configmap/greeting -n hellomanager --context cluster1 --timeout=1m
step kubectl get configmap greeting -n hellomanager --context cluster1 -o jsonpath='{.data.value}{"\n"}'

# OCM's own add-ons run unchanged: an add-on shaped as addon-framework's
# examples install one, its manager in namespace open-cluster-management and
# its agent in open-cluster-management-agent-addon, neither Pod meeting
# restricted Pod Security. Those two namespaces, shared with OCM's add-ons,
# warn (the API server's warnings below) and audit at restricted without
# enforcing it, as on OCM's hub; the product's own namespaces enforce it.
# podSecurity.enforceSharedNamespaces in the values turns enforcement on.
step kubectl get namespaces open-cluster-management open-cluster-management-hub --context hub -L pod-security.kubernetes.io/enforce,pod-security.kubernetes.io/warn
step kubectl apply -f "$ROOT/examples/addons/hellomanager/ocm-shaped.yaml" --context hub
step kubectl rollout status deployment/ocm-shaped-manager -n open-cluster-management --context hub --timeout=2m
step kubectl ocm addon enable --names ocm-shaped --clusters cluster1 --context hub --wait
step kubectl rollout status deployment/ocm-shaped-agent -n open-cluster-management-agent-addon --context cluster1 --timeout=2m
# Each agent reports the level its add-on namespace enforces, which the hub
# checks template add-ons against.
step kubectl get managedclusters --context hub -o custom-columns='NAME:.metadata.name,ADDON-NAMESPACE-ENFORCES:.status.clusterClaims[?(@.name=="addonpodsecurity.kubectl-ocm.io")].value'

phase "a standby hub"
# A standby hub: hub2 is installed as the hub was and approves by itself the
# first join of cluster1 alone: its token is bound to cluster1 (--cluster-name)
# and only that identity is auto-approved, so a leaked token can register no
# other cluster, and no auto-approval ever re-registers an accepted one. cluster1 lists it with join --add-hub; its
# agent restarts with both hubs and stays with the hub its credential is for
# (get klusterlet: CURRENT).
# Should the hub stop answering for hubConnectionTimeoutSeconds (180 s here,
# 600 by default), the agent registers with hub2 and hub2's works apply
# there, taking over what the hub's applied (make test runs that failover
# on these nodes).
step kubectl ocm hub init --context hub2 --wait --cluster-name cluster1 --auto-approved-csr-identities system:serviceaccount:open-cluster-management-cluster-bootstrap:agent-registration-bootstrap-cluster1 | tee "$DEV_ENV_DIR/hub2-init.out"
STANDBY_TOKEN=$(grep -o -- '--hub-token [^ ]*' "$DEV_ENV_DIR/hub2-init.out" | head -1 | cut -d' ' -f2)
STANDBY=$(grep -o -- '--hub-apiserver [^ ]*' "$DEV_ENV_DIR/hub2-init.out" | head -1 | cut -d' ' -f2)
STANDBY_PIN=$(grep -o -- '--ca-cert-hash sha256:[0-9a-fA-F]*' "$DEV_ENV_DIR/hub2-init.out" | head -1 | cut -d' ' -f2)
if [[ -z $STANDBY_TOKEN || -z $STANDBY || -z $STANDBY_PIN ]]; then
	echo "hub init on hub2 printed no join command" >&2
	exit 1
fi
step kubectl ocm join --add-hub --hub-token "$STANDBY_TOKEN" --hub-apiserver "$STANDBY" --ca-cert-hash "$STANDBY_PIN" --hub-connection-timeout-seconds 180 --context cluster1
step kubectl ocm get klusterlet --context cluster1

phase "the hub cluster as a hosted cluster"
# A hosted cluster and its add-on: the hub cluster itself joins as managed
# cluster local-cluster, its agent hosted on cluster1 (join --mode hosted
# with a kubeconfig of the hub cluster). cluster1's Klusterlet operator runs
# the agent there and creates the add-on namespace on local-cluster. The
# agent reports where it runs (--report-hosting-cluster): cluster1, the
# hub's name for its hosting cluster, in local-cluster's ClusterClaim
# hosting-cluster.open-cluster-management.io.
step kubectl ocm hub token --cluster-name local-cluster --context hub | tee "$DEV_ENV_DIR/local-token.out"
LOCAL_TOKEN=$(grep -o -- '--hub-token [^ ]*' "$DEV_ENV_DIR/local-token.out" | head -1 | cut -d' ' -f2)
if [[ -z $LOCAL_TOKEN ]]; then
	echo "hub token printed no token for local-cluster" >&2
	exit 1
fi
kubectl config view --minify --flatten --context hub >"$DEV_ENV_DIR/local-cluster.kubeconfig"
step kubectl ocm join --mode hosted --managed-cluster-kubeconfig "$DEV_ENV_DIR/local-cluster.kubeconfig" --report-hosting-cluster --management-cluster-name cluster1 --hub-token "$LOCAL_TOKEN" --hub-apiserver "$HUB" --ca-cert-hash "$HUB_PIN" --cluster-name local-cluster --context cluster1 --image "$UPGRADE_IMAGE" --image-pull-credentials "$DEV_ENV_DIR/private-registry.json"
step kubectl ocm accept --clusters local-cluster --context hub --wait
step kubectl wait --for=condition=ManagedClusterConditionAvailable managedcluster/local-cluster --context hub --timeout=2m
step kubectl wait --for=jsonpath='{.status.clusterClaims[?(@.name=="hosting-cluster.open-cluster-management.io")].value}'=cluster1 managedcluster/local-cluster --context hub --timeout=1m
step kubectl get managedclusters --context hub -o custom-columns='NAME:.metadata.name,HOSTING-CLUSTER:.status.clusterClaims[?(@.name=="hosting-cluster.open-cluster-management.io")].value'
step kubectl get namespace "$ADDON_NS" --context hub -L addon.open-cluster-management.io/namespace
# The helloworld add-on of local-cluster, with the example's hosted template,
# asks for Hosted mode without naming a hosting cluster (install-mode:
# Hosted), and the hub finds it, as OCM 1.4 does: two choices of the hub
# administrator allow it, helloworld's ClusterManagementAddOn enabling
# hostedModeAutoDiscovery, and a ManagedClusterSet holding both clusters
# (default and global do not count), so that no agent's report can place an
# add-on on a cluster nobody grouped with it. The hub deploys the agent in
# cluster1's namespace, local-cluster's hosted agent writes its hub
# credential there, and it copies local-cluster's ConfigMaps.
step kubectl apply -f "$ROOT/examples/addons/helloworld/hosted/addontemplate.yaml" --context hub
step kubectl patch clustermanagementaddon helloworld --context hub --type=merge -p '{"spec":{"hostedModeAutoDiscovery":{"mode":"Enable"}}}'
step kubectl ocm clusterset create hosted-on-cluster1 --cluster-selector hosting-group=cluster1 --context hub
step kubectl label managedcluster cluster1 local-cluster hosting-group=cluster1 --context hub
step kubectl ocm addon enable --names helloworld --clusters local-cluster --config-file "$ROOT/examples/addons/helloworld/hosted/configs.yaml" --annotate addon.open-cluster-management.io/install-mode=Hosted -n helloworld-hosted --context hub --wait
step kubectl get managedclusteraddon helloworld -n local-cluster --context hub -o custom-columns='NAME:.metadata.name,HOSTING-CLUSTER:.metadata.annotations.addon\.open-cluster-management\.io/hosting-cluster-name,NAMED-BY:.metadata.annotations.addon\.open-cluster-management\.io/hosting-cluster-name-managed-by,VALIDITY:.status.conditions[?(@.type=="HostingClusterValidity")].reason'
step kubectl get manifestwork -n cluster1 -l open-cluster-management.io/addon-namespace=local-cluster --context hub
step kubectl get deployment,secret -n helloworld-hosted --context cluster1
step kubectl create configmap greeting -n local-cluster --from-literal=value=hello-hosted --context hub
step kubectl wait --for=create configmap/greeting -n helloworld-hosted --context cluster1 --timeout=1m
step kubectl get configmap greeting -n helloworld-hosted --context cluster1 -o jsonpath='{.data.value}{"\n"}'

phase "an MCP client asks for the fleet"
# An AI assistant's view of the fleet: kubectl ocm mcp, the Model Context
# Protocol server, driven over stdio by the MCP Inspector's command-line
# client (make mcp-inspector), with the hub admin's kubeconfig: the fleet's
# state, then the hello Pod's log on cluster1, read through the hub's tunnel.
INSPECTOR=$ROOT/bin/tools/mcp-inspector/mcp-inspector
mcp_call() {
	local out
	printf '\n%s$ mcp-inspector kubectl ocm mcp --context hub --method tools/call --tool-name %s%s\n' "$bold" "$*" "$reset"
	out=$("$INSPECTOR" -e KUBECONFIG="$KUBECONFIG" "$ROOT/bin/kubectl-ocm" mcp --context hub --method tools/call --tool-name "$@")
	echo "$out"
	if grep -q '"isError": true' <<<"$out"; then
		echo "the MCP tool $1 failed" >&2
		exit 1
	fi
}
step "$INSPECTOR" -e KUBECONFIG="$KUBECONFIG" "$ROOT/bin/kubectl-ocm" mcp --context hub --method tools/list >/dev/null
mcp_call fleet_overview
mcp_call pod_logs --tool-arg cluster=cluster1 namespace=default pod=hello tailLines=5

phase "every Pod ready"
# Every Pod of the product and of the examples, on the clusters' nodes.
for c in hub cluster1 cluster2 hub2; do
	step kubectl get pods -A -o wide --context "$c"
done

# No Pod is left starting, failing or terminating when the demo ends. The
# agents on cluster1 roll out once more after the last steps (their Pods are
# seconds old here), so a Pod gets a minute to become ready.
not_ready_pods() {
	local c
	for c in hub cluster1 cluster2 hub2; do
		kubectl get pods -A --context "$c" -o go-template='{{range .items}}{{$ready := "False"}}{{range .status.conditions}}{{if eq .type "Ready"}}{{$ready = .status}}{{end}}{{end}}{{if or .metadata.deletionTimestamp (and (ne .status.phase "Succeeded") (ne $ready "True"))}}'"$c"'{{" "}}{{.metadata.namespace}}/{{.metadata.name}}{{" "}}{{.status.phase}}{{"\n"}}{{end}}{{end}}'
	done
}
deadline=$((SECONDS + 60))
not_ready=$(not_ready_pods)
while [[ -n $not_ready ]] && ((SECONDS < deadline)); do
	sleep 2
	not_ready=$(not_ready_pods)
done
if [[ -n $not_ready ]]; then
	printf '\nThese Pods were not ready when the demo ended:\n%s\n' "$not_ready" >&2
	exit 1
fi

summary
printf '\nThe hub, two managed clusters, the hub itself as a hosted cluster and the standby hub are running. Stop everything with: make dev-env-down\n'
