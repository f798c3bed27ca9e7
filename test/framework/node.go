package framework

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework/images"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/host"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/process"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/registry"
)

// node is a cluster's node, as a kind node container gives one but without
// a container: a network namespace on the environment's bridge, a mount
// namespace of its own (a private /run, its own /var/lib and /var/log) and a
// cgroup of its own, in which run containerd (with runc and the CNI
// plugins), a kubelet, kube-proxy and kube-network-policies, which enforces
// the cluster's NetworkPolicies. The cluster's kube-scheduler runs on the
// host beside its API server.
type node struct {
	c *Cluster
	// name is the Node's name, <cluster>-control-plane as on kind.
	name string
	net  host.NodeNet
	dir  string
	// cgroup is the node's cgroup under every hierarchy: the kubelet keeps
	// its Pods under it, and the node's own processes are in its child
	// "system".
	cgroup string
	// holder keeps the node's mount namespace.
	holder *process.Process
	// kubelet, proxy and netpol are the node's kubelet, kube-proxy and
	// NetworkPolicy enforcer, which restartClients replaces.
	kubelet, proxy, netpol *process.Process
	procs                  []*process.Process
	// pathEnv is the PATH the node's processes run with.
	pathEnv string
	// netpolBin is the enforcer's binary, of the environment's current
	// release whatever the cluster's.
	netpolBin string
}

// nodeBinaries are what a node runs, from the Kubernetes binaries'
// directory.
var nodeBinaries = []string{"kubelet", "kube-proxy", "kube-scheduler", "containerd", "containerd-shim-runc-v2", netpolBinary}

// kubeletSysctls are the kernel settings the kubelet sets when they differ
// (its container manager's kernel tunables). They are the whole machine's,
// not the node's: each node's mount namespace covers them with a file that
// already holds the kubelet's value, so that the host keeps its own.
var kubeletSysctls = map[string]string{
	"vm/overcommit_memory":      "1",
	"vm/panic_on_oom":           "0",
	"kernel/panic":              "10",
	"kernel/panic_on_oops":      "1",
	"kernel/keys/root_maxkeys":  "1000000",
	"kernel/keys/root_maxbytes": "25000000",
}

func (n *node) path(elem ...string) string { return filepath.Join(append([]string{n.dir}, elem...)...) }

// start writes the node's configuration and starts it, and waits until the
// Node is Ready.
func (n *node) start(ctx context.Context, e *Environment) error {
	for _, d := range []string{"var/lib", "var/log", "cni/net.d", "sysctl", "pki"} {
		if err := os.MkdirAll(n.path(d), 0o755); err != nil {
			return err
		}
	}
	if err := n.writeConfig(e); err != nil {
		return fmt.Errorf("node %s: %w", n.name, err)
	}
	if err := host.MakeCgroup(n.cgroup + "/system"); err != nil {
		return fmt.Errorf("node %s: %w", n.name, err)
	}
	if err := n.startHolder(ctx); err != nil {
		return fmt.Errorf("node %s: %w", n.name, err)
	}
	n.pathEnv = "PATH=" + e.binDir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	n.netpolBin = filepath.Join(e.binDir, netpolBinary)
	containerd, err := n.run("containerd", filepath.Join(e.binDir, "containerd"), []string{"--config", n.path("containerd.toml")}, n.pathEnv)
	if err != nil {
		return err
	}
	if err := containerd.WaitFor(ctx, "containerd's socket", func(context.Context) (bool, error) {
		return containerd.LogContains("containerd successfully booted"), nil
	}); err != nil {
		return err
	}
	if err := grantNetpol(ctx, n.c.Clientset()); err != nil {
		return fmt.Errorf("node %s: %w", n.name, err)
	}
	if err := n.startClients(); err != nil {
		return err
	}
	if err := n.waitNetpol(ctx); err != nil {
		return err
	}
	return n.waitReady(ctx)
}

// startClients starts the node's clients of the API server: the kubelet,
// kube-proxy and the NetworkPolicy enforcer.
func (n *node) startClients() error {
	kubelet, err := n.run("kubelet", filepath.Join(n.c.binDir, "kubelet"), []string{
		"--config=" + n.path("kubelet.yaml"),
		"--kubeconfig=" + n.path("kubelet.kubeconfig"),
		"--hostname-override=" + n.name,
		"--node-ip=" + n.net.IP.String(),
		"--v=1",
	}, n.pathEnv)
	if err != nil {
		return err
	}
	n.kubelet = kubelet
	n.proxy, err = n.run("kube-proxy", filepath.Join(n.c.binDir, "kube-proxy"), []string{"--config=" + n.path("kube-proxy.yaml"), "--v=1"}, n.pathEnv)
	if err != nil {
		return err
	}
	n.netpol, err = n.startNetpol()
	return err
}

// restartClients gives the kubelet, kube-proxy and the enforcer new credentials of the
// cluster's current client CA, trusting its current serving CAs, and
// restarts them, as an administrator does in a CA rotation; it waits until
// the Node is Ready again. The node's containers run on: containerd stays.
func (n *node) restartClients(ctx context.Context) error {
	if err := n.writeCredentials(); err != nil {
		return fmt.Errorf("node %s: %w", n.name, err)
	}
	for _, p := range []*process.Process{n.netpol, n.proxy, n.kubelet} {
		if err := p.Stop(10 * time.Second); err != nil {
			return fmt.Errorf("node %s: stop %s: %w", n.name, p.Name(), err)
		}
		n.procs = slices.DeleteFunc(n.procs, func(q *process.Process) bool { return q == p })
	}
	if err := n.startClients(); err != nil {
		return fmt.Errorf("node %s: %w", n.name, err)
	}
	return n.waitReady(ctx)
}

// startHolder starts the process that makes and keeps the node's mount
// namespace: a private /run, the node's directories over /var/lib and
// /var/log, and the kubelet's kernel settings covered.
func (n *node) startHolder(ctx context.Context) error {
	ready := n.path("holder.ready")
	_ = os.Remove(ready)
	var script strings.Builder
	script.WriteString("set -e\n")
	script.WriteString("mount -t tmpfs -o mode=0755 tmpfs /run\n")
	fmt.Fprintf(&script, "mount --bind %q /var/lib\n", n.path("var/lib"))
	fmt.Fprintf(&script, "mount --bind %q /var/log\n", n.path("var/log"))
	for key, value := range kubeletSysctls {
		target := "/proc/sys/" + key
		if _, err := os.Stat(target); err != nil {
			continue
		}
		file := n.path("sysctl", strings.ReplaceAll(key, "/", "."))
		if err := os.WriteFile(file, []byte(value+"\n"), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(&script, "mount --bind %q %q\n", file, target)
	}
	fmt.Fprintf(&script, "touch %q\nexec sleep infinity\n", ready)
	holder, err := n.run("holder", "unshare", []string{"--mount", "--propagation", "private", "--", "sh", "-c", script.String()}, "")
	if err != nil {
		return err
	}
	n.holder = holder
	return holder.WaitFor(ctx, "the node's mount namespace", func(context.Context) (bool, error) {
		_, err := os.Stat(ready)
		return err == nil, nil
	})
}

// run starts one of the node's processes in its cgroup and, but for the
// holder, in its network and mount namespaces.
func (n *node) run(what, bin string, args []string, env string) (*process.Process, error) {
	procs, err := host.CgroupProcsFiles(n.cgroup + "/system")
	if err != nil {
		return nil, err
	}
	// sh moves itself into the node's cgroup, then becomes the process:
	// everything it starts stays in the node's cgroup.
	wrapper := []string{"-c", `for f in $NODE_CGROUP_PROCS; do echo $$ > "$f"; done; exec "$@"`, "node"}
	if n.holder != nil {
		wrapper = append(wrapper, "nsenter", "--net=/run/netns/"+n.net.Name, fmt.Sprintf("--mount=/proc/%d/ns/mnt", n.holder.Pid()), "--wd=/", "--")
	}
	wrapper = append(wrapper, bin)
	wrapper = append(wrapper, args...)
	extra := []string{"NODE_CGROUP_PROCS=" + strings.Join(procs, " ")}
	if env != "" {
		extra = append(extra, env)
	}
	p, err := process.Start(n.c.Name+"/node/"+what, "/bin/sh", wrapper, extra, n.dir, n.path("logs", what+".log"))
	if err != nil {
		return nil, err
	}
	n.procs = append(n.procs, p)
	return p, nil
}

// waitReady waits until the Node exists and is Ready.
func (n *node) waitReady(ctx context.Context) error {
	cs := n.c.Clientset()
	return n.kubelet.WaitFor(ctx, "Node "+n.name+" Ready", func(ctx context.Context) (bool, error) {
		nd, err := cs.CoreV1().Nodes().Get(ctx, n.name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range nd.Status.Conditions {
			if c.Type == corev1.NodeReady {
				if c.Status == corev1.ConditionTrue {
					return true, nil
				}
				return false, fmt.Errorf("node %s: %s: %s", n.name, c.Reason, c.Message)
			}
		}
		return false, nil
	})
}

// stop stops the node's processes, then kills whatever is left in its
// cgroup (the runtime's shims and the containers) and removes the cgroups.
func (n *node) stop() error {
	var errs []error
	for i := len(n.procs) - 1; i >= 0; i-- {
		errs = append(errs, n.procs[i].Stop(5*time.Second))
	}
	errs = append(errs, host.RemoveCgroup(n.cgroup))
	return errors.Join(errs...)
}

// writeConfig writes the node's credentials and the configuration of
// containerd, the CNI plugins, the kubelet and kube-proxy.
func (n *node) writeConfig(e *Environment) error {
	c := n.c
	serving, err := c.ca.issue(n.name, nil, []net.IP{n.net.IP}, []string{n.name})
	if err != nil {
		return err
	}
	files := map[string][]byte{
		n.path("pki", "ca.crt"):      c.ca.certPEM,
		n.path("pki", "kubelet.crt"): serving.certPEM,
		n.path("pki", "kubelet.key"): serving.keyPEM,
	}
	for _, path := range []string{n.path("containerd.toml"), n.path("cni", "net.d", "10-ocm.conflist"), n.path("kubelet.yaml"), n.path("kube-proxy.yaml")} {
		if files[path], err = n.renderConfig(filepath.Base(path)); err != nil {
			return err
		}
	}
	for path, data := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
	}
	for _, host := range images.Mirrored {
		if err := n.mirror(host); err != nil {
			return err
		}
	}
	if err := writeHostsTOML(n.path("certs.d"), registry.PrivateHost, registry.PrivateHostsTOML()); err != nil {
		return err
	}
	return n.writeCredentials()
}

// writeCredentials writes the kubeconfigs of the kubelet, kube-proxy and the
// enforcer:
// client certificates of the cluster's current client CA, and its current
// serving CAs.
func (n *node) writeCredentials() error {
	c := n.c
	kubeletCreds, err := c.ca.issue("system:node:"+n.name, []string{"system:nodes"}, nil, nil)
	if err != nil {
		return err
	}
	proxyCreds, err := c.ca.issue("system:kube-proxy", nil, nil, nil)
	if err != nil {
		return err
	}
	if err := WriteKubeconfig(n.path("kubelet.kubeconfig"), c.Name, c.configWith(rest.TLSClientConfig{CertData: kubeletCreds.certPEM, KeyData: kubeletCreds.keyPEM})); err != nil {
		return err
	}
	if err := n.writeNetpolCredentials(); err != nil {
		return err
	}
	return WriteKubeconfig(n.path("kube-proxy.kubeconfig"), c.Name, c.configWith(rest.TLSClientConfig{CertData: proxyCreds.certPEM, KeyData: proxyCreds.keyPEM}))
}

// mirror has the node's runtime fetch the images of registry host from the
// environment's registry. The runtime reads the hosts' configuration on
// every pull.
func (n *node) mirror(host string) error {
	return writeHostsTOML(n.path("certs.d"), host, registry.HostsTOML(host))
}

// nodeConfigFS holds the templates of the configuration files of a node's
// containerd, CNI plugins, kubelet and kube-proxy, each rendered with the
// node's nodeConfig:
//
//   - containerd.toml: containerd's state in the node's private /run, its
//     data in the node's /var/lib, runc with cgroupfs (OOM scores no lower
//     than its own), the CNI plugins Debian installs, the local pause image,
//     and the registries of images.Mirrored fetched from the environment's
//     registry.
//   - 10-ocm.conflist: the network of the node's Pods: a bridge on the
//     node, the node's Pod range, no masquerading (the host routes the
//     range to the node).
//   - kubelet.yaml: cgroupfs under the node's cgroup (cgroup v1 allowed),
//     client-certificate and webhook authentication, no eviction for disk
//     (the host's disk is the host's), the node's private containerd,
//     container logs rotated at 128 MiB.
//   - kube-proxy.yaml: iptables in the node's network namespace, leaving
//     the machine-wide conntrack settings alone.
//
//go:embed nodeconfig/*.tmpl
var nodeConfigFS embed.FS

// nodeConfigTemplates are the parsed templates of nodeConfigFS, by file
// name with the .tmpl suffix; quote writes a string as a quoted string of
// TOML, JSON and YAML alike.
var nodeConfigTemplates = template.Must(template.New("").
	Funcs(template.FuncMap{"quote": strconv.Quote}).
	ParseFS(nodeConfigFS, "nodeconfig/*.tmpl"))

// nodeConfig is what the templates of a node's configuration files fill in.
type nodeConfig struct {
	// NodeName is the Node's name, NodeIP its address on the bridge.
	NodeName, NodeIP string
	// PodCIDR is the node's Pod range, PodGateway the address of the Pods'
	// bridge on the node.
	PodCIDR, PodGateway string
	// CNIConfDir holds the CNI configuration, RegistryConfigPath
	// containerd's per-registry hosts.toml files.
	CNIConfDir, RegistryConfigPath string
	// PauseImage is the sandbox image containerd keeps.
	PauseImage string
	// KubeletCert and KubeletKey are the kubelet's serving credentials,
	// ClientCA the CA it authenticates clients with.
	KubeletCert, KubeletKey, ClientCA string
	// CgroupRoot is the node's cgroup, under which the kubelet keeps its
	// Pods.
	CgroupRoot string
	// ProxyKubeconfig is kube-proxy's kubeconfig.
	ProxyKubeconfig string
}

// config returns what the templates of the node's configuration files
// fill in.
func (n *node) config() nodeConfig {
	return nodeConfig{
		NodeName: n.name, NodeIP: n.net.IP.String(),
		PodCIDR: n.net.PodCIDR.String(), PodGateway: host.Gateway(n.net.PodCIDR).String(),
		CNIConfDir: n.path("cni", "net.d"), RegistryConfigPath: n.path("certs.d"),
		PauseImage:  images.Pause,
		KubeletCert: n.path("pki", "kubelet.crt"), KubeletKey: n.path("pki", "kubelet.key"), ClientCA: n.path("pki", "ca.crt"),
		CgroupRoot:      "/" + n.cgroup,
		ProxyKubeconfig: n.path("kube-proxy.kubeconfig"),
	}
}

// renderConfig renders the template of configuration file name (as in
// nodeconfig/, without .tmpl) for the node.
func (n *node) renderConfig(name string) ([]byte, error) {
	var b bytes.Buffer
	if err := nodeConfigTemplates.ExecuteTemplate(&b, name+".tmpl", n.config()); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	return b.Bytes(), nil
}
