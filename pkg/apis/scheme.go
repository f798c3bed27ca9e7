// Package apis holds the one runtime.Scheme of kubectl-ocm: Kubernetes' built-in
// types, CustomResourceDefinitions, every Open Cluster Management API group
// this project serves, its own rollout.kubectl-ocm.io and work.kubectl-ocm.io, the Cluster
// Inventory API's ClusterProfile and Cluster API's Cluster (which the
// cluster importer reads). Every client and manager in the project uses it.
package apis

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	capiv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	addonv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	multiclusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/multicluster/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	rolloutv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/rollout/v1alpha1"
	payloadv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/payload/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	workv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1alpha1"
)

// Scheme knows every type the project reads or writes.
var Scheme = runtime.NewScheme()

// addToSchemeFuncs lists the builders registered into Scheme.
var addToSchemeFuncs = []func(*runtime.Scheme) error{
	clientgoscheme.AddToScheme,
	apiextensionsv1.AddToScheme,
	clusterv1.AddToScheme,
	clusterv1alpha1.AddToScheme,
	clusterv1beta1.AddToScheme,
	clusterv1beta2.AddToScheme,
	workv1.AddToScheme,
	workv1alpha1.AddToScheme,
	addonv1alpha1.AddToScheme,
	addonv1beta1.AddToScheme,
	operatorv1.AddToScheme,
	multiclusterv1alpha1.AddToScheme,
	rolloutv1alpha1.AddToScheme,
	payloadv1alpha1.AddToScheme,
	capiv1.AddToScheme,
}

// AddToScheme adds every type the project uses to s.
func AddToScheme(s *runtime.Scheme) error {
	for _, f := range addToSchemeFuncs {
		if err := f(s); err != nil {
			return err
		}
	}
	return nil
}

func init() {
	utilruntime.Must(AddToScheme(Scheme))
}
