package cli

import (
	"context"
	"fmt"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
)

// Client-side rate limits of the commands: a fleet command makes a few
// requests per cluster, and client-go's defaults (5 per second, bursts of
// 10) would make one over hundreds of clusters wait on the client for
// minutes. The API server's priority and fairness still protects the hub.
const (
	clientQPS   = 50
	clientBurst = 100
)

// NewClient returns a controller-runtime client, using the project's scheme,
// and its REST configuration, for the cluster the kubectl flags in getter
// select (--kubeconfig, --context, --as, ...), with the commands' rate
// limits unless the configuration sets its own. Its creates, updates and
// patches carry the field manager of ctx's verb (see FieldManagerFrom), and
// dryRun=All when ctx asks (WithServerDryRun).
func NewClient(ctx context.Context, getter genericclioptions.RESTClientGetter) (client.Client, *rest.Config, error) {
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg = rest.CopyConfig(cfg)
		cfg.QPS, cfg.Burst = clientQPS, clientBurst
	}
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("create client for %s: %w", cfg.Host, err)
	}
	return withContextDryRun(ctx, client.WithFieldOwner(c, FieldManagerFrom(ctx))), cfg, nil
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
