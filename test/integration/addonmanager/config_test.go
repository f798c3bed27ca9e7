package addonmanager

import (
	"context"
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hubconfig "github.com/kubectl-ocm/kubectl-ocm/config"
	addonconfig "github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// exampleGVK is the kind of the seeds' own configuration, exampleconfigs.
var exampleGVK = schema.GroupVersionKind{Group: "example.open-cluster-management.io", Version: "v1alpha1", Kind: "ExampleConfig"}

// TestConfigurations applies the configuration seeds unchanged and checks
// what each ManagedClusterAddOn is configured with: defaults, per install
// strategy placement and per cluster, with the spec hash of each object, an
// unsupported kind and a kind the hub does not serve reported, a
// configuration kind served later and watched from then on, and
// lastAppliedConfig once the deploy work runs the desired configurations.
func TestConfigurations(t *testing.T) {
	t.Parallel() // an environment of its own
	s := setup(t)
	s.cluster(t, clusterSpec{name: "cluster1", claims: map[string]string{platformClaim: "aws"}})
	s.cluster(t, clusterSpec{name: "cluster2", claims: map[string]string{platformClaim: "gcp"}})
	defaultHash := s.deployConfig(t, "default-deploy-config", "default")
	placementHash := s.deployConfig(t, "deploy-config", "placement")
	clusterHash := s.deployConfig(t, "cluster1-deploy-config", "cluster1")
	const adcs, examples = "addondeploymentconfigs", "exampleconfigs"

	t.Run("default configurations", func(t *testing.T) {
		s.applySeed(t, "001-default-configs.yaml")
		s.applySeed(t, "001-managedclusteraddon-manual.yaml")
		kit.Must(t, "enable the add-on on cluster2", s.admin.Create(s.ctx, &addonv1alpha1.ManagedClusterAddOn{
			ObjectMeta: metav1.ObjectMeta{Namespace: "cluster2", Name: addon}}))
		for _, c := range []string{"cluster1", "cluster2"} {
			s.waitMCA(t, c, "the default configurations, the example kind reported as not served", func(m *addonv1alpha1.ManagedClusterAddOn) error {
				if len(m.Status.SupportedConfigs) != 0 {
					return fmt.Errorf("supportedConfigs %v: the hub wrote them for an add-on it does not deploy; they are its own manager's", m.Status.SupportedConfigs)
				}
				if h, err := desired(m, adcs, "default-deploy-config"); err != nil || h != defaultHash {
					return fmt.Errorf("default-deploy-config hash %q (%v), want %s", h, err, defaultHash)
				}
				if _, err := desired(m, examples, "default-example-config"); err != nil {
					return err
				}
				return configured(m, false, "the hub serves no configuration kind exampleconfigs.example.open-cluster-management.io")
			})
		}

		// The kind becomes served and readable: the object is read, hashed
		// and, from then on, watched.
		s.serveExampleConfigs(t)
		s.waitMCA(t, "cluster1", "the missing example configuration reported", func(m *addonv1alpha1.ManagedClusterAddOn) error {
			return configured(m, false, "exampleconfigs.example.open-cluster-management.io open-cluster-management/default-example-config not found")
		})
		for _, color := range []string{"blue", "green"} {
			hash := s.exampleConfig(t, "default-example-config", color)
			s.waitMCA(t, "cluster1", "the example configuration hashed ("+color+")", func(m *addonv1alpha1.ManagedClusterAddOn) error {
				if h, err := desired(m, examples, "default-example-config"); err != nil || h != hash {
					return fmt.Errorf("default-example-config hash %q (%v), want %s", h, err, hash)
				}
				return configured(m, true, "")
			})
		}
		s.waitCMA(t, "default configurations with their hashes", func(c *addonv1alpha1.ClusterManagementAddOn) error {
			for _, d := range c.Status.DefaultConfigReferences {
				if d.DesiredConfig == nil || d.DesiredConfig.SpecHash == "" {
					return fmt.Errorf("defaultconfigReferences %+v: a hash is missing", c.Status.DefaultConfigReferences)
				}
			}
			if len(c.Status.DefaultConfigReferences) != 2 {
				return fmt.Errorf("defaultconfigReferences %+v, want two", c.Status.DefaultConfigReferences)
			}
			return nil
		})

		// The deploy work runs the desired configurations: they are applied.
		s.poll(t, "cluster1 completed, its configurations applied", func(ctx context.Context) (bool, error) {
			if err := s.deploy(ctx, "cluster1", metav1.ConditionTrue); err != nil {
				return false, err
			}
			m, err := s.mca(ctx, "cluster1")
			if err != nil {
				return false, err
			}
			for _, ref := range m.Status.ConfigReferences {
				if ref.LastAppliedConfig == nil || *ref.LastAppliedConfig != *ref.DesiredConfig {
					return false, fmt.Errorf("configReferences %+v: not applied", m.Status.ConfigReferences)
				}
			}
			return true, condition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing,
				metav1.ConditionFalse, addonv1alpha1.ProgressingReasonCompleted)
		})
	})

	t.Run("configurations per install strategy", func(t *testing.T) {
		s.applySeed(t, "001-installstrategy-placements.yaml")
		s.applySeed(t, "001-configs-per-install-strategy.yaml")
		s.waitMCA(t, "cluster1", "the placement's configurations, the example kind unsupported", func(m *addonv1alpha1.ManagedClusterAddOn) error {
			if h, err := desired(m, adcs, "deploy-config"); err != nil || h != placementHash {
				return fmt.Errorf("deploy-config hash %q (%v), want %s", h, err, placementHash)
			}
			for _, name := range []string{"example-config-1", "example-config-2"} {
				if _, err := desired(m, examples, name); err != nil {
					return err
				}
			}
			if err := condition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionProgressing,
				metav1.ConditionFalse, addonv1alpha1.ProgressingReasonConfigurationUnsupported); err != nil {
				return err
			}
			return configured(m, false, "configuration kind exampleconfigs.example.open-cluster-management.io is not supported")
		})
		s.waitMCA(t, "cluster2", "only the default, the placement does not decide it", func(m *addonv1alpha1.ManagedClusterAddOn) error {
			if h, err := desired(m, adcs, "default-deploy-config"); err != nil || h != defaultHash || len(m.Status.ConfigReferences) != 1 {
				return fmt.Errorf("configReferences %+v, want default-deploy-config alone", m.Status.ConfigReferences)
			}
			return configured(m, true, "")
		})
		s.waitCMA(t, "the placement's configurations in its install progression", func(c *addonv1alpha1.ClusterManagementAddOn) error {
			if len(c.Status.InstallProgressions) != 1 || len(c.Status.InstallProgressions[0].ConfigReferences) != 3 {
				return fmt.Errorf("installProgressions %+v, want placement-aws with three configurations", c.Status.InstallProgressions)
			}
			return nil
		})
	})

	t.Run("configurations per cluster", func(t *testing.T) {
		s.applySeed(t, "001-configs-per-cluster.yaml")
		s.waitMCA(t, "cluster1", "its own configurations, over the placement's", func(m *addonv1alpha1.ManagedClusterAddOn) error {
			if h, err := desired(m, adcs, "cluster1-deploy-config"); err != nil || h != clusterHash {
				return fmt.Errorf("cluster1-deploy-config hash %q (%v), want %s", h, err, clusterHash)
			}
			if _, err := desired(m, examples, "cluster1-example-config"); err != nil || len(m.Status.ConfigReferences) != 2 {
				return fmt.Errorf("configReferences %+v, want cluster1's two configurations (%v)", m.Status.ConfigReferences, err)
			}
			return nil
		})
	})
}

// configured returns an error unless m's Configured condition is True, or
// False with a message containing want.
func configured(m *addonv1alpha1.ManagedClusterAddOn, ok bool, want string) error {
	if ok {
		return condition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionConfigured,
			metav1.ConditionTrue, addonv1alpha1.ConfiguredReasonConfigured)
	}
	if err := condition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionConfigured,
		metav1.ConditionFalse, addonv1alpha1.ConfiguredReasonNotConfigured); err != nil {
		return err
	}
	for _, c := range m.Status.Conditions {
		if c.Type == addonv1alpha1.ManagedClusterAddOnConditionConfigured && !strings.Contains(c.Message, want) {
			return fmt.Errorf("Configured says %q, want it to say %q", c.Message, want)
		}
	}
	return nil
}

// serveExampleConfigs installs the CRD of the seeds' exampleconfigs and,
// as a hub admin adding a configuration kind does, lets the hub controller
// read them.
func (s *suite) serveExampleConfigs(t *testing.T) {
	t.Helper()
	const name = "exampleconfigs.example.open-cluster-management.io"
	preserve := true
	kit.Must(t, "create ClusterRole", s.admin.Create(s.ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name + ":reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{exampleGVK.Group}, Resources: []string{"exampleconfigs"}, Verbs: []string{"get", "list", "watch"}}},
	}))
	kit.Must(t, "create ClusterRoleBinding", s.admin.Create(s.ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + ":reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name + ":reader"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: hubconfig.HubNamespace, Name: "ocm-hub-controller"}},
	}))
	kit.Must(t, "create CRD", s.admin.Create(s.ctx, &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: exampleGVK.Group, Scope: apiextensionsv1.NamespaceScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "exampleconfigs", Singular: "exampleconfig", Kind: exampleGVK.Kind, ListKind: exampleGVK.Kind + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: exampleGVK.Version, Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}}}},
		},
	}))
}

// exampleConfig creates or updates the ExampleConfig name in the
// configuration namespace with spec.color and returns its spec hash.
func (s *suite) exampleConfig(t *testing.T, name, color string) string {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"color": color}}}
	u.SetGroupVersionKind(exampleGVK)
	u.SetNamespace(configNamespace)
	u.SetName(name)
	// The CRD may take a moment to be served.
	s.poll(t, "apply ExampleConfig "+name, func(ctx context.Context) (bool, error) {
		return true, s.admin.Apply(ctx, client.ApplyConfigurationFromUnstructured(u.DeepCopy()), client.FieldOwner(fieldOwner), client.ForceOwnership)
	})
	stored := &unstructured.Unstructured{}
	stored.SetGroupVersionKind(exampleGVK)
	kit.Must(t, "read ExampleConfig "+name, s.admin.Get(s.ctx, client.ObjectKeyFromObject(u), stored))
	hash, err := addonconfig.SpecHash(stored)
	kit.Must(t, "hash ExampleConfig "+name, err)
	return hash
}
