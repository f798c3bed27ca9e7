// Command hellomanager is the manager of the hellomanager example add-on: an
// add-on with a manager of its own on the hub, written the way OCM's
// addon-framework writes one (see package manager). It runs on the hub under
// its own ServiceAccount (manager.yaml) and deploys the helloworld example's
// agent to each cluster the add-on is enabled on.
//
// It talks to the hub with the kubeconfig named by --kubeconfig or
// $KUBECONFIG, else its Pod's in-cluster configuration.
package main

import (
	"flag"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kubectl-ocm/kubectl-ocm/examples/addons/hellomanager/manager"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
)

func main() {
	var opts manager.Options
	var probeAddr string
	fs := flag.NewFlagSet("hellomanager", flag.ContinueOnError)
	fs.StringVar(&opts.AddonName, "addon-name", manager.DefaultAddonName, "Name of the add-on: its ClusterManagementAddOn and ManagedClusterAddOns.")
	fs.StringVar(&opts.AgentName, "agent-name", rand.String(5),
		"Last part of the default user of the agents' hub identity; random by default, as addon-framework's examples pick it.")
	fs.StringVar(&opts.AgentImage, "agent-image", manager.DefaultAgentImage, "Image of the agent Deployment.")
	fs.BoolVar(&opts.AgentWithoutSecurityContext, "agent-without-security-context", false,
		"Render the agent's Pod without a securityContext, as OCM's addon-framework examples do; it then does not meet restricted Pod Security.")
	fs.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "Address of /healthz and /readyz; 0 turns them off.")
	config.RegisterFlags(fs) // --kubeconfig
	logConfig := textlogger.NewConfig()
	logConfig.AddFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "hellomanager: unexpected arguments %q\n", fs.Args())
		os.Exit(2)
	}
	logger := textlogger.NewLogger(logConfig)
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)

	cfg, err := ctrl.GetConfig()
	if err != nil {
		logger.Error(err, "Cannot configure the hub client: set --kubeconfig or $KUBECONFIG, or run in a Pod")
		os.Exit(1)
	}
	cfg.UserAgent = "hellomanager"
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 apis.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: probeAddr,
	})
	if err != nil {
		logger.Error(err, "Cannot create the manager")
		os.Exit(1)
	}
	if err := manager.Setup(mgr, opts); err != nil {
		logger.Error(err, "Cannot set up the add-on's controllers")
		os.Exit(1)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		logger.Error(err, "Cannot add the health check")
		os.Exit(1)
	}
	logger.Info("Starting the add-on manager", "addon", opts.AddonName, "agentImage", opts.AgentImage)
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		logger.Error(err, "The add-on manager stopped")
		os.Exit(1)
	}
}
