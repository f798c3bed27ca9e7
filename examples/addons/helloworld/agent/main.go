// Command helloworld-addon is the agent of the helloworld example add-on. It
// runs on a managed cluster, deployed there by the add-on's AddOnTemplate, and:
//
//   - copies every ConfigMap of its cluster's namespace on the hub (read with
//     the add-on's own hub credential, --hub-kubeconfig) into its install
//     namespace on the managed cluster (--namespace), keeps the copies in
//     sync, and deletes a copy once its source is gone. Copies carry the label
//     helloworld.addon.kubectl-ocm.io/source-namespace=<cluster>, and the
//     agent only ever updates or deletes ConfigMaps carrying it. The hub's
//     kube-root-ca.crt, which every namespace holds, is not copied;
//   - renews Lease helloworld in its install namespace every quarter of
//     --lease-duration, which is how an add-on agent tells the hub it is alive.
//
// It talks to the managed cluster with the kubeconfig named by --kubeconfig or
// $KUBECONFIG, else its Pod's in-cluster configuration. It uses client-go only,
// as any add-on author could.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// defaultAddonName is the add-on's name unless --addon-name says otherwise:
// the name of its ClusterManagementAddOn and of the Lease the agent renews.
const defaultAddonName = "helloworld"

// options are the agent's flags.
type options struct {
	addonName     string
	clusterName   string
	hubKubeconfig string
	namespace     string
	kubeconfig    string
	leaseDuration time.Duration
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "helloworld-addon: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, o); err != nil {
		klog.Background().Error(err, "helloworld-addon stopped")
		klog.Flush()
		os.Exit(1)
	}
	klog.Flush()
}

// parseFlags reads the flags (and klog's, such as -v) and validates them.
func parseFlags(args []string) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("helloworld-addon", flag.ContinueOnError)
	fs.StringVar(&o.addonName, "addon-name", defaultAddonName, "Name of the add-on: the agent renews the Lease of this name.")
	fs.StringVar(&o.clusterName, "cluster-name", "", "Name of the managed cluster: the agent copies the ConfigMaps of this namespace on the hub.")
	fs.StringVar(&o.hubKubeconfig, "hub-kubeconfig", "", "Kubeconfig of the add-on's hub credential (the Secret helloworld-hub-kubeconfig, mounted).")
	fs.StringVar(&o.namespace, "namespace", "", "Install namespace on the managed cluster: where the copies and the Lease live.")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Kubeconfig of the managed cluster; default $KUBECONFIG, else the in-cluster configuration.")
	fs.DurationVar(&o.leaseDuration, "lease-duration", 60*time.Second, "Duration of the add-on's Lease; the agent renews it every quarter of this.")
	klog.InitFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, o.validate()
}

// validate checks the flags and names the one at fault.
func (o *options) validate() error {
	var errs []error
	for flagName, value := range map[string]string{"--addon-name": o.addonName, "--cluster-name": o.clusterName, "--namespace": o.namespace} {
		if value == "" {
			errs = append(errs, fmt.Errorf("%s is required", flagName))
		} else if msgs := validation.IsDNS1123Label(value); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s %q is not a namespace name: %s", flagName, value, msgs[0]))
		}
	}
	if o.hubKubeconfig == "" {
		errs = append(errs, errors.New("--hub-kubeconfig is required"))
	}
	if o.leaseDuration < time.Second {
		errs = append(errs, fmt.Errorf("--lease-duration %s is shorter than one second", o.leaseDuration))
	}
	return errors.Join(errs...)
}

// run connects to both clusters and runs the lease renewal and the copy
// controller until ctx ends.
func run(ctx context.Context, o *options) error {
	logger := klog.FromContext(ctx).WithValues("cluster", o.clusterName, "namespace", o.namespace)
	ctx = klog.NewContext(ctx, logger)

	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	managedConfig, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return fmt.Errorf("configure the managed cluster's client: %w", err)
	}
	managedConfig.UserAgent = "helloworld-addon"
	managed, err := kubernetes.NewForConfig(managedConfig)
	if err != nil {
		return fmt.Errorf("create the managed cluster's client: %w", err)
	}
	hubConfig, err := loadHubConfig(o.hubKubeconfig, o.addonName)
	if err != nil {
		return err
	}
	hub, err := kubernetes.NewForConfig(hubConfig)
	if err != nil {
		return fmt.Errorf("create the hub client: %w", err)
	}

	holder, err := os.Hostname()
	if err != nil {
		holder = o.addonName
	}
	lease := newLeaseRenewer(managed, o.addonName, o.namespace, holder, o.leaseDuration)
	go lease.run(ctx)

	logger.Info("starting", "hub", hubConfig.Host, "leaseDuration", o.leaseDuration)
	newController(hub, managed, o.clusterName, o.namespace).run(ctx)
	return nil
}
