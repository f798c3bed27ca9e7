package deploy

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	addonv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
)

// The configuration kinds the deploy controller reads, as unstructured
// objects at the versions OCM hashes them (config.HashedVersion): their
// spec hashes must be computed from the API server's JSON, as the config
// controller computes the desired ones.
var (
	templateGVK   = config.BuiltinKind(addonv1alpha1.AddOnTemplateResource)
	deployCfgGVK  = config.BuiltinKind(addonv1alpha1.AddOnDeploymentConfigResource)
	kindsByConfig = map[addonv1alpha1.ConfigGroupResource]schema.GroupVersionKind{
		{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnTemplateResource}:         templateGVK,
		{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnDeploymentConfigResource}: deployCfgGVK,
	}
)

// templateRef returns the desired AddOnTemplate of mca, or nil when mca is
// not (yet) a template add-on.
func templateRef(mca *addonv1alpha1.ManagedClusterAddOn) *addonv1alpha1.ConfigSpecHash {
	for _, ref := range mca.Status.ConfigReferences {
		if ref.IsTemplateConfig() && ref.DesiredConfig != nil {
			return ref.DesiredConfig
		}
	}
	return nil
}

// source is what the agent of an add-on on one cluster is rendered from.
type source struct {
	template *addonv1alpha1.AddOnTemplate
	configs  []*addonv1alpha1.AddOnDeploymentConfig
	// hashes are the desired configurations of the add-on, written to the
	// works' config-spec-hash annotation.
	hashes config.Hashes
	// waiting, when not empty, says why the works cannot be rendered from
	// the desired configurations yet.
	waiting string
	// clusterRegistries are the image mirrors of the cluster's annotation
	// open-cluster-management.io/image-registries; registriesErr says why
	// the annotation is not used, and hasRegistries whether there is one.
	clusterRegistries []addonv1alpha1.ImageMirror
	registriesErr     error
	hasRegistries     bool
	// addonNamespaceEnforced is whether the cluster's agent reports that
	// the add-on agents' namespace enforces restricted Pod Security.
	addonNamespaceEnforced bool
}

// input returns the template package's input for mca.
func (s *source) input(mca *addonv1alpha1.ManagedClusterAddOn) template.Input {
	//nolint:staticcheck // OCM honors the deprecated v1alpha1 field; an AddOnDeploymentConfig's agentInstallNamespace overrides it.
	return template.Input{Cluster: mca.Namespace, AddonName: mca.Name, InstallNamespace: mca.Spec.InstallNamespace,
		Template: s.template, DeploymentConfigs: s.configs, ClusterRegistries: s.clusterRegistries,
		HostingCluster: template.HostingCluster(mca), AddonNamespaceEnforced: s.addonNamespaceEnforced}
}

// load reads the desired AddOnTemplate and AddOnDeploymentConfigs of mca.
// With checkHashes, a configuration whose current spec hash is not the
// desired one makes the source wait; without, the current objects are used
// as they are (to run a pre-delete hook). A configuration that does not
// exist makes the source wait.
func (r *Reconciler) load(ctx context.Context, mca *addonv1alpha1.ManagedClusterAddOn, checkHashes bool) (*source, error) {
	src := &source{hashes: config.Desired(mca)}
	for _, ref := range mca.Status.ConfigReferences {
		gvk, ok := kindsByConfig[ref.ConfigGroupResource]
		if !ok || ref.DesiredConfig == nil {
			continue
		}
		desired := ref.DesiredConfig
		if gvk == templateGVK && src.template != nil {
			continue // one template per add-on: the first one
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		err := r.Configs.Get(ctx, client.ObjectKey{Namespace: desired.Namespace, Name: desired.Name}, u)
		if apierrors.IsNotFound(err) {
			src.waiting = fmt.Sprintf("%s %s does not exist", gvk.Kind, describe(desired.ConfigReferent))
			return src, nil
		}
		if err != nil {
			return nil, fmt.Errorf("get %s %s: %w", gvk.Kind, describe(desired.ConfigReferent), err)
		}
		hash, err := config.SpecHash(u)
		if err != nil {
			return nil, err
		}
		if checkHashes && hash != desired.SpecHash {
			src.waiting = fmt.Sprintf("%s %s has spec hash %s, the add-on's desired configuration is %s",
				gvk.Kind, describe(desired.ConfigReferent), short(hash), short(desired.SpecHash))
			return src, nil
		}
		switch gvk {
		case templateGVK:
			src.template = &addonv1alpha1.AddOnTemplate{}
			err = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, src.template)
		default:
			var c *addonv1alpha1.AddOnDeploymentConfig
			c, err = deployConfig(u)
			src.configs = append(src.configs, c)
		}
		if err != nil {
			return nil, fmt.Errorf("decode %s %s: %w", gvk.Kind, describe(desired.ConfigReferent), err)
		}
	}
	if src.template == nil && src.waiting == "" {
		src.waiting = "no desired AddOnTemplate"
	}
	return src, r.loadClusterRegistries(ctx, mca.Namespace, src)
}

// loadClusterRegistries reads the image mirrors of the annotation
// open-cluster-management.io/image-registries of cluster into src. A
// malformed annotation is recorded in src.registriesErr, and the agent is
// rendered without it; a cluster that does not exist has none.
func (r *Reconciler) loadClusterRegistries(ctx context.Context, cluster string, src *source) error {
	mc := &clusterv1.ManagedCluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
		return client.IgnoreNotFound(err)
	}
	value, ok := mc.Annotations[clusterv1.ClusterImageRegistriesAnnotationKey]
	src.hasRegistries = ok
	src.clusterRegistries, src.registriesErr = template.ParseClusterImageRegistries(value)
	src.addonNamespaceEnforced = addonNamespaceEnforces(mc)
	return nil
}

// addonNamespaceEnforces reports whether mc's agent reports that the add-on
// agents' namespace on its cluster enforces restricted Pod Security (its
// claim podsecurity.AddonNamespaceClaim). An agent that reports no such
// claim (an older release, or cluster claims turned off) leaves it unknown,
// taken as not enforced: the managed cluster's admission has the last word.
func addonNamespaceEnforces(mc *clusterv1.ManagedCluster) bool {
	for _, c := range mc.Status.ClusterClaims {
		if c.Name == podsecurity.AddonNamespaceClaim {
			return c.Value == podsecurity.Level
		}
	}
	return false
}

// describe names a configuration: namespace/name, or name when cluster-scoped.
func describe(ref addonv1alpha1.ConfigReferent) string {
	if ref.Namespace == "" {
		return ref.Name
	}
	return ref.Namespace + "/" + ref.Name
}

// short abbreviates a spec hash for messages.
func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}

// deployConfig decodes an AddOnDeploymentConfig read at v1beta1 into the
// v1alpha1 type the renderer takes.
func deployConfig(u *unstructured.Unstructured) (*addonv1alpha1.AddOnDeploymentConfig, error) {
	beta := &addonv1beta1.AddOnDeploymentConfig{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, beta); err != nil {
		return nil, err
	}
	out := &addonv1alpha1.AddOnDeploymentConfig{}
	if err := out.ConvertFrom(beta); err != nil {
		return nil, err
	}
	return out, nil
}
