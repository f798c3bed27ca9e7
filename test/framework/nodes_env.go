package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/host"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/process"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/registry"
)

// prepareNodes takes the environment's slot and makes, before any cluster
// starts, its bridge, its registry with the images of layouts, its private
// registry with those of the private repositories, and each cluster's node
// network with the guards of its ranges. Each cluster then listens on the
// bridge and uses its node's Service range.
func (e *Environment) prepareNodes(ctx context.Context, layouts []ImageLayout, private []string) error {
	s, err := host.TakeSlot(e.logf)
	if err != nil {
		return err
	}
	e.slot = s
	e.logf("slot %d: bridge %s at %s", s.N, s.BridgeName(), s.HostIP())
	if err := ensureInotifyInstances(e.logf); err != nil {
		return err
	}
	if err := s.CreateBridge(); err != nil {
		return err
	}
	if e.registry, err = registry.Start(filepath.Join(e.dir, "registry")); err != nil {
		return err
	}
	if e.private, err = registry.StartPrivate(filepath.Join(e.dir, "private-registry")); err != nil {
		return err
	}
	for _, l := range layouts {
		names, err := e.registry.PushLayout(ctx, l.Dir, l.Repository)
		if err != nil {
			return err
		}
		e.images = append(e.images, names...)
		e.logf("registry %s: %v from %s", e.registry.Host(), names, l.Dir)
	}
	if err := e.copyPrivateImages(ctx, private); err != nil {
		return err
	}
	for i, c := range e.clusters {
		nn := s.Node(i)
		if err := s.CreateNodeNet(nn); err != nil {
			return fmt.Errorf("cluster %s: node network: %w", c.Name, err)
		}
		for _, r := range []*registry.Server{e.registry, e.private} {
			if err := r.ServeInNetns(nn.Name); err != nil {
				return err
			}
		}
		c.bindIP = s.HostIP()
		c.serviceCIDR = nn.ServiceCIDR.String()
		c.node = &node{c: c, name: c.Name + "-control-plane", net: nn, dir: filepath.Join(c.dir, "node"), cgroup: host.CgroupParent + "/" + nn.Name}
	}
	return e.writeRegistryState()
}

// startNode starts the cluster's kube-scheduler and its node, and waits
// until the Node is Ready.
func (e *Environment) startNode(ctx context.Context, c *Cluster) error {
	start := time.Now()
	if err := e.startScheduler(ctx, c); err != nil {
		return err
	}
	if err := c.node.start(ctx, e); err != nil {
		return err
	}
	e.logf("cluster %s: node %s Ready at %s in %s", c.Name, c.node.name, c.node.net.IP, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// Registry returns the host address (127.0.0.1:<port>) of the registry the
// nodes pull from, empty without nodes. An image pushed there as
// <address>/<registry>/<repository>:<tag> runs as <registry>/<repository>:<tag>.
func (e *Environment) Registry() string {
	if e.registry == nil {
		return ""
	}
	return e.registry.Host()
}

// Images returns the names of the images the registry was started with.
func (e *Environment) Images() []string { return append([]string(nil), e.images...) }

// startScheduler starts the cluster's kube-scheduler on the host, as
// system:kube-scheduler, and waits until it is healthy.
func (e *Environment) startScheduler(ctx context.Context, c *Cluster) error {
	creds, err := c.ca.issue("system:kube-scheduler", nil, nil, nil)
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(c.dir, "kube-scheduler.kubeconfig")
	if err := WriteKubeconfig(kubeconfig, c.Name, c.configWith(rest.TLSClientConfig{CertData: creds.certPEM, KeyData: creds.keyPEM})); err != nil {
		return err
	}
	port, err := FreePort()
	if err != nil {
		return err
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--leader-elect=false",
		"--profiling=false",
	}
	proc, err := process.Start(c.Name+"/kube-scheduler", filepath.Join(c.binDir, "kube-scheduler"), args, nil, c.dir, filepath.Join(c.dir, "logs", "kube-scheduler.log"))
	if err != nil {
		return err
	}
	c.procs = append(c.procs, proc)
	c.scheduler = proc
	return proc.WaitFor(ctx, "kube-scheduler health", healthz(fmt.Sprintf("https://127.0.0.1:%d/healthz", port)))
}

// restartNodeClients gives the API server's clients on cluster c's node
// side, its kube-scheduler, kubelet and kube-proxy, credentials of its
// current client CA that trust its current serving CAs, and restarts them,
// as an administrator does in each step of a CA rotation. Without a node
// it does nothing.
func (e *Environment) restartNodeClients(ctx context.Context, c *Cluster) error {
	if c.node == nil {
		return nil
	}
	old := c.scheduler
	if err := old.Stop(10 * time.Second); err != nil {
		return fmt.Errorf("stop the kube-scheduler of cluster %s: %w", c.Name, err)
	}
	c.procs = slices.DeleteFunc(c.procs, func(p *process.Process) bool { return p == old })
	if err := e.startScheduler(ctx, c); err != nil {
		return fmt.Errorf("restart the kube-scheduler of cluster %s: %w", c.Name, err)
	}
	if err := c.node.restartClients(ctx); err != nil {
		return err
	}
	e.logf("cluster %s: the scheduler, kubelet and kube-proxy restarted with the current CAs", c.Name)
	return nil
}

// DistDirEnv names the directory where `make image` and `make
// sandbox-images` write their OCI layouts (default: dist under the
// repository root).
const DistDirEnv = "OCM_DIST_DIR"

// DefaultImages returns the OCI layouts the nodes of the tests and the
// development environment run: the sandbox's images (`make
// sandbox-images`: pause, busybox, the example add-ons') and the
// ocm-controller image (`make image`), as the hub and the agents name it,
// and where `make node-images` built it, the second ocm-controller image
// that upgrades move to (dist/upgrade).
// Each layout but the last must exist.
func DefaultImages() ([]ImageLayout, error) {
	dist := os.Getenv(DistDirEnv)
	if dist == "" {
		root, err := RepoRoot()
		if err != nil {
			return nil, fmt.Errorf("find dist/: %w; set %s", err, DistDirEnv)
		}
		dist = filepath.Join(root, "dist")
	}
	layouts := []ImageLayout{
		{Dir: filepath.Join(dist, "sandbox", "layout")},
		{Dir: filepath.Join(dist, "image", "layout"), Repository: config.DefaultImageRegistry + "/" + config.ControllerImageName},
	}
	for _, l := range layouts {
		if _, err := os.Stat(filepath.Join(l.Dir, "index.json")); err != nil {
			return nil, fmt.Errorf("no OCI layout in %s: run 'make node-images' first", l.Dir)
		}
	}
	upgrade := ImageLayout{Dir: filepath.Join(dist, "upgrade", "layout"), Repository: layouts[1].Repository}
	if _, err := os.Stat(filepath.Join(upgrade.Dir, "index.json")); err == nil {
		layouts = append(layouts, upgrade)
	}
	return layouts, nil
}

// TagImage makes image src of the environment's registry (a full name, as
// Images lists them) available to the nodes as dst too, in any registry:
// the nodes' runtime fetches dst's registry from the environment's registry
// from now on. It is how a test gives an image another name or version.
// A dst in the private registry (PrivateRegistry().Host, such as
// localhost:5001/kubectl-ocm/ocm-controller:v1) is stored there, and pulls
// of it need the private registry's credentials.
func (e *Environment) TagImage(ctx context.Context, src, dst string) error {
	if e.registry == nil {
		return errors.New("the environment has no nodes, and no registry")
	}
	ref, err := name.ParseReference(dst)
	if err != nil {
		return fmt.Errorf("tag %s as %s: %w", src, dst, err)
	}
	if ref.Context().RegistryStr() == registry.PrivateHost {
		if err := e.registry.CopyImageTo(ctx, src, e.private, dst); err != nil {
			return fmt.Errorf("tag %s as %s: %w", src, dst, err)
		}
		return nil
	}
	if err := e.registry.CopyImage(ctx, src, dst); err != nil {
		return fmt.Errorf("tag %s as %s: %w", src, dst, err)
	}
	return e.registryState().mirror(registry.HostOf(ref))
}

// LayoutTag returns the tag of the one image of the OCI layout in dir, as
// `make image` names it (annotation org.opencontainers.image.ref.name).
func LayoutTag(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		return "", fmt.Errorf("read the OCI layout in %s (run 'make node-images'): %w", dir, err)
	}
	var idx struct {
		Manifests []struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return "", fmt.Errorf("%s/index.json: %w", dir, err)
	}
	if len(idx.Manifests) != 1 || idx.Manifests[0].Annotations["org.opencontainers.image.ref.name"] == "" {
		return "", fmt.Errorf("%s/index.json does not name one image", dir)
	}
	return idx.Manifests[0].Annotations["org.opencontainers.image.ref.name"], nil
}

// SweepAbandoned removes from the host what every environment with nodes
// whose process is gone left there (its nodes' processes, cgroups, network
// namespaces, links and routes), and says which slots it swept.
func SweepAbandoned() ([]string, error) { return host.SweepAbandoned() }
