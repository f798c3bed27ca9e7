package kubeconfig

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReadManagedCluster reads the Secret ref on the hosting cluster and returns
// the client configuration of the managed cluster's kubeconfig in it. Hosted
// agents (registration and work) reach their managed cluster this way.
func ReadManagedCluster(ctx context.Context, r client.Reader, ref types.NamespacedName) (*rest.Config, error) {
	s := &corev1.Secret{}
	if err := r.Get(ctx, ref, s); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s does not exist on the hosting cluster: run `kubectl ocm join --mode hosted --managed-cluster-kubeconfig FILE` again", ref)
		}
		return nil, fmt.Errorf("read Secret %s with the managed cluster's kubeconfig: %w", ref, err)
	}
	return managedClusterConfig(s.Data, ref.String())
}

// managedClusterConfig returns the client configuration of the kubeconfig
// under KubeconfigKey in data, the contents of the Secret named ref (for
// messages), read by the rule of FromSecret.
func managedClusterConfig(data map[string][]byte, ref string) (*rest.Config, error) {
	info, err := FromSecret(data)
	if err != nil {
		return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s: %w", ref, err)
	}
	cfg, err := info.RESTConfig()
	if err != nil {
		return nil, fmt.Errorf("the managed cluster's kubeconfig Secret %s: %w", ref, err)
	}
	return cfg, nil
}
