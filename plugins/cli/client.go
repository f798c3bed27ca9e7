package cli

import (
	"fmt"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
)

// NewClient returns a controller-runtime client, using the project's scheme,
// and its REST configuration, for the cluster the kubectl flags in getter
// select (--kubeconfig, --context, --as, ...).
func NewClient(getter genericclioptions.RESTClientGetter) (client.Client, *rest.Config, error) {
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("create client for %s: %w", cfg.Host, err)
	}
	return c, cfg, nil
}

// Namespace returns the namespace the kubectl flags in getter select: -n,
// else the current context's, else "default". explicit says it was given
// with -n (or --namespace).
func Namespace(getter genericclioptions.RESTClientGetter) (ns string, explicit bool, err error) {
	ns, explicit, err = getter.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", false, fmt.Errorf("read the namespace from the kubeconfig: %w", err)
	}
	return ns, explicit, nil
}
