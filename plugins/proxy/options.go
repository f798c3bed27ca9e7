package proxy

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// KubeconfigOptions holds the arguments and flags of `kubectl ocm proxy
// kubeconfig`.
type KubeconfigOptions struct {
	genericiooptions.IOStreams
	flags *genericclioptions.ConfigFlags

	// Cluster is the managed cluster to reach (the argument).
	Cluster string
	// Namespace is the namespace of the kubeconfig's context: the value of
	// -n, empty when -n is not given.
	Namespace string
	// OutputFile is the file to write the kubeconfig to (--output-file);
	// empty writes it to Out.
	OutputFile string
	// Check asks the cluster for its version through the kubeconfig
	// (--check).
	Check bool
}

// NewKubeconfigOptions returns KubeconfigOptions for the hub and hub user
// flags select, writing to streams.
func NewKubeconfigOptions(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *KubeconfigOptions {
	return &KubeconfigOptions{IOStreams: streams, flags: flags, Check: true}
}

// Complete takes the cluster from args and the namespace from -n.
func (o *KubeconfigOptions) Complete(_ *cobra.Command, args []string) error {
	o.Cluster = cli.FirstArg(args)
	ns, explicit, err := cli.Namespace(o.flags)
	if err != nil {
		return err
	}
	if explicit {
		o.Namespace = ns
	}
	return nil
}

// Validate checks the cluster name and the namespace.
func (o *KubeconfigOptions) Validate() error {
	if o.Cluster == "" {
		return fmt.Errorf("name the managed cluster to reach: kubectl ocm proxy kubeconfig CLUSTER (list them with `kubectl ocm get clusters`)")
	}
	if msgs := validation.IsDNS1123Label(o.Cluster); len(msgs) > 0 {
		return fmt.Errorf("%q is not a managed cluster name: %s; list the clusters with `kubectl ocm get clusters`", o.Cluster, msgs[0])
	}
	if o.Namespace != "" {
		if msgs := validation.IsDNS1123Label(o.Namespace); len(msgs) > 0 {
			return fmt.Errorf("-n %q is not a namespace name: %s", o.Namespace, msgs[0])
		}
	}
	return nil
}
