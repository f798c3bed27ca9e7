package importer

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/config/valuesfile"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusterinfo"
	imp "github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
)

// render returns what the importer installs on cluster: the Klusterlet
// operator, the agent's namespace, its bootstrap kubeconfig, the Klusterlet
// and an image pull Secret, as the renderers make them, each over the
// earlier ones. render-auto gives the hub's image and pull Secret and a
// bootstrap kubeconfig for the hub with a fresh token of the cluster's own
// bootstrap identity; render-from-config-secret the values of the
// cluster's Secret cluster-import-config. The token is issued only when
// the bootstrap kubeconfig that wins is render-auto's.
func (r *Reconciler) render(ctx context.Context, cluster string) ([]*unstructured.Unstructured, error) {
	v := config.AgentValues{ClusterName: cluster, Image: r.opts.AgentImage, Mode: string(operatorv1.InstallModeDefault)}
	var op config.KlusterletOperatorValues
	var pull []byte
	autoBootstrap := false
	renderers := r.opts.Renderers
	if len(renderers) == 0 {
		renderers = []string{config.ImportRendererAuto}
	}
	for _, renderer := range renderers {
		switch renderer {
		case config.ImportRendererAuto:
			v.Image, v.BootstrapKubeconfig, autoBootstrap = r.opts.AgentImage, nil, true
			sec, err := pullsecret.Get(ctx, r.reader, r.opts.Namespace)
			if err != nil {
				return nil, err
			}
			if sec != nil {
				pull = sec.Data[corev1.DockerConfigJsonKey]
			}
		case config.ImportRendererFromConfigSecret:
			k, err := r.importConfig(ctx, cluster)
			if err != nil {
				return nil, err
			}
			p, err := k.Install(&v, &op)
			if err != nil {
				return nil, err
			}
			if p != nil {
				pull = p
			}
			if k.BootstrapHubKubeConfig != "" {
				autoBootstrap = false
			}
		}
	}
	if autoBootstrap {
		var err error
		if v.HubAPIServer, v.BootstrapKubeconfig, err = r.autoBootstrap(ctx, cluster); err != nil {
			return nil, err
		}
	}
	if len(v.BootstrapKubeconfig) == 0 {
		return nil, fmt.Errorf("the values of Secret %s/%s set no bootstrapHubKubeConfig, and no renderer %s comes after them to make one: set it, or list %s in the ClusterManager's importerConfiguration.renderers",
			cluster, imp.ConfigSecretName, config.ImportRendererAuto, config.ImportRendererAuto)
	}
	op.Image = v.Image
	objs, _, err := config.KlusterletInstallObjects(op, v, false)
	if err != nil {
		return nil, err
	}
	return pullsecret.Append(objs, operatorv1.OperatorNamespace, pull)
}

// importConfig reads and checks the klusterlet chart's values in Secret
// cluster-import-config of cluster's namespace. It reads the Secret from
// the API server: the importer may get that one Secret, not list Secrets.
func (r *Reconciler) importConfig(ctx context.Context, cluster string) (*valuesfile.Klusterlet, error) {
	sec := &corev1.Secret{}
	err := r.reader.Get(ctx, types.NamespacedName{Namespace: cluster, Name: imp.ConfigSecretName}, sec)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("there is no Secret %s/%s, which renderer %s reads: create it with key %s holding the klusterlet chart's values (kubectl ocm import --values-file writes it)",
			cluster, imp.ConfigSecretName, config.ImportRendererFromConfigSecret, imp.ConfigValuesKey)
	}
	if err != nil {
		return nil, fmt.Errorf("read Secret %s/%s: %w", cluster, imp.ConfigSecretName, err)
	}
	data, ok := sec.Data[imp.ConfigValuesKey]
	if !ok {
		return nil, fmt.Errorf("the import configuration %s/%s has no key %s: write the klusterlet chart's values there", cluster, imp.ConfigSecretName, imp.ConfigValuesKey)
	}
	return valuesfile.ParseImport(valuesfile.ImportValuesSource(cluster, imp.ConfigSecretName, imp.ConfigValuesKey), data, cluster)
}

// autoBootstrap returns render-auto's hub API server and bootstrap
// kubeconfig: the hub's address and CA, with a fresh token of the
// cluster's own bootstrap identity.
func (r *Reconciler) autoBootstrap(ctx context.Context, cluster string) (string, []byte, error) {
	server, err := r.hubAPIServer(ctx)
	if err != nil {
		return "", nil, err
	}
	ca, err := r.hubCA(ctx)
	if err != nil {
		return "", nil, err
	}
	token, err := config.BootstrapToken(ctx, r.Client, cluster, imp.BootstrapTokenDuration, FieldManager)
	if err != nil {
		return "", nil, err
	}
	boot, err := kubeconfig.ForToken(server, ca, token.Token)
	return server, boot, err
}

// hubAPIServer returns the hub's API server URL as clusters reach it:
// Options.HubAPIServer, or the server of ConfigMap kube-public/cluster-info.
func (r *Reconciler) hubAPIServer(ctx context.Context) (string, error) {
	if r.opts.HubAPIServer != "" {
		return r.opts.HubAPIServer, nil
	}
	server, err := clusterinfo.ReadServer(ctx, r.reader)
	if err != nil {
		return "", fmt.Errorf("%w; `kubectl ocm hub init` writes it, or set the importer's --hub-apiserver-url", err)
	}
	return server, nil
}

// hubCA returns the CA bundle the hub publishes (kube-public/kube-root-ca.crt).
func (r *Reconciler) hubCA(ctx context.Context) ([]byte, error) {
	ca, _, err := certs.ReadHubCABundle(ctx, r.reader)
	return ca, err
}
