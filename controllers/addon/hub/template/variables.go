package template

import (
	"maps"
	"regexp"
	"slices"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
)

// Built-in variables of a template add-on.
const (
	// VarClusterName is the managed cluster's name.
	VarClusterName = "CLUSTER_NAME"
	// VarInstallNamespace is the namespace the agent is installed in.
	VarInstallNamespace = "INSTALL_NAMESPACE"
	// VarHubKubeconfig is the path of the agent's hub kubeconfig, defined when
	// the template has a registration (a customized variable may override it).
	VarHubKubeconfig = "HUB_KUBECONFIG"
	// VarAddonName is the add-on's name.
	VarAddonName = "ADDON_NAME"

	// HubKubeconfigMountPath is where the <addon>-hub-kubeconfig Secret is
	// mounted in the agent's containers.
	HubKubeconfigMountPath = "/managed/hub-kubeconfig"
	// HubKubeconfigPath is the value of HUB_KUBECONFIG.
	HubKubeconfigPath = HubKubeconfigMountPath + "/kubeconfig"
)

// placeholder matches {{NAME}} where NAME is a variable name (a letter or
// underscore, then letters, digits or underscores). Other text between
// braces, such as a Go template in a ConfigMap, is left alone.
var placeholder = regexp.MustCompile(`\{\{([a-zA-Z_][_a-zA-Z0-9]*)\}\}`)

// deploymentConfig is the AddOnDeploymentConfigs of an add-on merged into
// one: a later config's field wins over an earlier one's where it is set,
// and customized variables are merged by name.
type deploymentConfig struct {
	variables            map[string]string
	nodePlacement        *addonv1alpha1.NodePlacement
	registries           []addonv1alpha1.ImageMirror
	proxy                addonv1alpha1.ProxyConfig
	installNamespace     string
	resourceRequirements []addonv1alpha1.ContainerResourceRequirements
}

// mergeConfigs merges configs in order.
func mergeConfigs(configs []*addonv1alpha1.AddOnDeploymentConfig) deploymentConfig {
	out := deploymentConfig{variables: map[string]string{}}
	for _, c := range configs {
		if c == nil {
			continue
		}
		s := c.Spec
		for _, v := range s.CustomizedVariables {
			out.variables[v.Name] = v.Value
		}
		if s.NodePlacement != nil {
			out.nodePlacement = s.NodePlacement
		}
		if s.Registries != nil {
			out.registries = s.Registries
		}
		if s.ProxyConfig.HTTPProxy != "" || s.ProxyConfig.HTTPSProxy != "" || s.ProxyConfig.NoProxy != "" || len(s.ProxyConfig.CABundle) > 0 {
			out.proxy = s.ProxyConfig
		}
		if s.AgentInstallNamespace != "" {
			out.installNamespace = s.AgentInstallNamespace
		}
		if s.ResourceRequirements != nil {
			out.resourceRequirements = s.ResourceRequirements
		}
	}
	return out
}

// installNamespace resolves the install namespace: the deployment config's,
// else the ManagedClusterAddOn's, else the default.
func installNamespace(cfg deploymentConfig, mcaNamespace string) string {
	switch {
	case cfg.installNamespace != "":
		return cfg.installNamespace
	case mcaNamespace != "":
		return mcaNamespace
	default:
		return addonv1alpha1.DefaultAddonInstallNamespace
	}
}

// variables are the values substituted in a template and the placeholders
// found without one.
type variables struct {
	values  map[string]string
	env     []string // names of the variables set as env on the agent's containers, in order
	unknown map[string]bool
}

// newVariables computes the variables of in, as OCM orders them: the
// defaults (HUB_KUBECONFIG, with a registration), overridden by the
// customized variables, overridden by the built-ins, which cannot be
// overridden.
func newVariables(in Input, cfg deploymentConfig, namespace string) *variables {
	v := &variables{values: map[string]string{}, unknown: map[string]bool{}}
	if len(in.Template.Spec.Registration) > 0 {
		v.values[VarHubKubeconfig] = HubKubeconfigPath
		v.env = append(v.env, VarHubKubeconfig)
	}
	maps.Copy(v.values, cfg.variables)
	v.values[VarAddonName] = in.AddonName
	v.values[VarClusterName] = in.Cluster
	v.values[VarInstallNamespace] = namespace
	v.env = append(v.env, VarClusterName, VarInstallNamespace)
	return v
}

// substitute returns content (decoded JSON) with the placeholders replaced
// in every string and every object key. A placeholder without a variable
// becomes the empty string and is recorded.
func (v *variables) substitute(content any) any {
	switch c := content.(type) {
	case string:
		return v.expand(c)
	case []any:
		for i := range c {
			c[i] = v.substitute(c[i])
		}
		return c
	case map[string]any:
		out := make(map[string]any, len(c))
		for k, val := range c {
			out[v.expand(k)] = v.substitute(val)
		}
		return out
	default:
		return content
	}
}

// expand replaces the placeholders of s.
func (v *variables) expand(s string) string {
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-2]
		value, ok := v.values[name]
		if !ok {
			v.unknown[name] = true
		}
		return value
	})
}

// unknownNames returns the names of the placeholders without a variable, sorted.
func (v *variables) unknownNames() []string {
	if len(v.unknown) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(v.unknown))
}
