package credentials

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	clientauthv1 "k8s.io/client-go/pkg/apis/clientauthentication/v1"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
)

// ExecInfoEnv is the environment variable in which client-go hands an exec
// plugin its ExecCredential request.
const ExecInfoEnv = "KUBERNETES_EXEC_INFO"

// inClusterTokenFile is where a Pod's ServiceAccount token is mounted.
const inClusterTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// Options holds what `kubectl ocm credentials` reads.
type Options struct {
	genericiooptions.IOStreams
	getter genericclioptions.RESTClientGetter

	// ExecInfo is the ExecCredential request of KUBERNETES_EXEC_INFO, empty
	// when the plugin does not run under client-go.
	ExecInfo string
	// request is ExecInfo parsed, nil without ExecInfo; cluster is the
	// server the credential is asked for, its spec.cluster (the exec
	// section's provideClusterInfo), nil without.
	request *clientauthv1.ExecCredential
	cluster *clientauthv1.Cluster
	// InClusterTokenFile is the ServiceAccount token file used when no
	// kubeconfig is found.
	InClusterTokenFile string
	// getenv reads the environment.
	getenv func(string) string
}

// NewOptions returns Options for the hub credential getter selects,
// writing to streams.
func NewOptions(getter genericclioptions.RESTClientGetter, streams genericiooptions.IOStreams) *Options {
	return &Options{IOStreams: streams, getter: getter, InClusterTokenFile: inClusterTokenFile, getenv: os.Getenv}
}

// Complete reads and parses KUBERNETES_EXEC_INFO, keeping the server its
// request names.
func (o *Options) Complete(*cobra.Command, []string) error {
	o.ExecInfo = o.getenv(ExecInfoEnv)
	if o.ExecInfo == "" {
		return nil
	}
	var req clientauthv1.ExecCredential
	if err := json.Unmarshal([]byte(o.ExecInfo), &req); err != nil {
		return fmt.Errorf("%s is not an ExecCredential: %w", ExecInfoEnv, err)
	}
	o.request, o.cluster = &req, req.Spec.Cluster
	return nil
}

// Validate checks that the ExecCredential request, when there is one, asks
// for the version the plugin prints.
func (o *Options) Validate() error {
	req := o.request
	if req == nil {
		return nil
	}
	if req.Kind != "ExecCredential" {
		return fmt.Errorf("%s holds a %q, not an ExecCredential", ExecInfoEnv, req.Kind)
	}
	if req.APIVersion != hubtunnel.ExecAPIVersion {
		return fmt.Errorf("the kubeconfig's exec plugin asks for an ExecCredential of apiVersion %q; kubectl-ocm credentials prints %s: set apiVersion: %s in the user's exec section",
			req.APIVersion, hubtunnel.ExecAPIVersion, hubtunnel.ExecAPIVersion)
	}
	return nil
}
