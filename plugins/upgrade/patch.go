package upgrade

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/distribution/reference"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
)

// imageField is one image field of a resource's spec.
type imageField struct {
	// name is the field's JSON name under spec.
	name string
	// value is its current value.
	value string
}

// imageFields returns the image fields an upgrade sets on obj: the
// ClusterManager's four, which name one image; the Klusterlet's
// imagePullSpec, and registrationImagePullSpec and workImagePullSpec when
// they are set, since they must then equal it.
func imageFields(obj client.Object) []imageField {
	switch o := obj.(type) {
	case *operatorv1.ClusterManager:
		s := o.Spec
		return []imageField{
			{"registrationImagePullSpec", s.RegistrationImagePullSpec}, {"workImagePullSpec", s.WorkImagePullSpec},
			{"placementImagePullSpec", s.PlacementImagePullSpec}, {"addOnManagerImagePullSpec", s.AddOnManagerImagePullSpec},
		}
	case *operatorv1.Klusterlet:
		s := o.Spec
		fields := []imageField{{"imagePullSpec", s.ImagePullSpec}}
		if s.RegistrationImagePullSpec != "" {
			fields = append(fields, imageField{"registrationImagePullSpec", s.RegistrationImagePullSpec})
		}
		if s.WorkImagePullSpec != "" {
			fields = append(fields, imageField{"workImagePullSpec", s.WorkImagePullSpec})
		}
		return fields
	}
	return nil
}

// previousImages returns the distinct images obj's image fields name, in
// field order, leaving out unset ones.
func previousImages(obj client.Object) []string {
	var images []string
	for _, f := range imageFields(obj) {
		if f.value != "" && !slices.Contains(images, f.value) {
			images = append(images, f.value)
		}
	}
	return images
}

// imagePatch returns the JSON merge patch that sets obj's image fields to
// image and nothing else, or nil when they all name image already.
func imagePatch(obj client.Object, image string) ([]byte, error) {
	spec := map[string]string{}
	for _, f := range imageFields(obj) {
		if f.value != image {
			spec[f.name] = image
		}
	}
	if len(spec) == 0 {
		return nil, nil
	}
	data, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return nil, fmt.Errorf("encode the image patch: %w", err)
	}
	return data, nil
}

// operatorPatch returns the strategic merge patch that moves the containers
// of the operator Deployment dep that run an ocm-controller image, or one of
// previous (the images the resource named, which may be of another name), to
// image and, with pullSecret, adds the image pull Secret to its
// imagePullSecrets; nil when there is nothing to change (or dep is nil:
// there is no operator Deployment, as on an installation by other means).
func operatorPatch(dep *appsv1.Deployment, image string, previous []string, pullSecret bool) ([]byte, error) {
	if dep == nil {
		return nil, nil
	}
	var containers []map[string]string
	for _, c := range dep.Spec.Template.Spec.Containers {
		if c.Image != image && (isControllerImage(c) || slices.Contains(previous, c.Image)) {
			containers = append(containers, map[string]string{"name": c.Name, "image": image})
		}
	}
	podSpec := map[string]any{}
	if len(containers) > 0 {
		podSpec["containers"] = containers
	}
	// An operator installed before it referenced the image pull Secret
	// gets the reference (a strategic merge adds it to any others).
	ref := corev1.LocalObjectReference{Name: pullsecret.Name}
	if pullSecret && !slices.Contains(dep.Spec.Template.Spec.ImagePullSecrets, ref) {
		podSpec["imagePullSecrets"] = []corev1.LocalObjectReference{ref}
	}
	if len(podSpec) == 0 {
		return nil, nil
	}
	patch := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": podSpec}}}
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, fmt.Errorf("encode the operator image patch: %w", err)
	}
	return data, nil
}

// isControllerImage reports whether c runs an ocm-controller image, of any
// registry and tag.
func isControllerImage(c corev1.Container) bool {
	return imageRepositoryName(c.Image) == config.ControllerImageName
}

// imageRepositoryName returns the last element of image's repository path,
// without registry, tag or digest: ocm-controller for
// quay.io/kubectl-ocm/ocm-controller:v0.1.0; "" when image is no valid
// reference.
func imageRepositoryName(image string) string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return ""
	}
	p := reference.Path(named)
	return p[strings.LastIndex(p, "/")+1:]
}

// imageVersion returns the version image is of, its tag; "" when it has
// none (a digest only) or is no valid reference.
func imageVersion(image string) string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return ""
	}
	if tagged, ok := named.(reference.Tagged); ok {
		return tagged.Tag()
	}
	return ""
}
