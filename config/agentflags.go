package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/featuregate"
)

// agentFlag is one setting of the Klusterlet that the agent takes as a flag
// of its Deployment.
type agentFlag struct {
	// field is the Klusterlet field, under spec, as OCM names it.
	field string
	// flag is the agent's flag (controllers/cmd/ocm-controller/app/agent.go).
	flag string
	// values reads the flag's values from a Klusterlet's spec: none leaves
	// the flag out, so that the agent keeps its default; each value is a
	// flag of its own.
	values func(s *operatorv1.KlusterletSpec) []string
}

// agentFlags map the Klusterlet's settings to the agent's flags, in the
// order the Deployment passes them. AgentValuesFromKlusterlet reads them
// into AgentValues.KlusterletFlags, which config/agent/40-deployment.yaml
// passes to the agent: a new setting is one row here. The checks of a
// setting the agent cannot honor stay in AgentValuesFromKlusterlet.
var agentFlags = []agentFlag{
	{"registrationConfiguration.clientCertExpirationSeconds", "--client-cert-expiration-seconds", registration(func(rc *operatorv1.RegistrationConfiguration) []string {
		return nonZero(rc.ClientCertExpirationSeconds)
	})},
	{"registrationConfiguration.registrationDriver.authType", "--registration-auth", registration(func(rc *operatorv1.RegistrationConfiguration) []string {
		// csr is the agent's default.
		return unless(rc.RegistrationDriver.AuthType, operatorv1.CSRAuthType)
	})},
	{"registrationConfiguration.addOnKubeClientRegistrationDriver.authType", "--addon-kubeclient-registration-auth", addonDriver(func(d *operatorv1.AddOnRegistrationDriver) []string {
		return []string{d.AuthType}
	})},
	{"registrationConfiguration.addOnKubeClientRegistrationDriver.token.expirationSeconds", "--addon-token-expiration-seconds", addonDriver(func(d *operatorv1.AddOnRegistrationDriver) []string {
		if d.Token == nil {
			return nil
		}
		return nonZero(d.Token.ExpirationSeconds)
	})},
	{"externalServerURLs", "--spoke-external-server-urls", func(s *operatorv1.KlusterletSpec) []string {
		var urls []string
		for _, u := range s.ExternalServerURLs {
			urls = append(urls, u.URL)
		}
		return unless(strings.Join(urls, ","))
	}},
	{"registrationConfiguration.featureGates, workConfiguration.featureGates", "--feature-gates", func(s *operatorv1.KlusterletSpec) []string {
		return unless(agentFeatureGates(s).Flag())
	}},
	{"registrationConfiguration.bootstrapKubeConfigs.localSecretsConfig.kubeConfigSecrets", "--bootstrap-kubeconfig-secret", func(s *operatorv1.KlusterletSpec) []string {
		// bootstrap-hub-kubeconfig alone is the agent's default.
		if names := bootstrapSecrets(s); len(names) > 1 || (len(names) == 1 && names[0] != operatorv1.BootstrapHubKubeConfigSecret) {
			return names
		}
		return nil
	}},
	{"registrationConfiguration.bootstrapKubeConfigs.localSecretsConfig.hubConnectionTimeoutSeconds", "--hub-connection-timeout", func(s *operatorv1.KlusterletSpec) []string {
		// It matters only with a second hub to move to.
		if len(bootstrapSecrets(s)) < 2 {
			return nil
		}
		if t := s.RegistrationConfiguration.BootstrapKubeConfigs.LocalSecrets.HubConnectionTimeoutSeconds; t != 0 {
			return []string{fmt.Sprintf("%ds", t)}
		}
		return nil
	}},
	{"registrationConfiguration.clusterHealthCheckPeriod", "--cluster-healthcheck-period", registration(func(rc *operatorv1.RegistrationConfiguration) []string {
		return positive(rc.ClusterHealthCheckPeriod)
	})},
	{"registrationConfiguration.kubeAPIQPS", "--kube-api-qps", registration(func(rc *operatorv1.RegistrationConfiguration) []string { return nonZero(rc.KubeAPIQPS) })},
	{"registrationConfiguration.kubeAPIBurst", "--kube-api-burst", registration(func(rc *operatorv1.RegistrationConfiguration) []string { return nonZero(rc.KubeAPIBurst) })},
	{"workConfiguration.kubeAPIQPS", "--work-kube-api-qps", work(func(wc *operatorv1.WorkAgentConfiguration) []string { return nonZero(wc.KubeAPIQPS) })},
	{"workConfiguration.kubeAPIBurst", "--work-kube-api-burst", work(func(wc *operatorv1.WorkAgentConfiguration) []string { return nonZero(wc.KubeAPIBurst) })},
	{"workConfiguration.hubKubeAPIQPS", "--hub-kube-api-qps", work(func(wc *operatorv1.WorkAgentConfiguration) []string { return nonZero(wc.HubKubeAPIQPS) })},
	{"workConfiguration.hubKubeAPIBurst", "--hub-kube-api-burst", work(func(wc *operatorv1.WorkAgentConfiguration) []string { return nonZero(wc.HubKubeAPIBurst) })},
	{"workConfiguration.statusSyncInterval", "--status-sync-interval", work(func(wc *operatorv1.WorkAgentConfiguration) []string {
		return positive(wc.StatusSyncInterval)
	})},
	{"workConfiguration.appliedManifestWorkEvictionGracePeriod", "--appliedmanifestwork-eviction-grace-period", work(func(wc *operatorv1.WorkAgentConfiguration) []string {
		return positive(wc.AppliedManifestWorkEvictionGracePeriod)
	})},
	{"workConfiguration.workers.manifestWorks", "--manifestwork-agent-workers", work(func(wc *operatorv1.WorkAgentConfiguration) []string {
		if wc.Workers == nil {
			return nil
		}
		return nonZero(wc.Workers.ManifestWorks)
	})},
	{"workConfiguration.workers.appliedManifestWorkFinalize", "--appliedmanifestwork-finalize-controller-workers", work(func(wc *operatorv1.WorkAgentConfiguration) []string {
		if wc.Workers == nil {
			return nil
		}
		return nonZero(wc.Workers.AppliedManifestWorkFinalize)
	})},
}

// klusterletFlags returns the agent's flags that carry the settings of the
// Klusterlet spec s (agentFlags).
func klusterletFlags(s *operatorv1.KlusterletSpec) []string {
	flags := []string{}
	for _, f := range agentFlags {
		for _, v := range f.values(s) {
			flags = append(flags, f.flag+"="+v)
		}
	}
	return flags
}

// withKlusterletFlags returns v with KlusterletFlags set, when v was not
// read from a Klusterlet, from the Klusterlet v renders: the agent's
// Deployment takes its settings from a Klusterlet either way, so that
// what join renders is what the operator renders from the Klusterlet join
// writes.
func (v AgentValues) withKlusterletFlags() (AgentValues, error) {
	if v.KlusterletFlags != nil {
		return v, nil
	}
	objs, err := RenderFile(klusterletFile, v)
	if err != nil {
		return v, err
	}
	k := &operatorv1.Klusterlet{}
	if err := fromUnstructured(objs, k); err != nil {
		return v, fmt.Errorf("read back the Klusterlet of %s: %w", klusterletFile, err)
	}
	v.KlusterletFlags = klusterletFlags(&k.Spec)
	return v, nil
}

// klusterletFile is the agent manifest that renders the Klusterlet.
const klusterletFile = "agent/30-klusterlet.yaml"

// fromUnstructured decodes the one object of objs into obj, refusing
// fields obj's type does not have.
func fromUnstructured(objs []*unstructured.Unstructured, obj any) error {
	if len(objs) != 1 {
		return fmt.Errorf("%d objects rendered, want 1", len(objs))
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(objs[0].Object, obj, true)
}

// agentFeatureGates are the agent's feature gates that the featureGates of
// s's registrationConfiguration and workConfiguration set.
func agentFeatureGates(s *operatorv1.KlusterletSpec) featuregate.Set {
	gates, _ := featuregate.FromSpec(featuregate.Agent, registrationGates(s), workGates(s))
	return gates
}

func registrationGates(s *operatorv1.KlusterletSpec) []operatorv1.FeatureGate {
	if s.RegistrationConfiguration == nil {
		return nil
	}
	return s.RegistrationConfiguration.FeatureGates
}

func workGates(s *operatorv1.KlusterletSpec) []operatorv1.FeatureGate {
	if s.WorkConfiguration == nil {
		return nil
	}
	return s.WorkConfiguration.FeatureGates
}

// bootstrapSecrets are the bootstrap kubeconfig Secrets that s lists, in
// order; none when it lists none (type None).
func bootstrapSecrets(s *operatorv1.KlusterletSpec) []string {
	rc := s.RegistrationConfiguration
	if rc == nil || rc.BootstrapKubeConfigs.Type != operatorv1.LocalSecrets || rc.BootstrapKubeConfigs.LocalSecrets == nil {
		return nil
	}
	var names []string
	for _, sec := range rc.BootstrapKubeConfigs.LocalSecrets.KubeConfigSecrets {
		names = append(names, sec.Name)
	}
	return names
}

// registration reads a flag from spec.registrationConfiguration, none
// when it is unset.
func registration(values func(*operatorv1.RegistrationConfiguration) []string) func(*operatorv1.KlusterletSpec) []string {
	return func(s *operatorv1.KlusterletSpec) []string {
		if s.RegistrationConfiguration == nil {
			return nil
		}
		return values(s.RegistrationConfiguration)
	}
}

// addonDriver reads a flag from the add-on registration driver of
// spec.registrationConfiguration, none when it is unset or csr, the
// agent's default.
func addonDriver(values func(*operatorv1.AddOnRegistrationDriver) []string) func(*operatorv1.KlusterletSpec) []string {
	return registration(func(rc *operatorv1.RegistrationConfiguration) []string {
		if d := rc.AddOnKubeClientRegistrationDriver; d != nil && d.AuthType != "" && d.AuthType != operatorv1.CSRAuthType {
			return values(d)
		}
		return nil
	})
}

// work reads a flag from spec.workConfiguration, none when it is unset.
func work(values func(*operatorv1.WorkAgentConfiguration) []string) func(*operatorv1.KlusterletSpec) []string {
	return func(s *operatorv1.KlusterletSpec) []string {
		if s.WorkConfiguration == nil {
			return nil
		}
		return values(s.WorkConfiguration)
	}
}

// nonZero is n as a flag value, none when it is 0 (unset).
func nonZero[T int32 | int64](n T) []string {
	if n == 0 {
		return nil
	}
	return []string{strconv.FormatInt(int64(n), 10)}
}

// unless is s as a flag value, none when it is empty or one of defaults.
func unless(s string, defaults ...string) []string {
	if s == "" || slices.Contains(defaults, s) {
		return nil
	}
	return []string{s}
}

// positive is d as a flag value (a Go duration), none when it is unset or
// not positive.
func positive(d *metav1.Duration) []string {
	if d == nil || d.Duration <= 0 {
		return nil
	}
	return []string{d.Duration.String()}
}
