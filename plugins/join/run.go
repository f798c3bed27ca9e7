package join

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Run checks the hub, installs the agent (or prints it with --dry-run) and,
// with --wait, waits until the cluster has joined.
func (o *Options) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
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
	spoke, _, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	if err := o.checkClusterName(ctx, hub.client, localClusterName(ctx, spoke, o.agentNamespace())); err != nil {
		return err
	}
	server := o.HubAPIServer
	if o.ForceInternalEndpointLookup {
		if server, err = internalEndpoint(ctx, hub.client); err != nil {
			return err
		}
	}
	objs, managedObjs, err := o.objects(server, hub.ca)
	if err != nil {
		return err
	}
	if o.DryRun {
		return printObjects(o.Out, append(managedObjs, objs...), o.Output)
	}
	if len(managedObjs) > 0 {
		if err := apply.Apply(ctx, o.managed.client, managedObjs, apply.Options{}); err != nil {
			return fmt.Errorf("install the CRDs on the managed cluster at %s: %w", o.managed.server, err)
		}
	}
	if err := apply.Apply(ctx, spoke, objs, apply.Options{}); err != nil {
		if o.hosted() {
			return fmt.Errorf("install the agent on the hosting cluster: %w", err)
		}
		return fmt.Errorf("install the agent on the managed cluster: %w", err)
	}
	if o.hosted() {
		fmt.Fprintf(o.Out, "Installed the agent of cluster %s in namespace %s of the hosting cluster %s; it manages the cluster at %s and joins hub %s as %s.\n",
			o.ClusterName, o.agentNamespace(), o.contextName, o.managed.server, o.HubAPIServer, hub.user)
	} else {
		fmt.Fprintf(o.Out, "Installed the agent of cluster %s in namespace %s; it joins hub %s as %s.\n",
			o.ClusterName, config.AgentNamespace, o.HubAPIServer, hub.user)
	}
	fmt.Fprintf(o.Out, "On the hub, accept the cluster with:\n\n    kubectl ocm accept --clusters %s\n\n", o.ClusterName)
	if !o.Wait {
		return nil
	}
	return o.wait(ctx, spoke, hub.client)
}

// objects renders the agent manifests for a hub at server with CA ca: those
// for the cluster of --context and, in hosted mode, those for the managed
// cluster.
func (o *Options) objects(server string, ca []byte) (objs, managed []*unstructured.Unstructured, err error) {
	bootstrap, err := kubeconfig.ForToken(server, ca, o.HubToken)
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
	}
	if o.hosted() {
		v.Mode = string(operatorv1.InstallModeHosted)
		if o.Singleton {
			v.Mode = string(operatorv1.InstallModeSingletonHosted)
		}
		if o.managed != nil {
			v.ManagedKubeconfig = o.managed.kubeconfig
		}
		return config.HostedAgentObjects(v)
	}
	v.Mode = string(operatorv1.InstallModeDefault)
	if o.Singleton {
		v.Mode = string(operatorv1.InstallModeSingleton)
	}
	objs, err = config.AgentObjects(v)
	return objs, nil, err
}

// localClusterName returns the cluster name of the hub credential in
// namespace, empty when there is none.
func localClusterName(ctx context.Context, c client.Client, namespace string) string {
	s := &corev1.Secret{}
	key := types.NamespacedName{Namespace: namespace, Name: operatorv1.HubKubeConfigSecret}
	if err := c.Get(ctx, key, s); err != nil {
		return ""
	}
	return string(s.Data["cluster-name"])
}

// internalEndpoint reads the hub's address from ConfigMap
// kube-public/cluster-info (key kubeconfig).
func internalEndpoint(ctx context.Context, hub client.Client) (string, error) {
	cm := &corev1.ConfigMap{}
	if err := hub.Get(ctx, types.NamespacedName{Namespace: "kube-public", Name: "cluster-info"}, cm); err != nil {
		return "", fmt.Errorf("--force-internal-endpoint-lookup: cannot read ConfigMap kube-public/cluster-info on the hub: %w; drop the flag and pass the address with --hub-apiserver", err)
	}
	cfg, err := clientcmd.Load([]byte(cm.Data["kubeconfig"]))
	if err != nil {
		return "", fmt.Errorf("--force-internal-endpoint-lookup: ConfigMap kube-public/cluster-info holds no kubeconfig: %w", err)
	}
	for _, c := range cfg.Clusters {
		if c.Server != "" {
			return c.Server, nil
		}
	}
	return "", fmt.Errorf("--force-internal-endpoint-lookup: ConfigMap kube-public/cluster-info names no server; drop the flag")
}

// printObjects writes objs as a YAML stream or a JSON List.
func printObjects(out io.Writer, objs []*unstructured.Unstructured, format string) error {
	if format == "json" {
		items := make([]any, 0, len(objs))
		for _, o := range objs {
			items = append(items, o.Object)
		}
		data, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "  ")
		if err != nil {
			return fmt.Errorf("encode objects: %w", err)
		}
		_, err = fmt.Fprintln(out, string(data))
		return err
	}
	for _, o := range apply.Sort(objs) {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			return fmt.Errorf("encode %s: %w", apply.Describe(o), err)
		}
		if _, err := fmt.Fprintf(out, "---\n%s", data); err != nil {
			return err
		}
	}
	return nil
}
