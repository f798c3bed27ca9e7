package config

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"text/template"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
)

//go:embed hub/*.yaml hub-operator/*.yaml agent/*.yaml cluster-bootstrap/*.yaml klusterlet-operator/*.yaml
var manifestFiles embed.FS

// Default namespaces and names, as OCM has them.
const (
	// HubNamespace holds the hub controller.
	HubNamespace = "open-cluster-management-hub"
	// OperatorNamespace holds the bootstrap ServiceAccounts on the hub.
	OperatorNamespace = identity.BootstrapNamespace
	// AgentNamespace holds the agent and its secrets on a managed cluster.
	AgentNamespace = "open-cluster-management-agent"
	// DefaultImageRegistry is the registry and organization the
	// ocm-controller image is pulled from by default.
	DefaultImageRegistry = "quay.io/kubectl-ocm"
	// ControllerImageName is the repository name of the ocm-controller
	// image within its registry.
	ControllerImageName = "ocm-controller"
	// ManagedKubeconfigSecret is the Secret (key kubeconfig) holding the
	// managed cluster's kubeconfig next to a hosted agent (OCM's name).
	ManagedKubeconfigSecret = "external-managed-kubeconfig"
)

// ControllerImage returns the ocm-controller image of version ver in
// registry: <registry>/ocm-controller:<tag>, the tag being
// version.ImageTag(ver), never latest.
func ControllerImage(registry, ver string) string {
	return strings.TrimSuffix(registry, "/") + "/" + ControllerImageName + ":" + version.ImageTag(ver)
}

// DefaultImage is the ocm-controller image the manifests run when no image is
// given: the image of this build's version in DefaultImageRegistry.
func DefaultImage() string { return ControllerImage(DefaultImageRegistry, version.Version) }

// HostedKlusterletName is the name of the Klusterlet of a managed cluster
// whose agent runs on a hosting cluster (Hosted mode): klusterlet-<cluster>.
// As in OCM, it is also the agent's namespace on the hosting cluster.
func HostedKlusterletName(cluster string) string { return identity.HostedAgentNamespace(cluster) }

// HostedAgentDeployment names the Deployment of a hosted agent.
func HostedAgentDeployment(cluster string) string { return HostedKlusterletName(cluster) + "-agent" }

// HubObjects returns everything the ClusterManager operator installs on the
// hub: the hub CRDs, then the rendered config/hub manifests.
func HubObjects(v HubValues) ([]*unstructured.Unstructured, error) {
	if err := ValidateConversionWebhookURL(v.ConversionWebhookURL); err != nil {
		return nil, err
	}
	v = v.withDefaults()
	crds, err := HubCRDs()
	if err != nil {
		return nil, err
	}
	for _, crd := range crds {
		if conversion.IsConverted(crd.Name) {
			crd.Spec.Conversion = conversion.WebhookConversion(v.HubNamespace, v.ConversionWebhookURL)
		}
	}
	manifests, err := Render("hub", v)
	if err != nil {
		return nil, err
	}
	return withCRDs(crds, manifests)
}

// AgentObjects returns everything `kubectl ocm join` installs on a managed
// cluster: the managed-cluster CRDs, then the rendered config/agent manifests.
func AgentObjects(v AgentValues) ([]*unstructured.Unstructured, error) {
	if v.ClusterName == "" {
		return nil, errors.New("agent manifests need a cluster name")
	}
	crds, err := ManagedClusterCRDs()
	if err != nil {
		return nil, err
	}
	v, err = v.withDefaults().withKlusterletFlags()
	if err != nil {
		return nil, err
	}
	manifests, err := Render("agent", v)
	if err != nil {
		return nil, err
	}
	return withCRDs(crds, manifests)
}

// ClusterBootstrapObjects returns what `kubectl ocm hub token --cluster-name`
// installs on the hub: a bootstrap ServiceAccount bound to cluster and its
// binding to the bootstrap role.
func ClusterBootstrapObjects(cluster string) ([]*unstructured.Unstructured, error) {
	if err := identity.ValidateClusterName(cluster); err != nil {
		return nil, err
	}
	return Render("cluster-bootstrap", ClusterBootstrapValues{ClusterName: cluster})
}

// hostedAgentFiles are the files of config/agent that render a hosted
// agent on the hosting cluster, each in its Hosted form (AgentValues.Hosted):
// namespace klusterlet-<cluster>, its identity and rights, the Secrets, the
// Klusterlet, the agent's Deployment and NetworkPolicies. The other files
// hold the agent's rights on its managed cluster, which a hosted agent
// reaches with the managed cluster's kubeconfig instead.
var hostedAgentFiles = []string{"00-namespace.yaml", "10-rbac.yaml", "20-bootstrap-secret.yaml", "30-klusterlet.yaml", "40-deployment.yaml", "60-network-policies.yaml"}

// HostedAgentObjects returns what `kubectl ocm join --mode hosted` installs:
// on the hosting cluster the Klusterlet CRD, then the config/agent manifests
// of hostedAgentFiles rendered in Hosted mode (namespace klusterlet-<cluster>,
// RBAC, Secrets, Klusterlet, agent Deployment, NetworkPolicies); on the
// managed cluster only the ClusterClaim and AppliedManifestWork CRDs.
func HostedAgentObjects(v AgentValues) (hosting, managed []*unstructured.Unstructured, err error) {
	if v.ClusterName == "" {
		return nil, nil, errors.New("agent manifests need a cluster name")
	}
	crds, err := ManagedClusterCRDs()
	if err != nil {
		return nil, nil, err
	}
	var hostingCRDs, managedCRDs []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range crds {
		if crd.Name == KlusterletsCRDName {
			hostingCRDs = append(hostingCRDs, crd)
		} else {
			managedCRDs = append(managedCRDs, crd)
		}
	}
	if v, err = v.withHostedDefaults().withKlusterletFlags(); err != nil {
		return nil, nil, err
	}
	var manifests []*unstructured.Unstructured
	for _, name := range hostedAgentFiles {
		objs, err := RenderFile(path.Join("agent", name), v)
		if err != nil {
			return nil, nil, err
		}
		manifests = append(manifests, objs...)
	}
	if hosting, err = withCRDs(hostingCRDs, manifests); err != nil {
		return nil, nil, err
	}
	if managed, err = withCRDs(managedCRDs, nil); err != nil {
		return nil, nil, err
	}
	return hosting, managed, nil
}

func withCRDs(crds []*apiextensionsv1.CustomResourceDefinition, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(crds)+len(objs))
	for _, crd := range crds {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		if err != nil {
			return nil, fmt.Errorf("convert CRD %s: %w", crd.Name, err)
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetAPIVersion(apiextensionsv1.SchemeGroupVersion.String())
		u.SetKind("CustomResourceDefinition")
		unstructured.RemoveNestedField(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		// As on every rendered object; it also lets `kubectl wait -l` find
		// the CRDs before objects of their kinds are applied.
		u.SetLabels(map[string]string{apply.PartOfLabelKey: apply.PartOfLabelValue})
		out = append(out, u)
	}
	return append(out, objs...), nil
}

// Render executes every *.yaml template in the embedded directory dir ("hub",
// "hub-operator", "agent", "cluster-bootstrap" or "klusterlet-operator"), in file-name order, with values, and decodes the
// resulting YAML documents (RenderFile).
func Render(dir string, values any) ([]*unstructured.Unstructured, error) {
	entries, err := fs.ReadDir(manifestFiles, dir)
	if err != nil {
		return nil, fmt.Errorf("read embedded manifests %s: %w", dir, err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	var out []*unstructured.Unstructured
	for _, name := range names {
		objs, err := RenderFile(path.Join(dir, name), values)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

// RenderFile executes one embedded template, such as "agent/30-klusterlet.yaml",
// with values and decodes the resulting YAML documents. Empty documents are
// skipped. Every object gets the PartOfLabel, which the files generated by
// controller-gen cannot carry, and every Namespace whose manifest sets no
// Pod Security label those of podsecurity.Labels: such a namespace holds
// only the product's own Pods, which meet restricted. The manifest of a
// namespace the product shares with OCM's add-ons writes the labels of
// podsecurity.SharedLabels itself.
func RenderFile(file string, values any) ([]*unstructured.Unstructured, error) {
	raw, err := manifestFiles.ReadFile(file)
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New(file).Funcs(templateFuncs).Option("missingkey=error").Parse(string(raw))
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, values); err != nil {
		return nil, fmt.Errorf("render %s: %w", file, err)
	}
	objs, err := DecodeDocuments(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("decode rendered %s: %w", file, err)
	}
	for _, obj := range objs {
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[apply.PartOfLabelKey] = apply.PartOfLabelValue
		if obj.GetAPIVersion() == "v1" && obj.GetKind() == "Namespace" && !podsecurity.HasLabels(labels) {
			labels = podsecurity.WithLabels(labels)
		}
		obj.SetLabels(labels)
	}
	return objs, nil
}

// DecodeDocuments decodes a multi-document YAML (or JSON) stream into
// objects, skipping empty documents; a document without apiVersion or kind
// is an error.
func DecodeDocuments(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document without apiVersion and kind: %v", u.Object)
		}
		out = append(out, u)
	}
}
