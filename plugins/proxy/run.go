package proxy

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// hubTimeout bounds the question whether the ManagedCluster exists.
const hubTimeout = 30 * time.Second

// Run writes the kubeconfig of o.Cluster through the hub, after checking
// that the ManagedCluster exists, and then, with o.Check, reports on stderr
// whether the cluster answers through it.
func (o *KubeconfigOptions) Run(ctx context.Context) error {
	hub, err := HubConfig(o.flags)
	if err != nil {
		return err
	}
	cfg, err := Kubeconfig(hub, o.Cluster, o.Namespace)
	if err != nil {
		return err
	}
	if err := o.checkCluster(ctx); err != nil {
		return err
	}
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("encode the kubeconfig: %w", err)
	}
	if o.OutputFile == "" {
		if _, err := o.Out.Write(data); err != nil {
			return err
		}
	} else {
		if err := cli.WriteFile("--output-file", o.OutputFile, data, cli.PrivateFileMode); err != nil {
			return err
		}
		name := ContextName(o.Cluster)
		fmt.Fprintf(o.Out, "Wrote %s: its context %s reaches cluster %s through the hub, at %s\n", o.OutputFile, name, o.Cluster, cfg.Clusters[name].Server)
	}
	if o.Check {
		fmt.Fprintln(o.ErrOut, o.probe(ctx, cfg))
	}
	return nil
}

// checkCluster fails unless ManagedCluster o.Cluster exists on the hub. A
// hub user who may not read ManagedClusters (a proxy grant needs no more)
// gets a warning instead: the check through the tunnel still tells.
func (o *KubeconfigOptions) checkCluster(ctx context.Context) error {
	c, restCfg, err := cli.NewClient(ctx, o.flags)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, hubTimeout)
	defer cancel()
	switch err := c.Get(ctx, client.ObjectKey{Name: o.Cluster}, &clusterv1.ManagedCluster{}); {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("managed cluster %q does not exist on the hub %s: list the managed clusters with `kubectl ocm get clusters`", o.Cluster, restCfg.Host)
	case meta.IsNoMatchError(err):
		return fmt.Errorf("%s is no hub: it has no ManagedCluster API (%s); select the hub with --context", restCfg.Host, clusterv1.GroupVersion)
	case apierrors.IsForbidden(err):
		fmt.Fprintf(o.ErrOut, "Warning: cannot check that managed cluster %q exists, as you may not get managedclusters on the hub; writing the kubeconfig anyway\n", o.Cluster)
		return nil
	default:
		return fmt.Errorf("check that managed cluster %q exists on the hub %s: %w", o.Cluster, restCfg.Host, err)
	}
}
