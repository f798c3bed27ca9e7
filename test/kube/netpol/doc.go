// Command kube-network-policies is the NetworkPolicy enforcer of the local
// clusters' nodes: the controller of sigs.k8s.io/kube-network-policies,
// which evaluates every new connection of a Pod against the cluster's
// NetworkPolicies in user space, run as a node process beside the kubelet
// and kube-proxy with a kubeconfig of its own. hack/kube-bins.sh (run by
// "make kube-bins") builds it from this module into bin/kube.
//
// kube-network-policies hands the first packet of each connection to user
// space with an nftables "queue" rule, which needs the kernel's nft_queue
// (CONFIG_NFT_QUEUE); kernels built without it refuse the rule, and with it
// the controller's whole table. The xtables NFQUEUE target
// (CONFIG_NETFILTER_XT_TARGET_NFQUEUE) reaches the same netlink queue, so
// this command installs that hook itself with iptables, in a chain of its
// own in the node's network namespace, and removes it when it stops: new
// connections from or to the node's Pod range go to the queue, except those
// of the node's own root processes (the kubelet's probes), as in
// kube-network-policies' own rules. The controller's attempts to write its
// nftables table fail on such kernels and are only logged.
//
// It is a module of its own, not part of test/kube, so that
// kube-network-policies' own dependencies (containerd's nri and the
// runtime-spec it needs) stay at versions it builds with. Every other module
// it shares with test/kube is at test/kube's version, so a cold
// "make kube-bins" compiles about 55 of its packages instead of about 600:
// the Kubernetes build has compiled the rest. To move to another release:
// change the version in go.mod, run "go mod tidy", then
// hack/mod-align.sh (run it too after moving test/kube).
package main
