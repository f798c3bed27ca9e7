package hub

import (
	"github.com/spf13/cobra"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/config/valuesfile"
)

// clusterManagerValuesFileFlag is clusteradm's name of --values-file.
const clusterManagerValuesFileFlag = "cluster-manager-values-file"

// completeValuesFile reads the hub chart's values of --values-file, when
// given, and fills in from them each flag not given on the command line;
// the values no flag has (the operator's Pod, the hub controller's
// scheduling) stay in o.values for operatorValues.
func (o *InitOptions) completeValuesFile(cmd *cobra.Command) error {
	fs := cmd.Flags()
	flag, err := valuesfile.Given(fs, clusterManagerValuesFileFlag)
	if err != nil || flag == "" {
		return err
	}
	h, err := valuesfile.ReadHub(flag, o.ValuesFile)
	if err != nil {
		return err
	}
	o.values = h
	if !fs.Changed("image") {
		valuesfile.Set(fs, "image-registry", &o.ImageRegistry, h.Images.Registry)
		valuesfile.Set(fs, "image", &o.Image, h.Images.Image(o.ImageRegistry))
	}
	cm := &h.ClusterManager
	valuesfile.SetSlice(fs, "auto-approved-csr-identities", &o.AutoApprovedCSRIdentities, cm.RegistrationConfiguration.AutoApproveUsers)
	valuesfile.Set(fs, "tls-min-version", &o.TLSMinVersion, cm.TLSProfile.MinTLSVersion)
	valuesfile.SetSlice(fs, "tls-cipher-suites", &o.TLSCipherSuites, cm.TLSProfile.CipherSuites)
	valuesfile.Set(fs, "conversion-webhook-url", &o.ConversionWebhookURL, h.ConversionWebhookURL)
	if np := cm.NetworkPolicyConfiguration; np != nil && (!fs.Changed("network-policy") || o.NetworkPolicy) {
		valuesfile.Set(fs, "network-policy", &o.NetworkPolicy, true)
		valuesfile.Set(fs, "network-policy-monitoring-namespace", &o.NetworkPolicyMonitoringNamespace, np.MonitoringNamespace)
		valuesfile.Set(fs, "network-policy-apiserver-namespace", &o.NetworkPolicyAPIServerNamespace, np.APIServerNamespace)
	}
	return nil
}

// operatorValues are the values init renders the operator and the
// ClusterManager with: its flags, and the values of --values-file that no
// flag has.
func (o *InitOptions) operatorValues() config.HubOperatorValues {
	v := config.HubOperatorValues{
		Image: o.Image, AutoApproveUsers: o.AutoApprovedCSRIdentities, ConversionWebhookURL: o.ConversionWebhookURL,
		TLSProfile: o.TLSProfile, NetworkPolicy: o.networkPolicy(),
		LeaderElection:    config.LeaderElection{Timings: o.OperatorLeaderElection.Timings},
		HubLeaderElection: config.LeaderElection{Timings: o.LeaderElection.Timings},
	}
	if o.values != nil {
		v.OperatorPod = o.values.OperatorPod()
		v.HubController = o.values.Scheduling()
		v.EnforceSharedPodSecurity = o.values.PodSecurity.EnforceSharedNamespaces
	}
	return v
}
