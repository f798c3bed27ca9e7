package template

import (
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/registration"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
)

// Names of what the proxy configuration adds to the agent.
const (
	// proxyCAVolume is the volume of the proxy CA bundle ConfigMap.
	proxyCAVolume = "proxy-ca-bundle"
	// ProxyCAMountPath is where the proxy CA bundle is mounted.
	ProxyCAMountPath = "/managed/proxy-ca"
	// ProxyCABundleKey is the key of the CA bundle in its ConfigMap.
	ProxyCABundleKey = "ca-bundle.crt"
	// hubKubeconfigVolume is the volume of the hub kubeconfig Secret.
	hubKubeconfigVolume = "hub-kubeconfig"
)

// ProxyCAConfigMapName returns the ConfigMap holding the proxy CA bundle of
// addon's agent: <addon>-proxy-ca.
func ProxyCAConfigMapName(addon string) string { return addon + "-proxy-ca" }

// decorator applies the AddOnDeploymentConfig and the registrations to the
// rendered objects.
type decorator struct {
	in        Input
	cfg       deploymentConfig
	vars      *variables
	namespace string
}

// decorate moves obj to the install namespace when the deployment config
// names one, and decorates the pod template of a Deployment or DaemonSet.
func (d decorator) decorate(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	d.moveToNamespace(obj)
	switch {
	case isKind(obj, "apps", "Deployment"):
		dep := &appsv1.Deployment{}
		return d.decoratePods(obj, dep, "deployments", func() (string, *corev1.PodTemplateSpec) { return dep.Name, &dep.Spec.Template })
	case isKind(obj, "apps", "DaemonSet"):
		ds := &appsv1.DaemonSet{}
		return d.decoratePods(obj, ds, "daemonsets", func() (string, *corev1.PodTemplateSpec) { return ds.Name, &ds.Spec.Template })
	default:
		return obj, nil
	}
}

// moveToNamespace puts obj in the install namespace. With an
// AddOnDeploymentConfig's agentInstallNamespace it does what OCM does: every
// namespaced object moves there, a Namespace object is renamed to it, and
// the ServiceAccount subjects of (Cluster)RoleBindings follow. Without one,
// only what the template puts in the default install namespace
// (open-cluster-management-agent-addon: objects, the Namespace object,
// ServiceAccount subjects) follows the ManagedClusterAddOn's
// spec.installNamespace, as OCM's add-ons that template their namespace
// do; the CRD of AddOnTemplate refuses {{INSTALL_NAMESPACE}} in
// metadata.namespace.
func (d decorator) moveToNamespace(obj *unstructured.Unstructured) {
	all := d.cfg.installNamespace != ""
	if !all && d.namespace == addonv1alpha1.DefaultAddonInstallNamespace {
		return
	}
	follows := func(ns string) bool { return ns != "" && (all || ns == addonv1alpha1.DefaultAddonInstallNamespace) }
	if follows(obj.GetNamespace()) {
		obj.SetNamespace(d.namespace)
	}
	switch {
	case isKind(obj, "", "Namespace"):
		if follows(obj.GetName()) {
			obj.SetName(d.namespace)
		}
	case isKind(obj, "rbac.authorization.k8s.io", "RoleBinding"), isKind(obj, "rbac.authorization.k8s.io", "ClusterRoleBinding"):
		subjects, _ := obj.Object["subjects"].([]any)
		for _, s := range subjects {
			if m, ok := s.(map[string]any); ok && m["kind"] == "ServiceAccount" {
				if ns, _ := m["namespace"].(string); follows(ns) {
					m["namespace"] = d.namespace
				}
			}
		}
	}
}

// decoratePods decodes obj into typed (a Deployment or DaemonSet), decorates
// its pod template and encodes it back.
func (d decorator) decoratePods(obj *unstructured.Unstructured, typed runtime.Object, resource string,
	template func() (string, *corev1.PodTemplateSpec)) (*unstructured.Unstructured, error) {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		return obj, err
	}
	name, pod := template()
	d.decoratePod(resource, name, pod)
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return obj, err
	}
	delete(content, "status")
	unstructured.RemoveNestedField(content, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(content, "spec", "template", "metadata", "creationTimestamp")
	return &unstructured.Unstructured{Object: content}, nil
}

// decoratePod applies everything to one pod template, in OCM's order:
// variables as env, hub credential volumes, node placement, image mirrors,
// proxy, resource requirements; and, as OCM's add-on framework does, the
// image pull Secret open-cluster-management-image-pull-credentials, which
// the Klusterlet operator copies into every add-on namespace (the kubelet
// pulls without it where there is none).
func (d decorator) decoratePod(resource, name string, pod *corev1.PodTemplateSpec) {
	var env []corev1.EnvVar
	for _, n := range d.vars.env {
		env = append(env, corev1.EnvVar{Name: n, Value: d.vars.values[n]})
	}
	env = append(env, d.proxyEnv()...)
	mounts, volumes := d.volumes()
	spec := &pod.Spec
	for i := range spec.Containers {
		c := &spec.Containers[i]
		c.Env = setEnv(c.Env, env)
		c.VolumeMounts = setMounts(c.VolumeMounts, mounts)
		c.Image = overrideImage(d.mirrors(), c.Image)
		if r, ok := d.resources(resource, name, c.Name); ok {
			c.Resources = *r.DeepCopy()
		}
	}
	spec.Volumes = setVolumes(spec.Volumes, volumes)
	if pull := (corev1.LocalObjectReference{Name: pullsecret.Name}); !slices.Contains(spec.ImagePullSecrets, pull) {
		spec.ImagePullSecrets = append(spec.ImagePullSecrets, pull)
	}
	if np := d.cfg.nodePlacement; np != nil {
		if np.NodeSelector != nil {
			spec.NodeSelector = np.NodeSelector
		}
		if np.Tolerations != nil {
			spec.Tolerations = np.Tolerations
		}
	}
}

// proxyEnv returns the proxy variables, in upper and lower case as OCM sets
// them, and the path of the proxy CA bundle when there is one.
func (d decorator) proxyEnv() []corev1.EnvVar {
	var env []corev1.EnvVar
	for _, p := range []struct{ name, value string }{
		{"HTTP_PROXY", d.cfg.proxy.HTTPProxy}, {"HTTPS_PROXY", d.cfg.proxy.HTTPSProxy}, {"NO_PROXY", d.cfg.proxy.NoProxy},
	} {
		if p.value != "" {
			env = append(env, corev1.EnvVar{Name: p.name, Value: p.value}, corev1.EnvVar{Name: strings.ToLower(p.name), Value: p.value})
		}
	}
	if len(d.cfg.proxy.CABundle) > 0 {
		env = append(env, corev1.EnvVar{Name: "CA_BUNDLE_FILE_PATH", Value: ProxyCAMountPath + "/" + ProxyCABundleKey})
	}
	return env
}

// volumes returns the volumes of the hub credentials of the template's
// registrations and of the proxy CA bundle, with their mounts.
func (d decorator) volumes() ([]corev1.VolumeMount, []corev1.Volume) {
	var mounts []corev1.VolumeMount
	var volumes []corev1.Volume
	add := func(name, path string, src corev1.VolumeSource) {
		for _, v := range volumes {
			if v.Name == name {
				return
			}
		}
		mounts = append(mounts, corev1.VolumeMount{Name: name, MountPath: path})
		volumes = append(volumes, corev1.Volume{Name: name, VolumeSource: src})
	}
	secret := func(name string) corev1.VolumeSource {
		return corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}
	}
	addon := d.in.AddonName
	for _, r := range d.in.Template.Spec.Registration {
		switch {
		case r.Type == addonv1alpha1.RegistrationTypeKubeClient:
			add(hubKubeconfigVolume, HubKubeconfigMountPath, secret(HubKubeconfigSecretName(addon)))
		case r.Type == addonv1alpha1.RegistrationTypeCustomSigner && r.CustomSigner != nil:
			signer := strings.ReplaceAll(r.CustomSigner.SignerName, "/", "-")
			add("cert-"+strings.ReplaceAll(signer, ".", "-"), "/managed/"+signer, secret(registration.CustomSignerSecretName(addon, r.CustomSigner.SignerName)))
		}
	}
	if len(d.cfg.proxy.CABundle) > 0 {
		add(proxyCAVolume, ProxyCAMountPath, corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: ProxyCAConfigMapName(addon)},
		}})
	}
	return mounts, volumes
}

// resources returns the resource requirements of container in the
// workload resource/name: the last entry of resourceRequirements whose
// containerID (<resource>:<name>:<container>, * matching anything) matches.
func (d decorator) resources(resource, name, container string) (*corev1.ResourceRequirements, bool) {
	for i := len(d.cfg.resourceRequirements) - 1; i >= 0; i-- {
		r := d.cfg.resourceRequirements[i]
		parts := strings.Split(r.ContainerID, ":")
		if len(parts) == 3 && wildcard(parts[0], resource) && wildcard(parts[1], name) && wildcard(parts[2], container) {
			return &r.Resources, true
		}
	}
	return nil, false
}

// wildcard matches s against pattern, in which * matches any run of characters.
func wildcard(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// mirrors returns the image mirrors of the agent: the cluster's, then the
// AddOnDeploymentConfigs', so that these win where both rewrite an image
// (overrideImage takes the last match).
func (d decorator) mirrors() []addonv1alpha1.ImageMirror {
	if len(d.in.ClusterRegistries) == 0 {
		return d.cfg.registries
	}
	return append(slices.Clip(d.in.ClusterRegistries), d.cfg.registries...)
}

// overrideImage rewrites image with the image mirrors, as OCM does: a
// mirror whose source prefixes the image replaces that prefix; a mirror
// without a source takes every image, keeping only its last path segment.
// When several match, the last one wins.
func overrideImage(mirrors []addonv1alpha1.ImageMirror, image string) string {
	out := image
	for _, m := range mirrors {
		source, mirror := strings.TrimSuffix(m.Source, "/"), strings.TrimSuffix(m.Mirror, "/")
		var rewritten string
		switch {
		case source == "":
			segments := strings.Split(image, "/")
			rewritten = segments[len(segments)-1]
			if mirror != "" {
				rewritten = mirror + "/" + rewritten
			}
		case strings.HasPrefix(image, source):
			rewritten = mirror + strings.TrimPrefix(image, source)
		default:
			continue
		}
		if rewritten != image {
			out = rewritten
		}
	}
	return out
}

// injected returns the objects the deployment config adds to the agent:
// the ConfigMap of the proxy CA bundle.
func (d decorator) injected() []*unstructured.Unstructured {
	if len(d.cfg.proxy.CABundle) == 0 {
		return nil
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: d.namespace, Name: ProxyCAConfigMapName(d.in.AddonName)},
		Data:       map[string]string{ProxyCABundleKey: string(d.cfg.proxy.CABundle)},
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cm)
	if err != nil {
		panic(err) // a ConfigMap always converts
	}
	unstructured.RemoveNestedField(content, "metadata", "creationTimestamp")
	return []*unstructured.Unstructured{{Object: content}}
}

// setEnv sets each of env in vars: an existing variable of the same name
// takes the new value, others are appended.
func setEnv(vars, env []corev1.EnvVar) []corev1.EnvVar {
	for _, e := range env {
		vars = setByName(vars, e, func(v corev1.EnvVar) string { return v.Name })
	}
	return vars
}

// setMounts sets each of mounts in existing, by name.
func setMounts(existing, mounts []corev1.VolumeMount) []corev1.VolumeMount {
	for _, m := range mounts {
		existing = setByName(existing, m, func(v corev1.VolumeMount) string { return v.Name })
	}
	return existing
}

// setVolumes sets each of volumes in existing, by name.
func setVolumes(existing, volumes []corev1.Volume) []corev1.Volume {
	for _, v := range volumes {
		existing = setByName(existing, v, func(v corev1.Volume) string { return v.Name })
	}
	return existing
}

// setByName replaces the item of items named like item, or appends item.
func setByName[T any](items []T, item T, name func(T) string) []T {
	for i := range items {
		if name(items[i]) == name(item) {
			items[i] = item
			return items
		}
	}
	return append(items, item)
}
