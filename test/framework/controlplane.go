package framework

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/test/framework/internal/process"
)

// ServiceClusterIPRange is the Service IP range of every cluster. Nothing may
// send traffic to it: there is no proxy, and the range is not on this machine.
const ServiceClusterIPRange = "10.0.0.0/24"

// etcdStartAttempts bounds how often startEtcd tries to start etcd.
const etcdStartAttempts = 3

// startEtcd starts the environment's etcd and waits until it is healthy. A
// port FreePort found free may be taken by another process before etcd
// binds it, when tests start environments in parallel; an etcd that exits
// while starting is started again on other ports.
func (e *Environment) startEtcd(ctx context.Context) error {
	var err error
	for attempt := 1; attempt <= etcdStartAttempts; attempt++ {
		err = e.startEtcdOnce(ctx)
		if err == nil || ctx.Err() != nil || e.etcd == nil {
			return err
		}
		if exited, _ := e.etcd.Exited(); !exited {
			return err
		}
		e.logf("etcd exited while starting (attempt %d of %d): %v", attempt, etcdStartAttempts, err)
	}
	return err
}

// RestartEtcd kills the environment's etcd, as a crash would, and starts it
// again with the same data directory and ports, then waits until it is
// healthy. Every API server loses its storage in between and reconnects on
// its own; nothing written before the kill is lost.
func (e *Environment) RestartEtcd(ctx context.Context) error {
	if err := e.etcd.Stop(0); err != nil {
		return fmt.Errorf("stop etcd: %w", err)
	}
	if err := e.runEtcd(ctx); err != nil {
		return fmt.Errorf("restart etcd on %s: %w", e.etcdURL, err)
	}
	return nil
}

// startEtcdOnce starts etcd on two free ports and waits until it is healthy.
func (e *Environment) startEtcdOnce(ctx context.Context) error {
	clientPort, err := FreePort()
	if err != nil {
		return err
	}
	peerPort, err := FreePort()
	if err != nil {
		return err
	}
	e.etcdURL = fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	dataDir := filepath.Join(e.dir, "etcd")
	// A leftover data directory would hold another environment's certificates
	// in its objects; every environment starts empty.
	if err := os.RemoveAll(dataDir); err != nil {
		return err
	}
	args := []string{
		"--name=etcd",
		"--data-dir=" + dataDir,
		"--listen-client-urls=" + e.etcdURL,
		"--advertise-client-urls=" + e.etcdURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=etcd=" + peerURL,
		"--listen-metrics-urls=",
		// Test data need not survive a power cut; skipping fsync makes every
		// write several times faster on shared disks.
		"--unsafe-no-fsync",
		"--log-level=warn",
	}
	e.etcdArgs = args
	e.logf("starting etcd on %s", e.etcdURL)
	return e.runEtcd(ctx)
}

// runEtcd starts etcd with the recorded arguments and waits until it is
// healthy.
func (e *Environment) runEtcd(ctx context.Context) error {
	var err error
	e.etcd, err = process.Start("etcd", filepath.Join(e.binDir, "etcd"), e.etcdArgs, nil, e.dir, filepath.Join(e.dir, "logs", "etcd.log"))
	if err != nil {
		return err
	}
	httpClient := &http.Client{Timeout: 2 * time.Second}
	return e.etcd.WaitFor(ctx, "etcd health", func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.etcdURL+"/health", nil)
		resp, err := httpClient.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// startCluster generates the cluster's certificates and starts its API server
// and controller manager.
func (e *Environment) startCluster(ctx context.Context, c *Cluster) error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	files, err := c.writeCertificates()
	if err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	if err := e.startAPIServer(ctx, c, files); err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	if err := e.startControllerManager(ctx, c, files); err != nil {
		return fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	if c.node != nil {
		if err := e.startNode(ctx, c); err != nil {
			return fmt.Errorf("cluster %s: %w", c.Name, err)
		}
	}
	e.logf("cluster %s ready at %s", c.Name, c.Server())
	return nil
}

// startAPIServer starts kube-apiserver and waits for /readyz. A port taken
// between choosing and binding it is retried with another port.
func (e *Environment) startAPIServer(ctx context.Context, c *Cluster, f certFiles) error {
	for attempt := 1; ; attempt++ {
		port, err := FreePort()
		if err != nil {
			return err
		}
		c.port = port
		c.setAdminConfig()
		c.apiserverBin, c.apiserverArgs = filepath.Join(c.binDir, "kube-apiserver"), c.apiServerArgs(e.etcdURL, f)
		proc, err := c.runAPIServer(ctx)
		if err == nil {
			return nil
		}
		if proc == nil {
			return err
		}
		if exited, _ := proc.Exited(); exited && attempt < 3 && proc.LogContains("address already in use") {
			e.logf("cluster %s: port %d was taken, retrying", c.Name, port)
			continue
		}
		return err
	}
}

// apiServerArgs are the arguments of the cluster's kube-apiserver on
// c.port, storing in the etcd at etcdURL, with the credentials of f.
func (c *Cluster) apiServerArgs(etcdURL string, f certFiles) []string {
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--etcd-prefix=/clusters/" + c.Name,
		fmt.Sprintf("--secure-port=%d", c.port),
		"--bind-address=" + c.bindIP.String(),
		"--advertise-address=" + c.bindIP.String(),
		"--cert-dir=" + filepath.Join(c.dir, "apiserver-certs"),
		"--tls-cert-file=" + f.servingCert,
		"--tls-private-key-file=" + f.servKey,
		"--client-ca-file=" + f.clientCAs,
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--kubelet-client-certificate=" + f.kubeletClientCert,
		"--kubelet-client-key=" + f.kubeletClientKey,
		// Node names resolve nowhere; the node's address is on the bridge.
		"--kubelet-preferred-address-types=InternalIP",
		"--enable-bootstrap-token-auth=true",
		"--service-account-issuer=" + c.Server(),
		"--service-account-key-file=" + f.saPub,
		"--service-account-signing-key-file=" + f.saKey,
		"--service-cluster-ip-range=" + c.serviceCIDR,
		"--allow-privileged=true",
		fmt.Sprintf("--profiling=%t", c.profiling),
		fmt.Sprintf("--enable-priority-and-fairness=%t", c.priorityAndFairness),
		"--event-ttl=1h",
		// The aggregation layer, as kubeadm sets it up.
		"--requestheader-client-ca-file=" + f.frontProxyCA,
		"--requestheader-allowed-names=" + FrontProxyClient,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + f.frontProxyCert,
		"--proxy-client-key-file=" + f.frontProxyKey,
	}
	if c.node == nil {
		// Without a node nothing serves the kubernetes Service.
		args = append(args, "--endpoint-reconciler-type=none")
	}
	return args
}

// runAPIServer starts kube-apiserver with the cluster's recorded arguments
// and waits for /readyz. It returns the process also when it fails to get
// ready, so that the caller can look at why.
func (c *Cluster) runAPIServer(ctx context.Context) (*process.Process, error) {
	proc, err := process.Start(c.Name+"/kube-apiserver", c.apiserverBin, c.apiserverArgs, nil, c.dir, filepath.Join(c.dir, "logs", "kube-apiserver.log"))
	if err != nil {
		return nil, err
	}
	c.apiserver = proc
	c.procs = append(c.procs, proc)
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		return proc, err
	}
	return proc, proc.WaitFor(ctx, "API server readiness", func(ctx context.Context) (bool, error) {
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok", err
	})
}

// RestartAPIServer kills the cluster's kube-apiserver, as a crash would, and
// starts it again on the same address with the same data, then waits until
// it is ready. Clients see connection errors in between; nothing stored is
// lost (etcd keeps running).
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	if err := c.StopAPIServer(); err != nil {
		return err
	}
	return c.StartAPIServer(ctx)
}

// StartAPIServer starts the cluster's kube-apiserver stopped by
// StopAPIServer again, on the same address with the same data, and waits
// until it is ready.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	if c.apiserver != nil {
		return fmt.Errorf("start the API server of cluster %s: it runs", c.Name)
	}
	if _, err := c.runAPIServer(ctx); err != nil {
		return fmt.Errorf("start the API server of cluster %s: %w", c.Name, err)
	}
	return nil
}

// StopAPIServer kills the cluster's kube-apiserver, as the loss of the
// cluster's control plane would, and leaves it stopped: clients see
// connection errors from then on. The cluster's other processes keep
// running.
func (c *Cluster) StopAPIServer() error {
	old := c.apiserver
	if old == nil {
		return nil
	}
	if err := old.Stop(0); err != nil {
		return fmt.Errorf("stop the API server of cluster %s: %w", c.Name, err)
	}
	c.procs = slices.DeleteFunc(c.procs, func(p *process.Process) bool { return p == old })
	c.apiserver = nil
	return nil
}

// idleControllers turns off, in every cluster's kube-controller-manager, the
// controllers of what no cluster of the tests has or uses: volumes and
// their claims, quotas, autoscalers, CronJobs, ReplicationControllers,
// disruption budgets, dynamic resources, storage-version migrations and
// node TTLs. Each would keep informers, discovery and resyncs going in
// every control plane of make test (the quota controller rediscovers every
// API every 30 s), for nothing. Every name exists in the previous release's
// kube-controller-manager too (TestVersionMatrix runs it).
const idleControllers = ",-horizontal-pod-autoscaler-controller,-cronjob-controller,-resourcequota-controller," +
	"-disruption-controller,-persistentvolume-binder-controller,-persistentvolume-expander-controller," +
	"-persistentvolume-attach-detach-controller,-persistentvolume-protection-controller," +
	"-persistentvolumeclaim-protection-controller,-ephemeral-volume-controller,-resourceclaim-controller," +
	"-endpointslice-mirroring-controller,-replicationcontroller-controller,-storage-version-migrator-controller," +
	"-storageversion-garbage-collector-controller,-device-taint-eviction-controller," +
	"-resourcepoolstatusrequest-controller,-podgroup-protection-controller," +
	"-volumeattributesclass-protection-controller,-ttl-controller"

// startControllerManager starts kube-controller-manager with every controller
// but the deployment controller (the component Runner owns Deployment status)
// and idleControllers, plus the bootstrap-token controllers, signing CSRs with the cluster CA
// unless the cluster is one of Options.NoClientSigning.
func (e *Environment) startControllerManager(ctx context.Context, c *Cluster, f certFiles) error {
	kcmCfg := c.configWith(rest.TLSClientConfig{CertData: c.kcmCreds.certPEM, KeyData: c.kcmCreds.keyPEM})
	if err := WriteKubeconfig(f.kcmKubeconfig, c.Name, kcmCfg); err != nil {
		return err
	}
	// Without a node, the component Runner owns Deployment status.
	controllers := "*,-deployment-controller,bootstrapsigner,tokencleaner" + idleControllers
	if c.node != nil {
		controllers = "*,bootstrapsigner,tokencleaner" + idleControllers
	}
	args := []string{
		"--kubeconfig=" + f.kcmKubeconfig,
		"--authentication-kubeconfig=" + f.kcmKubeconfig,
		"--authorization-kubeconfig=" + f.kcmKubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=0", // chosen below, per attempt
		"--cert-dir=" + filepath.Join(c.dir, "kcm-certs"),
		"--controllers=" + controllers,
		"--root-ca-file=" + f.rootCAs,
		"--service-account-private-key-file=" + f.saKey,
		"--use-service-account-credentials=true",
		"--leader-elect=false",
		"--profiling=false",
	}
	switch {
	case c.noSigning:
		// As managed offerings: approved requests get no certificate.
		args[slices.Index(args, "--controllers="+controllers)] += ",-certificatesigningrequest-signing-controller"
	default:
		args = append(args, "--cluster-signing-cert-file="+f.caCert, "--cluster-signing-key-file="+f.caKey)
		if e.signingDuration > 0 {
			args = append(args, "--cluster-signing-duration="+e.signingDuration.String())
		}
	}
	portArg := slices.Index(args, "--secure-port=0")
	for attempt := 1; ; attempt++ {
		port, err := FreePort()
		if err != nil {
			return err
		}
		args[portArg] = fmt.Sprintf("--secure-port=%d", port)
		c.kcmArgs, c.kcmPort = args, port
		err = c.runControllerManager(ctx)
		if err == nil || c.kcm == nil {
			return err
		}
		if exited, _ := c.kcm.Exited(); exited && attempt < 3 && c.kcm.LogContains("address already in use") {
			e.logf("cluster %s: port %d was taken, retrying", c.Name, port)
			c.kcm = nil
			continue
		}
		return err
	}
}

// runControllerManager starts kube-controller-manager with the cluster's
// recorded arguments and waits until it has published the root CA.
func (c *Cluster) runControllerManager(ctx context.Context) error {
	proc, err := process.Start(c.Name+"/kube-controller-manager", filepath.Join(c.binDir, "kube-controller-manager"), c.kcmArgs, nil, c.dir, filepath.Join(c.dir, "logs", "kube-controller-manager.log"))
	if err != nil {
		return err
	}
	c.kcm = proc
	c.procs = append(c.procs, proc)
	err = proc.WaitFor(ctx, "controller manager health", healthz(fmt.Sprintf("https://127.0.0.1:%d/healthz", c.kcmPort)))
	if err != nil {
		return err
	}
	// Healthy is not yet running its controllers. The root CA publisher is
	// one of the first to act, and clients (like `kubectl ocm join`) read
	// the CA it publishes: a cluster is ready when that ConfigMap exists, as
	// it does on every real cluster.
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		return err
	}
	return proc.WaitFor(ctx, "ConfigMap kube-public/kube-root-ca.crt", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ConfigMaps("kube-public").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{})
		return err == nil, err
	})
}

// healthz returns a check that url answers 200. The components' serving
// certificates are self-signed; only /healthz is read from them.
func healthz(url string) func(context.Context) (bool, error) {
	httpClient := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // loopback health probe of a self-signed local listener
	return func(ctx context.Context) (bool, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := httpClient.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	}
}

// stop stops the cluster's node, then its processes, newest first.
func (c *Cluster) stop() error {
	var errs []error
	if c.node != nil {
		errs = append(errs, c.node.stop())
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		errs = append(errs, c.procs[i].Stop(10*time.Second))
	}
	return errors.Join(errs...)
}
