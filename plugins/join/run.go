package join

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusterinfo"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run checks the hub, installs the agent (or, with --dry-run, prints it or
// has the cluster check it) and, with --wait, waits until the cluster has
// joined.
func (o *Options) Run(ctx context.Context) error {
	if o.AddHub {
		return o.runAddHub(ctx)
	}
	hub, err := o.preflight(ctx)
	if err != nil {
		return err
	}
	if o.hosted() {
		if o.managed, err = o.preflightManaged(ctx); err != nil {
			return err
		}
	}
	// spoke is the cluster of --context: the managed cluster, or in hosted
	// mode the hosting cluster, where the agent runs.
	spoke, spokeCfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	if err := o.checkSpoke(ctx, hub, spoke); err != nil {
		return err
	}
	objs, managedObjs, err := o.render(ctx, hub)
	if err != nil {
		return err
	}
	if o.DryRun == cli.DryRunClient {
		o.noteManagedObjects(managedObjs)
		return o.printObjects(append(managedObjs, objs...))
	}
	if err := o.install(ctx, spoke, objs, managedObjs); err != nil {
		return err
	}
	if o.DryRun == cli.DryRunServer {
		return o.printObjects(append(managedObjs, objs...))
	}
	o.printInstalled(hub)
	if !o.Wait && !o.WaitAccepted {
		return nil
	}
	return o.wait(ctx, spoke, hub.client, cli.NewInspector(spoke, spokeCfg, cli.ImageFlagsFix))
}

// checkSpoke checks that the cluster of --context may join as --cluster-name
// (it is not another cluster already), and the standby hubs with that
// cluster's name, recording their values.
func (o *Options) checkSpoke(ctx context.Context, hub *hubCheck, spoke client.Client) error {
	localCluster := localClusterName(ctx, spoke, o.agentNamespace())
	if err := o.checkClusterName(ctx, hub.client, localCluster); err != nil {
		return err
	}
	if len(o.StandbyHubs) == 0 {
		return nil
	}
	checked, err := o.preflightHubs(ctx, o.StandbyHubs, 2, localCluster)
	if err != nil {
		return err
	}
	o.standby, err = o.standbyValues(checked, 2)
	return err
}

// render returns the objects join writes (objects) for the hub's API
// server, --force-internal-endpoint-lookup's when asked, and writes them to
// --output-file when given.
func (o *Options) render(ctx context.Context, hub *hubCheck) (objs, managedObjs []*unstructured.Unstructured, err error) {
	server := o.HubAPIServer
	if o.ForceInternalEndpointLookup {
		if server, err = internalEndpoint(ctx, hub.client); err != nil {
			return nil, nil, err
		}
	}
	if objs, managedObjs, err = o.objects(server, hub.ca); err != nil {
		return nil, nil, err
	}
	if o.OutputFile != "" {
		all := apply.Sort(append(slices.Clip(managedObjs), objs...))
		if err := cli.WriteManifestsFile("--output-file", o.OutputFile, all, cli.PrivateFileMode); err != nil {
			return nil, nil, err
		}
	}
	return objs, managedObjs, nil
}

// install applies the CRDs of hosted mode to the managed cluster and the
// agent to spoke, as a server dry run with --dry-run=server.
func (o *Options) install(ctx context.Context, spoke client.Client, objs, managedObjs []*unstructured.Unstructured) error {
	opts := apply.Options{DryRun: o.DryRun == cli.DryRunServer}
	if len(managedObjs) > 0 {
		if err := apply.Apply(ctx, o.managed.client, managedObjs, opts); err != nil {
			return fmt.Errorf("install the CRDs on the managed cluster at %s: %w", o.managed.server, err)
		}
	}
	if err := apply.Apply(ctx, spoke, objs, opts); err != nil {
		if o.hosted() {
			return fmt.Errorf("install the agent on the hosting cluster: %w", err)
		}
		return fmt.Errorf("install the agent on the managed cluster: %w", err)
	}
	return nil
}

// printInstalled says what was installed and how the hub accepts the cluster.
func (o *Options) printInstalled(hub *hubCheck) {
	if o.hosted() {
		fmt.Fprintf(o.Out, "Installed the Klusterlet operator and the Klusterlet of cluster %s, whose agent runs in namespace %s of the hosting cluster %s; it manages the cluster at %s and joins hub %s as %s.\n",
			o.ClusterName, o.agentNamespace(), o.contextName, o.managed.server, o.HubAPIServer, hub.user)
	} else {
		fmt.Fprintf(o.Out, "Installed the Klusterlet operator and the Klusterlet of cluster %s, whose agent runs in namespace %s; it joins hub %s as %s.\n",
			o.ClusterName, config.AgentNamespace, o.HubAPIServer, hub.user)
	}
	for i, h := range o.StandbyHubs {
		fmt.Fprintf(o.Out, "Standby hub %d: %s (Secret %s/%s); the agent registers there when the hubs before it have been lost.\n", i+2, h.APIServer, o.agentNamespace(), o.standby[i].Secret)
	}
	fmt.Fprintf(o.Out, "On the hub, accept the cluster with:\n\n    kubectl ocm accept --clusters %s\n\n", o.ClusterName)
}

// objects renders what join writes for a hub at server with CA ca: on the
// cluster of --context the Klusterlet operator, the agent's namespace, its
// Secrets and the Klusterlet, from which the operator installs the agent;
// in hosted mode also the CRDs for the managed cluster.
func (o *Options) objects(server string, ca []byte) (objs, managed []*unstructured.Unstructured, err error) {
	bootstrap, err := kubeconfig.ForTokenVia(server, o.caBundle(ca), o.ProxyURL, o.HubToken)
	if err != nil {
		return nil, nil, err
	}
	v := config.AgentValues{
		ClusterName:                 o.ClusterName,
		Image:                       o.Image,
		HubAPIServer:                server,
		BootstrapKubeconfig:         bootstrap,
		ExternalServerURLs:          o.ExternalServerURLs,
		ClientCertExpirationSeconds: o.ClientCertExpirationSeconds,
		StandbyHubs:                 o.standby,
		HubConnectionTimeoutSeconds: o.HubConnectionTimeoutSeconds,
		TLSProfile:                  o.tlsProfile,
		ManifestWorkWorkers:         o.ManifestWorkWorkers,
		AppliedWorkWorkers:          o.AppliedWorkWorkers,
		LeaderElection:              config.LeaderElection{Timings: o.LeaderElection.Timings},
		ReportHostingCluster:        o.ReportHostingCluster,
		ManagementClusterName:       o.ManagementClusterName,
	}
	if o.NetworkPolicy {
		v.NetworkPolicy = &config.AgentNetworkPolicy{MonitoringNamespace: o.NetworkPolicyMonitoringNamespace}
	}
	if o.RegistrationAuth != operatorv1.CSRAuthType {
		// csr is the agent's default: the Klusterlet records only a change.
		v.RegistrationAuth = o.RegistrationAuth
	}
	if o.AddonKubeClientRegistrationAuth != addonv1alpha1.KubeClientDriverCSR {
		// csr is the agent's default: the Klusterlet records only a change.
		v.AddonKubeClientRegistrationAuth = o.AddonKubeClientRegistrationAuth
		v.AddonTokenExpirationSeconds = o.AddonTokenExpirationSeconds
	}
	op := config.KlusterletOperatorValues{Image: o.Image, LeaderElection: config.LeaderElection{Timings: o.OperatorLeaderElection.Timings}}
	o.withValuesFile(&v, &op)
	if o.hosted() {
		v.Mode = string(operatorv1.InstallModeHosted)
		if o.Singleton {
			v.Mode = string(operatorv1.InstallModeSingletonHosted)
		}
		if o.managed != nil {
			v.ManagedKubeconfig = o.managed.kubeconfig
		}
		return o.withPullSecret(config.KlusterletInstallObjects(op, v, true))
	}
	v.Mode = string(operatorv1.InstallModeDefault)
	if o.Singleton {
		v.Mode = string(operatorv1.InstallModeSingleton)
	}
	return o.withPullSecret(config.KlusterletInstallObjects(op, v, false))
}

// withPullSecret adds to objs, what join writes on the cluster of
// --context, the image pull Secret of --image-pull-credentials next to the
// Klusterlet operator, which applies in install order before the
// operator's Deployment.
func (o *Options) withPullSecret(objs, managed []*unstructured.Unstructured, err error) ([]*unstructured.Unstructured, []*unstructured.Unstructured, error) {
	if err != nil {
		return nil, nil, err
	}
	if objs, err = pullsecret.Append(objs, operatorv1.OperatorNamespace, o.pullCredentials); err != nil {
		return nil, nil, err
	}
	return objs, managed, nil
}

// localClusterName returns the cluster name of the hub credential in
// namespace, empty when there is none.
func localClusterName(ctx context.Context, c client.Client, namespace string) string {
	s := &corev1.Secret{}
	key := types.NamespacedName{Namespace: namespace, Name: operatorv1.HubKubeConfigSecret}
	if err := c.Get(ctx, key, s); err != nil {
		return ""
	}
	return string(s.Data[kubeconfig.ClusterNameKey])
}

// internalEndpoint reads the hub's address from ConfigMap
// kube-public/cluster-info.
func internalEndpoint(ctx context.Context, hub client.Client) (string, error) {
	server, err := clusterinfo.ReadServer(ctx, hub)
	if err != nil {
		return "", fmt.Errorf("--force-internal-endpoint-lookup: %w; drop the flag and pass the address with --hub-apiserver", err)
	}
	return server, nil
}

// printObjects prints the objects of a dry run in install order: their
// manifests with -o yaml or json, else one line per object naming it
// (kubectl's -o name) and, without -o, what the dry run did.
func (o *Options) printObjects(objs []*unstructured.Unstructured) error {
	objs = apply.Sort(objs)
	if format := cli.Output(o.PrintFlags); format == "yaml" || format == "json" {
		return cli.PrintManifests(o.Out, objs, format)
	}
	o.PrintFlags.NamePrintFlags.Operation = "applied (" + o.DryRun + " dry run)"
	printer, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := printer.PrintObj(obj, o.Out); err != nil {
			return err
		}
	}
	return nil
}
