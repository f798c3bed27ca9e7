package join

import (
	"context"
	"fmt"
	"slices"
	"strings"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// managedCheck is what the hosted-mode preflight learned about the managed
// cluster.
type managedCheck struct {
	// kubeconfig is --managed-cluster-kubeconfig reduced to its current
	// context, with every file it names embedded: what the agent gets.
	kubeconfig []byte
	// server is the managed cluster's API server URL.
	server string
	// client talks to the managed cluster with that kubeconfig.
	client client.Client
}

// loadManagedKubeconfig reads file, keeps its current context only and
// embeds the files it names (CA, client certificate and key, token), so that
// it works from a Secret. It returns the flattened kubeconfig and its client
// configuration.
func loadManagedKubeconfig(file string) ([]byte, *rest.Config, error) {
	const fix = "pass a kubeconfig file whose current context reaches the managed cluster"
	kc, err := clientcmd.LoadFromFile(file)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot load --managed-cluster-kubeconfig %s: %v; %s", file, err, fix)
	}
	if kc.CurrentContext == "" {
		return nil, nil, fmt.Errorf("--managed-cluster-kubeconfig %s has no current context; set one with `kubectl config use-context --kubeconfig %s NAME`", file, file)
	}
	if err := clientcmdapi.MinifyConfig(kc); err != nil {
		return nil, nil, fmt.Errorf("--managed-cluster-kubeconfig %s: %v; %s", file, err, fix)
	}
	if err := clientcmdapi.FlattenConfig(kc); err != nil {
		return nil, nil, fmt.Errorf("--managed-cluster-kubeconfig %s names a file that cannot be read: %v; %s", file, err, fix)
	}
	for name, u := range kc.AuthInfos {
		if u.Exec != nil || u.AuthProvider != nil {
			return nil, nil, fmt.Errorf("--managed-cluster-kubeconfig %s: user %s authenticates with an exec or auth-provider plugin, which the agent cannot run; use a client certificate or a token", file, name)
		}
	}
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, nil, fmt.Errorf("encode --managed-cluster-kubeconfig %s: %w", file, err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return nil, nil, fmt.Errorf("--managed-cluster-kubeconfig %s is not usable: %v; %s", file, err, fix)
	}
	return data, cfg, nil
}

// preflightManaged checks, in hosted mode, that --managed-cluster-kubeconfig
// loads, that the managed cluster answers with it, and that its identity may
// install the managed-cluster CRDs. Each error is one line naming the cause
// and the fix.
func (o *Options) preflightManaged(ctx context.Context) (*managedCheck, error) {
	data, cfg, err := loadManagedKubeconfig(o.ManagedClusterKubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = preflightTimeout
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		return nil, fmt.Errorf("the managed cluster at %s (--managed-cluster-kubeconfig %s) does not answer: %v; check the file's current context and that this machine can reach that server", cfg.Host, o.ManagedClusterKubeconfig, err)
	}
	sar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions", Verb: "create"},
	}}
	if err := c.Create(ctx, sar); err != nil {
		if apierrors.IsUnauthorized(err) {
			return nil, fmt.Errorf("the managed cluster at %s rejects the credentials of --managed-cluster-kubeconfig %s (wrong or expired); pass a current kubeconfig for it", cfg.Host, o.ManagedClusterKubeconfig)
		}
		return nil, fmt.Errorf("the managed cluster at %s (--managed-cluster-kubeconfig %s) does not answer: %v; check the file's current context and that this machine can reach that server", cfg.Host, o.ManagedClusterKubeconfig, err)
	}
	if !sar.Status.Allowed {
		return nil, fmt.Errorf("the identity of --managed-cluster-kubeconfig %s may not create CustomResourceDefinitions on the managed cluster at %s; use a kubeconfig with cluster-admin rights there", o.ManagedClusterKubeconfig, cfg.Host)
	}
	return &managedCheck{kubeconfig: data, server: cfg.Host, client: c}, nil
}

// noteManagedObjects says on stderr which printed objects belong on the
// managed cluster when a dry run prints the manifests of both clusters of
// hosted mode as one stream, which kubectl would apply to one cluster.
func (o *Options) noteManagedObjects(managed []*unstructured.Unstructured) {
	if len(managed) == 0 || !slices.Contains(cli.ManifestFormats, cli.Output(o.PrintFlags)) {
		return
	}
	names := make([]string, 0, len(managed))
	for _, m := range managed {
		names = append(names, apply.Describe(m))
	}
	fmt.Fprintf(o.ErrOut, "These objects belong on the managed cluster, the others on the hosting cluster %s: %s.\n", o.contextName, strings.Join(names, ", "))
}

// hosted reports whether the agent runs on a hosting cluster.
func (o *Options) hosted() bool { return o.Mode == ModeHosted }

// agentNamespace is the agent's namespace on the cluster of --context.
func (o *Options) agentNamespace() string {
	if o.hosted() {
		return config.HostedKlusterletName(o.ClusterName)
	}
	return config.AgentNamespace
}

// klusterletName names the Klusterlet on the cluster of --context.
func (o *Options) klusterletName() string {
	if o.hosted() {
		return config.HostedKlusterletName(o.ClusterName)
	}
	return operatorv1.KlusterletName
}

// agentDeployment names the agent's Deployment on the cluster of --context.
func (o *Options) agentDeployment() string {
	if o.hosted() {
		return config.HostedAgentDeployment(o.ClusterName)
	}
	return "klusterlet-agent"
}
