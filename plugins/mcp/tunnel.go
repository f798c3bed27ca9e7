package mcp

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

// clusterConfig returns the client configuration of cluster through the
// hub's tunnel, with the caller's identity, after checking that the hub
// knows the cluster.
func (s *server) clusterConfig(ctx context.Context, req *mcp.CallToolRequest, cluster string) (*rest.Config, error) {
	if cluster == "" {
		return nil, errors.New("cluster is empty: name a managed cluster (fleet_overview lists them)")
	}
	cfg, err := s.hubConfig(req)
	if err != nil {
		return nil, err
	}
	c, err := s.hub(req)
	if err != nil {
		return nil, err
	}
	// A caller who may not read ManagedClusters may still hold the proxy
	// right: only a cluster the hub says does not exist stops here.
	if err := c.Get(ctx, client.ObjectKey{Name: cluster}, &clusterv1.ManagedCluster{}); apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("cluster %q is not a managed cluster of the hub; fleet_overview lists them", cluster)
	}
	if cfg.Host, err = hubtunnel.ServerURL(cfg.Host, cluster); err != nil {
		return nil, fmt.Errorf("the hub's server: %w", err)
	}
	return cfg, nil
}

// clusterError names what a failed request through the tunnel means.
func clusterError(cluster, what string, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s on cluster %s: no answer within the call's timeout (kubectl ocm mcp --call-timeout): %w", what, cluster, err)
	case unreachable(err):
		// The client dials the hub only: a cluster out of reach is the
		// hub's answer (503), not a failed dial.
		return fmt.Errorf("%s on cluster %s: the hub cannot be reached: %w; %s", what, cluster, err, checkKubeconfig)
	}
	return fmt.Errorf("%s on cluster %s: %w", what, cluster, err)
}

// mapping resolves resource, as kubectl names it (a plural, singular, kind
// or short name, optionally with .group), with the cluster's discovery.
func mapping(ctx context.Context, cfg *rest.Config, cluster, resource string) (*meta.RESTMapping, error) {
	if resource == "" {
		return nil, errors.New("resource is empty: name one as kubectl does, such as pods or deployments.apps")
	}
	mapper, err := configGetter{cfg: cfg}.ToRESTMapper()
	if err != nil {
		return nil, err
	}
	gvr, err := mapper.ResourceFor(schema.ParseGroupResource(resource).WithVersion(""))
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("cluster %s serves no resource %q: name it as kubectl api-resources lists it", cluster, resource)
		}
		// Discovery drops the Status of a refusal (the hub's 403, a
		// cluster without a tunnel): ask again for it.
		if rc, rerr := unversionedClient(cfg); rerr == nil {
			if perr := rc.Get().AbsPath("/api").Do(ctx).Error(); perr != nil {
				err = perr
			}
		}
		return nil, clusterError(cluster, "discover resource "+resource, err)
	}
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return nil, clusterError(cluster, "discover resource "+resource, err)
	}
	return mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
}

// resourcePath is the API path of m's objects in namespace.
func resourcePath(m *meta.RESTMapping, namespace string) []string {
	p := []string{"/apis", m.Resource.Group, m.Resource.Version}
	if m.Resource.Group == "" {
		p = []string{"/api", m.Resource.Version}
	}
	if namespace != "" && m.Scope.Name() == meta.RESTScopeNameNamespace {
		p = append(p, "namespaces", namespace)
	}
	return append(p, m.Resource.Resource)
}

// gvrString names a resource as resource.group/version.
func gvrString(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource + "/" + gvr.Version
	}
	return gvr.Resource + "." + gvr.Group + "/" + gvr.Version
}

// unversionedClient returns a REST client of cfg for requests by path.
func unversionedClient(cfg *rest.Config) (*rest.RESTClient, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion = &schema.GroupVersion{}
	cfg.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	return rest.UnversionedRESTClientFor(cfg)
}
