// Package valuesfile reads the values files of `kubectl ocm hub init
// --values-file` and `kubectl ocm join --values-file`: the values of the
// Helm charts under config/charts (hub and klusterlet), so that one file
// given to `helm install` and to the verb installs the same objects.
//
// Reading is strict: a key the chart does not have is refused with its path
// and the file, and so is a value the verb cannot apply (such as the
// klusterlet chart's bootstrapHubKubeConfig, which join makes from the
// hub's token), never ignored. The verbs merge what is read with their
// flags, a flag given on the command line winning over the file.
//
// A value a chart gains goes into Hub or Klusterlet with the chart's
// spelling, is checked in ReadHub or ReadKlusterlet, and is mapped to its
// flag (Set) or to the rendered values in the verb's
// completeValuesFile; a value the verb cannot apply yet is refused there.
// The image pull credentials are Images.PullCredentials, which the verbs
// read when --image-pull-credentials is not given.
package valuesfile

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/config"
)

// Images are the charts' images values: the ocm-controller image
// <registry>/ocm-controller:<tag>, and the image pull credentials Secret.
type Images struct {
	// Registry is the registry and organization (--image-registry).
	Registry string `json:"registry,omitempty"`
	// Tag is the image's tag; empty: this version's (--image names the
	// image whole).
	Tag string `json:"tag,omitempty"`
	// ImageCredentials creates Secret
	// open-cluster-management-image-pull-credentials in the charts.
	ImageCredentials ImageCredentials `json:"imageCredentials,omitempty"`
}

// ImageCredentials are the charts' images.imageCredentials.
type ImageCredentials struct {
	CreateImageCredentials bool   `json:"createImageCredentials,omitempty"`
	UserName               string `json:"userName,omitempty"`
	Password               string `json:"password,omitempty"`
	DockerConfigJSON       string `json:"dockerConfigJson,omitempty"`
}

// Pod are the overrides of an operator's Pod (config.OperatorPod), as the
// charts spell them.
type Pod struct {
	NodeSelector       map[string]string            `json:"nodeSelector,omitempty"`
	Tolerations        []corev1.Toleration          `json:"tolerations,omitempty"`
	Resources          *corev1.ResourceRequirements `json:"resources,omitempty"`
	Affinity           *corev1.Affinity             `json:"affinity,omitempty"`
	PriorityClassName  string                       `json:"priorityClassName,omitempty"`
	PodSecurityContext *corev1.PodSecurityContext   `json:"podSecurityContext,omitempty"`
	SecurityContext    *corev1.SecurityContext      `json:"securityContext,omitempty"`
	ExtraVolumes       []corev1.Volume              `json:"extraVolumes,omitempty"`
	ExtraVolumeMounts  []corev1.VolumeMount         `json:"extraVolumeMounts,omitempty"`
}

// Over returns p with each value that o sets replaced by o's, as the
// klusterlet chart's operator.* keys win over the top-level ones.
func (p Pod) Over(o Pod) Pod {
	out := p
	pv, ov := reflect.ValueOf(&out).Elem(), reflect.ValueOf(o)
	for i := range ov.NumField() {
		if !ov.Field(i).IsZero() && !isEmpty(ov.Field(i)) {
			pv.Field(i).Set(ov.Field(i))
		}
	}
	return out
}

// OperatorPod returns p as config.OperatorPod, with imagePullSecrets. An
// empty object or list is unset, as it is to the charts (Helm's default).
func (p Pod) OperatorPod(imagePullSecrets []string) config.OperatorPod {
	var out config.OperatorPod
	out.ImagePullSecrets = imagePullSecrets
	out.NodeSelector = p.NodeSelector
	out.Tolerations = p.Tolerations
	out.Resources = unlessEmpty(p.Resources)
	out.Affinity = unlessEmpty(p.Affinity)
	out.PriorityClassName = p.PriorityClassName
	out.PodSecurityContext = unlessEmpty(p.PodSecurityContext)
	out.SecurityContext = unlessEmpty(p.SecurityContext)
	out.ExtraVolumes = p.ExtraVolumes
	out.ExtraVolumeMounts = p.ExtraVolumeMounts
	if len(out.NodeSelector) == 0 {
		out.NodeSelector = nil
	}
	if len(out.Tolerations) == 0 {
		out.Tolerations = nil
	}
	return out
}

// Scheduling returns the nodeSelector, tolerations and resources of p, for
// the ClusterManager's or Klusterlet's spec.nodePlacement and
// spec.resourceRequirement.
func (p Pod) Scheduling() config.Scheduling {
	return p.OperatorPod(nil).Scheduling
}

// unlessEmpty returns nil for a pointer to a zero value.
func unlessEmpty[T any](p *T) *T {
	var zero T
	if p == nil || equality.Semantic.DeepEqual(*p, zero) {
		return nil
	}
	return p
}

// isEmpty reports whether v is an empty map or slice, or points to a zero
// value.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Map, reflect.Slice:
		return v.Len() == 0
	case reflect.Pointer:
		return v.IsNil() || v.Elem().IsZero()
	}
	return v.IsZero()
}

// Image returns the image the values name: <registry>/ocm-controller:<tag>
// when images.tag is set, else "" (the verb's --image-registry, from
// images.registry, and this version's tag). registry is the registry to use
// when images.registry is empty or a flag replaces it.
func (i Images) Image(registry string) string {
	if i.Tag == "" {
		return ""
	}
	return strings.TrimSuffix(registry, "/") + "/" + config.ControllerImageName + ":" + i.Tag
}

// PullCredentials returns the docker config.json of
// images.imageCredentials, as the charts write it into Secret
// pullsecret.Name: dockerConfigJson as it is, else userName and password for
// registry (images.registry, or the --image-registry that replaces it);
// nil without createImageCredentials. The error names the value that is
// missing or wrong.
func (i Images) PullCredentials(registry string) ([]byte, error) {
	c := i.ImageCredentials
	if !c.CreateImageCredentials {
		return nil, nil
	}
	const key = "images.imageCredentials"
	data := []byte(c.DockerConfigJSON)
	if c.DockerConfigJSON == "" {
		if c.UserName == "" || c.Password == "" {
			return nil, fmt.Errorf("%s: createImageCredentials needs userName and password, or dockerConfigJson", key)
		}
		entry := map[string]string{"username": c.UserName, "password": c.Password, "auth": base64.StdEncoding.EncodeToString([]byte(c.UserName + ":" + c.Password))}
		var err error
		if data, err = json.Marshal(map[string]any{"auths": map[string]any{registry: entry}}); err != nil {
			return nil, err
		}
	}
	if err := pullsecret.Validate(key+" of the values file", data); err != nil {
		return nil, err
	}
	return data, nil
}

// validate checks the images values.
func (i Images) validate(verb string) []string {
	var errs []string
	if strings.HasSuffix(i.Registry, "/") {
		errs = append(errs, fmt.Sprintf("images.registry %q ends with a slash; remove it", i.Registry))
	} else if i.Registry != "" {
		if _, err := reference.ParseNormalizedNamed(i.Registry + "/" + config.ControllerImageName); err != nil {
			errs = append(errs, fmt.Sprintf("images.registry %q is not a registry and organization such as %s", i.Registry, config.DefaultImageRegistry))
		}
	}
	if i.Tag != "" && !reference.TagRegexp.MatchString(i.Tag) {
		errs = append(errs, fmt.Sprintf("images.tag %q is not an image tag such as v0.1.0", i.Tag))
	}
	return errs
}

// read decodes the values file at path into v (a pointer to Hub or
// Klusterlet) strictly: a key v does not have is an error naming its path,
// as is a value of the wrong type or a key given twice.
func read(flag, path, chart string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return decode(flag+" "+path, data, chart, v)
}

// decode decodes data, the values of chart from source (such as
// "--values-file FILE"), into v as read does.
func decode(source string, data []byte, chart string, v any) error {
	jsonData, err := yaml.YAMLToJSON(data)
	if err != nil {
		return fmt.Errorf("%s: not YAML: %w", source, err)
	}
	var raw any
	if err := json.Unmarshal(jsonData, &raw); err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	if raw == nil {
		return nil
	}
	if _, ok := raw.(map[string]any); !ok {
		return fmt.Errorf("%s: holds no YAML object; write the %s chart's values, as in config/charts/%s/values.yaml", source, chart, chart)
	}
	if key := unknownKey(reflect.TypeOf(v), raw, ""); key != "" {
		return fmt.Errorf("%s: unknown key %s: the %s chart has no such value (see config/charts/%s/values.yaml and docs/install.md#one-values-file-for-the-cli-helm-and-gitops); fix or remove it",
			source, key, chart, chart)
	}
	if err := yaml.UnmarshalStrict(data, v); err != nil {
		msg := strings.TrimPrefix(err.Error(), "error unmarshaling JSON: while decoding JSON: ")
		return fmt.Errorf("%s: %s; write the values as config/charts/%s/values.yaml has them", source, strings.TrimPrefix(msg, "json: "), chart)
	}
	return nil
}

// unmarshalers are the types that decode themselves (resource.Quantity,
// intstr.IntOrString, ...): their keys are theirs to check.
var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// unknownKey returns the path of the first key of raw (decoded JSON) that
// type t does not have, in key order; "" when there is none.
func unknownKey(t reflect.Type, raw any, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return ""
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := raw.(map[string]any)
		if !ok {
			return ""
		}
		fields := jsonFields(t)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, ok := fields[k]
			if !ok {
				return join(path, k)
			}
			if bad := unknownKey(ft, m[k], join(path, k)); bad != "" {
				return bad
			}
		}
	case reflect.Slice:
		items, _ := raw.([]any)
		for i, item := range items {
			if bad := unknownKey(t.Elem(), item, fmt.Sprintf("%s[%d]", path, i)); bad != "" {
				return bad
			}
		}
	case reflect.Map:
		m, _ := raw.(map[string]any)
		for k, item := range m {
			if bad := unknownKey(t.Elem(), item, join(path, k)); bad != "" {
				return bad
			}
		}
	}
	return ""
}

// jsonFields returns the fields of struct t by JSON name, those of
// embedded and inline structs among them.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if (f.Anonymous && name == "") || strings.Contains(opts, "inline") {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// refused returns an error listing problems of the values file at path.
func refused(flag, path string, problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s %s: %s", flag, path, strings.Join(problems, "; "))
}
