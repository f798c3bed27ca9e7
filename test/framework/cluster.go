package framework

import (
	"context"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/host"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/process"
)

// AdminUser is the user name of the framework's cluster-admin client
// certificate; it is in the system:masters group.
const AdminUser = "kubectl-ocm-admin"

// Cluster is one running control plane: a kube-apiserver and a
// kube-controller-manager sharing the environment's etcd.
type Cluster struct {
	// Name is the cluster's name and its context name in the kubeconfig.
	Name string

	dir  string
	port int
	// binDir holds the cluster's kube-apiserver and kube-controller-manager
	// and its node's kubelet, kube-proxy and kube-scheduler: those of the
	// current release, or of the previous one (Options.Previous).
	binDir string
	// bindIP is where the API server listens: loopback, or the
	// environment's bridge when the cluster has a node.
	bindIP net.IP
	// serviceCIDR is the cluster's Service IP range.
	serviceCIDR string
	// noSigning is Options.NoClientSigning for this cluster.
	noSigning bool
	// priorityAndFairness is Options.PriorityAndFairness for this cluster.
	priorityAndFairness bool
	// profiling is Options.Profiling for this cluster.
	profiling bool
	// node is the cluster's node, nil without nodes.
	node *node
	// ca is the cluster CA: it signs the client certificates of approved
	// CSRs and of the framework's users. servingCA signs the API server's
	// serving certificate: the cluster CA, until a serving CA rotation
	// (rotation.go). nextServingCA is the serving CA a rotation has added
	// and does not serve with yet, nextClientCA the client CA a rotation
	// has added and does not sign with yet.
	ca, servingCA *authority
	nextServingCA *authority
	nextClientCA  *authority
	// files are the paths of the cluster's credentials.
	files certFiles
	admin keyPair
	// oldAdmin is the admin certificate of the client CA a rotation
	// replaced, which RemoveOldClientCA checks the API server rejects.
	oldAdmin keyPair
	// kcmCreds is kube-controller-manager's client certificate.
	kcmCreds keyPair
	// mu guards trusted and admCfg, which a CA rotation changes while
	// clients read them.
	mu sync.Mutex
	// trusted is the PEM bundle of the CAs clients trust for the API
	// server (CAData).
	trusted []byte
	admCfg  *rest.Config
	procs   []*process.Process
	// kcm is the running kube-controller-manager; kcmArgs and kcmPort
	// start it again (a CA rotation).
	kcm     *process.Process
	kcmArgs []string
	kcmPort int
	// scheduler is the running kube-scheduler of a cluster with a node.
	scheduler *process.Process
	// apiserver is the running kube-apiserver; apiserverBin and
	// apiserverArgs start it again (RestartAPIServer).
	apiserver     *process.Process
	apiserverBin  string
	apiserverArgs []string
}

// Server returns the API server URL: https://127.0.0.1:<port>, or with a
// node https://<the environment's bridge address>:<port>, which the node's
// Pods reach too.
func (c *Cluster) Server() string { return fmt.Sprintf("https://%s:%d", c.bindIP, c.port) }

// HostnameDomain is the domain of the clusters' hostnames (Hostname). It
// is reserved never to resolve: only a client that maps the name itself,
// such as an HTTPProxy, reaches a cluster by it.
const HostnameDomain = "kubectl-ocm.invalid"

// Hostname returns a name the API server's certificate is valid for that
// no resolver knows: <cluster>.kubectl-ocm.invalid. A client given
// https://<Hostname>:<port> reaches the cluster only through a proxy that
// maps the name (HTTPProxy), which shows that its traffic takes that path.
func (c *Cluster) Hostname() string { return c.Name + "." + HostnameDomain }

// HostnameURL returns the API server's URL with Hostname as its host.
func (c *Cluster) HostnameURL() string { return fmt.Sprintf("https://%s:%d", c.Hostname(), c.port) }

// NodeName returns the name of the cluster's Node, empty without nodes.
func (c *Cluster) NodeName() string {
	if c.node == nil {
		return ""
	}
	return c.node.name
}

// ServiceCIDR returns the cluster's Service IP range.
func (c *Cluster) ServiceCIDR() string { return c.serviceCIDR }

// CAData returns the PEM-encoded CAs clients trust for the API server: the
// cluster CA, which signs the API server's serving certificate and the client
// certificates of approved CSRs; during a serving CA rotation (rotation.go)
// the old and the new serving CA.
func (c *Cluster) CAData() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.trusted...)
}

// Dir returns the directory holding this cluster's certificates and logs.
func (c *Cluster) Dir() string { return c.dir }

// RESTConfig returns a copy of the cluster-admin client configuration.
func (c *Cluster) RESTConfig() *rest.Config {
	c.mu.Lock()
	defer c.mu.Unlock()
	return rest.CopyConfig(c.admCfg)
}

// setAdminConfig sets the cluster-admin configuration from the admin
// certificate and the trusted CAs.
func (c *Cluster) setAdminConfig() {
	cfg := c.configWith(rest.TLSClientConfig{CertData: c.admin.certPEM, KeyData: c.admin.keyPEM})
	c.mu.Lock()
	defer c.mu.Unlock()
	c.admCfg = cfg
}

// Client returns a cluster-admin controller-runtime client using the project's scheme.
func (c *Cluster) Client() client.Client {
	cl, err := client.New(c.RESTConfig(), client.Options{Scheme: apis.Scheme})
	if err != nil {
		panic(fmt.Sprintf("client for cluster %s: %v", c.Name, err)) // config is known valid
	}
	return cl
}

// Clientset returns a cluster-admin client-go clientset.
func (c *Cluster) Clientset() kubernetes.Interface {
	return kubernetes.NewForConfigOrDie(c.RESTConfig())
}

// ConfigForUser returns a client configuration that authenticates with a
// client certificate for user in groups, signed by the cluster CA. It is how
// tests act as a user other than the admin, under the real authorizer.
func (c *Cluster) ConfigForUser(user string, groups ...string) (*rest.Config, error) {
	kp, err := c.ca.issue(user, groups, nil, nil)
	if err != nil {
		return nil, err
	}
	return c.configWith(rest.TLSClientConfig{CertData: kp.certPEM, KeyData: kp.keyPEM}), nil
}

// ConfigForServiceAccount returns a client configuration that authenticates as
// the ServiceAccount namespace/name with a bound token from the TokenRequest API,
// valid for expiration.
func (c *Cluster) ConfigForServiceAccount(ctx context.Context, namespace, name string, expiration time.Duration) (*rest.Config, error) {
	token, err := c.ServiceAccountToken(ctx, namespace, name, expiration)
	if err != nil {
		return nil, err
	}
	cfg := c.configWith(rest.TLSClientConfig{})
	cfg.BearerToken = token
	return cfg, nil
}

// ServiceAccountToken requests a token for the ServiceAccount namespace/name.
func (c *Cluster) ServiceAccountToken(ctx context.Context, namespace, name string, expiration time.Duration) (string, error) {
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(int64(expiration.Seconds())),
	}}
	tr, err := c.Clientset().CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("request token for ServiceAccount %s/%s on cluster %s: %w", namespace, name, c.Name, err)
	}
	return tr.Status.Token, nil
}

// configWith returns a configuration for this cluster's server that trusts the
// cluster CA, with the given client credentials.
func (c *Cluster) configWith(tls rest.TLSClientConfig) *rest.Config {
	tls.CAData = c.CAData()
	return &rest.Config{Host: c.Server(), TLSClientConfig: tls, QPS: 200, Burst: 400}
}

// loopback is the only address the framework listens on or talks to.
var loopback = net.ParseIP("127.0.0.1")

// APIServerPid returns the process ID of the cluster's kube-apiserver, 0 when
// none runs: what a benchmark reads the API server's memory and CPU from.
func (c *Cluster) APIServerPid() int {
	if c.apiserver == nil {
		return 0
	}
	return c.apiserver.Pid()
}

// KillContainer kills (SIGKILL) every process of the running container
// container of Pod namespace/pod, as a crash would: the kubelet sees it exit
// and restarts it by the Pod's restart policy. It returns the ID of the
// container it killed.
func (c *Cluster) KillContainer(ctx context.Context, namespace, pod, container string) (string, error) {
	if c.node == nil {
		return "", fmt.Errorf("cluster %s has no node", c.Name)
	}
	p, err := c.Clientset().CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	var id string
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == container && s.State.Running != nil {
			_, id, _ = strings.Cut(s.ContainerID, "://")
		}
	}
	if id == "" {
		return "", fmt.Errorf("container %s of Pod %s/%s on cluster %s is not running", container, namespace, pod, c.Name)
	}
	hs, err := host.V1Hierarchies()
	if err != nil {
		return "", err
	}
	// The kubelet keeps each container in a cgroup named by its ID, under
	// its Pod's, under the node's.
	var dirs []string
	for _, h := range hs {
		_ = filepath.WalkDir(filepath.Join(h, c.node.cgroup), func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Name() == id {
				dirs = append(dirs, path)
				return filepath.SkipDir
			}
			return nil
		})
	}
	pids := host.CgroupPids(dirs)
	if len(pids) == 0 {
		return "", fmt.Errorf("no process of container %s (%s) of Pod %s/%s found in the node's cgroups", container, id, namespace, pod)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return id, nil
}
