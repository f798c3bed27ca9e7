package join

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/config/valuesfile"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// klusterletValuesFileFlag is clusteradm's name of --values-file.
const klusterletValuesFileFlag = "klusterlet-values-file"

// completeValuesFile reads the klusterlet chart's values of --values-file,
// when given, and fills in from them each flag not given on the command
// line; the values no flag has (the operator's Pod, the agent's scheduling
// and priority class, the work agent's limits) stay in o.values for
// withValuesFile.
func (o *Options) completeValuesFile(cmd *cobra.Command) error {
	fs := cmd.Flags()
	flag, err := valuesfile.Given(fs, klusterletValuesFileFlag)
	if err != nil || flag == "" || o.AddHub {
		// --add-hub refuses the flag in Validate.
		return err
	}
	k, err := valuesfile.ReadKlusterlet(flag, o.ValuesFile)
	if err != nil {
		return err
	}
	o.values = k
	if !fs.Changed("image") {
		valuesfile.Set(fs, "image-registry", &o.ImageRegistry, k.Images.Registry)
		valuesfile.Set(fs, "image", &o.Image, k.Images.Image(o.ImageRegistry))
	}
	s := &k.Klusterlet
	valuesfile.Set(fs, "cluster-name", &o.ClusterName, s.ClusterName)
	valuesfile.Set(fs, "singleton", &o.Singleton, s.Mode == string(operatorv1.InstallModeSingleton))
	urls := make([]string, 0, len(s.ExternalServerURLs))
	for _, u := range s.ExternalServerURLs {
		urls = append(urls, u.URL)
	}
	valuesfile.SetSlice(fs, "external-server-urls", &o.ExternalServerURLs, urls)
	if np := s.NetworkPolicyConfiguration; np != nil && (!fs.Changed("network-policy") || o.NetworkPolicy) {
		valuesfile.Set(fs, "network-policy", &o.NetworkPolicy, true)
		valuesfile.Set(fs, "network-policy-monitoring-namespace", &o.NetworkPolicyMonitoringNamespace, np.MonitoringNamespace)
	}
	rc := &s.RegistrationConfiguration
	valuesfile.Set(fs, "client-cert-expiration-seconds", &o.ClientCertExpirationSeconds, rc.ClientCertExpirationSeconds)
	valuesfile.Set(fs, "registration-auth", &o.RegistrationAuth, rc.RegistrationDriver.AuthType)
	valuesfile.Set(fs, "addon-kubeclient-registration-auth", &o.AddonKubeClientRegistrationAuth, rc.AddOnKubeClientRegistrationDriver.AuthType)
	valuesfile.Set(fs, "addon-token-expiration-seconds", &o.AddonTokenExpirationSeconds, rc.AddOnKubeClientRegistrationDriver.Token.ExpirationSeconds)
	valuesfile.Set(fs, "tls-min-version", &o.TLSMinVersion, s.TLSProfile.MinTLSVersion)
	valuesfile.SetSlice(fs, "tls-cipher-suites", &o.TLSCipherSuites, s.TLSProfile.CipherSuites)
	w := &s.WorkConfiguration.Workers
	valuesfile.Set(fs, "manifestwork-agent-workers", &o.ManifestWorkWorkers, w.ManifestWorks)
	valuesfile.Set(fs, "appliedmanifestwork-finalize-controller-workers", &o.AppliedWorkWorkers, w.AppliedManifestWorkFinalize)
	return nil
}

// withValuesFile sets in the agent's values v and the operator's op the
// values of --values-file that no flag has.
func (o *Options) withValuesFile(v *config.AgentValues, op *config.KlusterletOperatorValues) {
	if o.values == nil {
		return
	}
	o.values.Agent(v)
	op.OperatorPod = o.values.OperatorPod()
	op.EnforceSharedPodSecurity = o.values.PodSecurity.EnforceSharedNamespaces
}

// validateValuesFile refuses the values of --values-file that the install
// mode cannot apply: the Klusterlet of Hosted mode carries no placement,
// resources or priority class of the agent.
func (o *Options) validateValuesFile() []error {
	if o.values == nil || o.Mode != ModeHosted {
		return nil
	}
	p := o.values.Pod
	if len(p.NodeSelector) > 0 || len(p.Tolerations) > 0 || p.Resources != nil || p.PriorityClassName != "" {
		return []error{fmt.Errorf("--%s %s: nodeSelector, tolerations, resources and priorityClassName place the agent in Default and Singleton mode only; "+
			"with --mode hosted remove them (set the operator's Pod under operator instead)", valuesfile.Flag, o.ValuesFile)}
	}
	return nil
}

// Objects returns what join writes for a hub at server with CA ca (the
// objects --dry-run=client prints), from the completed and validated
// options, without contacting a cluster; the test of the klusterlet Helm
// chart compares it with the chart's for one values file.
func (o *Options) Objects(server string, ca []byte) ([]*unstructured.Unstructured, error) {
	objs, _, err := o.objects(server, ca)
	return objs, err
}
