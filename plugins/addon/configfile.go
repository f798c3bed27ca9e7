package addon

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
)

// ConfigFile is the content of `addon enable --config-file`: the
// configurations to put in spec.configs of every ManagedClusterAddOn it
// writes, each with the group, resource, namespace and name of
// spec.configs entries:
//
//	configs:
//	- group: addon.open-cluster-management.io
//	  resource: addondeploymentconfigs
//	  namespace: cluster1
//	  name: proxy-config
type ConfigFile struct {
	// Configs are the spec.configs entries.
	Configs []addonv1alpha1.AddOnConfig `json:"configs"`
}

// ReadConfigFile reads and decodes a ConfigFile from path, rejecting fields
// it does not know (a misspelled key would otherwise be dropped silently).
func ReadConfigFile(path string) ([]addonv1alpha1.AddOnConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--config-file: %w", err)
	}
	var f ConfigFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("--config-file %s: %w; write a list of configs, each with group, resource, namespace and name, as shown in `kubectl ocm addon enable --help`", path, err)
	}
	if err := ValidateConfigs(f.Configs); err != nil {
		return nil, fmt.Errorf("--config-file %s: %w", path, err)
	}
	return f.Configs, nil
}

// ValidateConfigs checks configuration references as the API and the add-on
// manager need them: a resource and a name, a valid namespace when given,
// and no configuration listed twice.
func ValidateConfigs(configs []addonv1alpha1.AddOnConfig) error {
	if len(configs) == 0 {
		return errors.New("no configs listed: give at least one entry in the configs list")
	}
	var errs []error
	seen := map[addonv1alpha1.AddOnConfig]int{}
	for i, c := range configs {
		where := fmt.Sprintf("configs[%d]", i)
		if c.Resource != "" && c.Name != "" {
			where += " (" + configString(c) + ")"
		}
		if c.Resource == "" {
			errs = append(errs, fmt.Errorf("%s: resource is required, such as addondeploymentconfigs", where))
		}
		if c.Name == "" {
			errs = append(errs, fmt.Errorf("%s: name is required", where))
		} else if msgs := validation.IsDNS1123Subdomain(c.Name); len(msgs) > 0 {
			errs = append(errs, fmt.Errorf("%s: name %q is invalid: %s", where, c.Name, strings.Join(msgs, "; ")))
		}
		if c.Namespace != "" {
			if msgs := validation.IsDNS1123Label(c.Namespace); len(msgs) > 0 {
				errs = append(errs, fmt.Errorf("%s: namespace %q is invalid: %s", where, c.Namespace, strings.Join(msgs, "; ")))
			}
		}
		if first, dup := seen[c]; dup {
			errs = append(errs, fmt.Errorf("%s: the same configuration as configs[%d]: list it once", where, first))
			continue
		}
		seen[c] = i
	}
	return errors.Join(errs...)
}

// configString names a configuration as resource[.group] [namespace/]name.
func configString(c addonv1alpha1.AddOnConfig) string {
	return kindString(c.ConfigGroupResource) + " " + refString(c.ConfigReferent)
}

// kindString names a configuration kind as resource.group, or resource for
// the core group.
func kindString(gr addonv1alpha1.ConfigGroupResource) string {
	if gr.Group == "" {
		return gr.Resource
	}
	return gr.Resource + "." + gr.Group
}

// refString names a configuration object as [namespace/]name.
func refString(r addonv1alpha1.ConfigReferent) string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}
