package pullsecret

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
)

// Name is the image pull Secret's name, OCM's, in the operator's namespace
// and in every namespace it is copied to.
const Name = "open-cluster-management-image-pull-credentials"

// CopyLabel marks a copy of the Secret an operator wrote; its value is the
// namespace copied from. An operator deletes only Secrets that carry it.
const CopyLabel = "operator.open-cluster-management.io/image-pull-credentials-copied-from"

// Validate checks that data, read from file, is a docker config.json as
// `docker login` writes it, or the value of a Secret's .dockerconfigjson:
// a JSON object with a non-empty "auths". The error names file and what is
// wrong.
func Validate(file string, data []byte) error {
	var cfg struct {
		Auths map[string]json.RawMessage `json:"auths"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("image pull credentials %s are not a docker config.json: %w; give the file `docker login` writes (~/.docker/config.json) or a Secret's .dockerconfigjson, {\"auths\":{\"<registry>\":{\"auth\":\"<base64 user:password>\"}}}", file, err)
	}
	if len(cfg.Auths) == 0 {
		return fmt.Errorf("image pull credentials %s have no registry under \"auths\": the kubelet would pull with no credentials; log in to the registry (`docker login <registry>`, which fills auths) or write {\"auths\":{\"<registry>\":{\"auth\":\"<base64 user:password>\"}}}", file)
	}
	return nil
}

// Secret returns the image pull Secret in namespace holding the docker
// config.json data, labeled as part of the product.
func Secret(namespace string, data []byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: Name, Labels: map[string]string{apply.PartOfLabelKey: apply.PartOfLabelValue}},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: data},
	}
}

// Append returns objs with the image pull Secret of namespace holding the
// docker config.json data (Secret) added last, or objs for nil data: what
// the CLI applies with --image-pull-credentials and the cluster importer
// with the values' imageCredentials, next to the operator they install.
// It never writes into objs' backing array.
func Append(objs []*unstructured.Unstructured, namespace string, data []byte) ([]*unstructured.Unstructured, error) {
	if data == nil {
		return objs, nil
	}
	u, err := Unstructured(Secret(namespace, data))
	if err != nil {
		return nil, err
	}
	return append(objs[:len(objs):len(objs)], u), nil
}

// Unstructured returns s as an object to apply.
func Unstructured(s *corev1.Secret) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s)
	if err != nil {
		return nil, fmt.Errorf("convert Secret %s/%s: %w", s.Namespace, s.Name, err)
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}

// Copy returns the copy of source in namespace: its type and data, the
// part-of label and CopyLabel naming source's namespace.
func Copy(source *corev1.Secret, namespace string) *corev1.Secret {
	s := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: Name, Labels: CopyLabels(nil, source.Namespace)},
		Type:       source.Type,
		Data:       maps.Clone(source.Data),
	}
	if s.Type == "" {
		s.Type = corev1.SecretTypeDockerConfigJson
	}
	return s
}

// CopyLabels returns labels with those of a copy from namespace from added.
func CopyLabels(labels map[string]string, from string) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	out[apply.PartOfLabelKey] = apply.PartOfLabelValue
	out[CopyLabel] = from
	return out
}

// Wire makes the rendered objects objs pull with source, the image pull
// Secret of the operator's namespace: it sets imagePullSecrets to Name on
// every Deployment's pod template and returns objs with a copy of source
// (Copy) in each namespace holding a Deployment, other than source's own.
// A nil source changes nothing: the Deployments rendered without it
// reference no pull Secret, and the copies applied before are pruned as
// objects no longer rendered.
func Wire(objs []*unstructured.Unstructured, source *corev1.Secret) ([]*unstructured.Unstructured, error) {
	if source == nil {
		return objs, nil
	}
	var namespaces []string
	seen := map[string]bool{source.Namespace: true}
	for _, obj := range objs {
		if obj.GetKind() != "Deployment" {
			continue
		}
		if err := Reference(obj); err != nil {
			return nil, err
		}
		if ns := obj.GetNamespace(); !seen[ns] {
			seen[ns] = true
			namespaces = append(namespaces, ns)
		}
	}
	out := objs
	for _, ns := range namespaces {
		u, err := Unstructured(Copy(source, ns))
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// Reference adds Name to the imagePullSecrets of the pod template of the
// Deployment dep, once.
func Reference(dep *unstructured.Unstructured) error {
	refs, _, err := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "imagePullSecrets")
	if err != nil {
		return fmt.Errorf("read the imagePullSecrets of %s: %w", apply.Describe(dep), err)
	}
	for _, ref := range refs {
		if m, ok := ref.(map[string]any); ok && m["name"] == Name {
			return nil
		}
	}
	refs = append(refs, map[string]any{"name": Name})
	if err := unstructured.SetNestedSlice(dep.Object, refs, "spec", "template", "spec", "imagePullSecrets"); err != nil {
		return fmt.Errorf("set the imagePullSecrets of %s: %w", apply.Describe(dep), err)
	}
	return nil
}

// Get reads the image pull Secret of namespace through r (an operator's
// cache); nil when there is none or namespace is empty.
func Get(ctx context.Context, r client.Reader, namespace string) (*corev1.Secret, error) {
	if namespace == "" {
		return nil, nil
	}
	s := &corev1.Secret{}
	err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: Name}, s)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read the image pull Secret %s/%s: %w", namespace, Name, err)
	}
	return s, nil
}
