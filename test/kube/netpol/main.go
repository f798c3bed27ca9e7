package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/kube-network-policies/pkg/networkpolicy"
)

// chain is the iptables chain (table mangle) that queues new Pod
// connections.
const chain = "OCM-NETWORK-POLICIES"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "kube-network-policies:", err)
		os.Exit(1)
	}
}

func run() error {
	kubeconfig := flag.String("kubeconfig", "", "The kubeconfig of the node's enforcer (required).")
	nodeName := flag.String("hostname-override", "", "The Node's name (required).")
	podCIDR := flag.String("pod-cidr", "", "The node's Pod range, whose connections are checked (required).")
	queueID := flag.Int("nfqueue-id", 100, "The netlink queue the packets go through.")
	klog.InitFlags(nil)
	flag.Parse()
	if *kubeconfig == "" || *nodeName == "" || *podCIDR == "" {
		return errors.New("--kubeconfig, --hostname-override and --pod-cidr are required")
	}
	if _, _, err := net.ParseCIDR(*podCIDR); err != nil {
		return fmt.Errorf("--pod-cidr: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	factory := informers.NewSharedInformerFactory(client, 0)
	controller, err := networkpolicy.NewController(client,
		factory.Networking().V1().NetworkPolicies(), factory.Core().V1().Namespaces(), factory.Core().V1().Pods(),
		nil, nil, nil, nil,
		networkpolicy.Config{QueueID: *queueID, NodeName: *nodeName})
	if err != nil {
		return err
	}
	// Bridged frames between the node's Pods go through iptables too.
	if err := os.WriteFile("/proc/sys/net/bridge/bridge-nf-call-iptables", []byte("1"), 0o644); err != nil {
		return fmt.Errorf("let iptables see bridged Pod traffic: %w", err)
	}
	if err := installQueue(*podCIDR, *queueID); err != nil {
		removeQueue()
		return err
	}
	defer removeQueue()
	factory.Start(ctx.Done())
	return controller.Run(ctx)
}

// installQueue hooks chain into mangle POSTROUTING (after Services are
// resolved): new connections from or to podCIDR go to queue id, but those
// of the node's root processes.
func installQueue(podCIDR string, id int) error {
	removeQueue()
	q := []string{"-j", "NFQUEUE", "--queue-num", strconv.Itoa(id)}
	rules := [][]string{
		{"-N", chain},
		{"-A", chain, "-m", "owner", "--uid-owner", "0", "-j", "RETURN"},
		{"-A", chain, "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"},
		append([]string{"-A", chain, "-s", podCIDR}, q...),
		append([]string{"-A", chain, "-d", podCIDR}, q...),
		{"-A", "POSTROUTING", "-j", chain},
	}
	for _, r := range rules {
		if err := iptables(r...); err != nil {
			return err
		}
	}
	return nil
}

// removeQueue removes chain and its hook, if they exist.
func removeQueue() {
	for iptables("-D", "POSTROUTING", "-j", chain) == nil {
	}
	_ = iptables("-F", chain)
	_ = iptables("-X", chain)
}

// iptables runs iptables on table mangle.
func iptables(args ...string) error {
	out, err := exec.Command("iptables", append([]string{"-w", "-t", "mangle"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("iptables %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}
