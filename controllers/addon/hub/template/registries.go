package template

import (
	"bytes"
	"encoding/json"
	"fmt"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// clusterImageRegistries is the document of OCM's ManagedCluster annotation
// open-cluster-management.io/image-registries, as OCM's add-on framework
// reads it.
type clusterImageRegistries struct {
	// PullSecret names a Secret of the hub as <namespace>.<name>; OCM's
	// add-on framework does not read it, nor does this renderer: the
	// agents pull with the image pull Secret the Klusterlet operator copies
	// into their namespace.
	PullSecret string `json:"pullSecret,omitempty"`
	// Registries are the mirrors: Source, a prefix of the image (empty:
	// every image), is replaced by Mirror.
	Registries []struct {
		Mirror string `json:"mirror"`
		Source string `json:"source"`
	} `json:"registries"`
}

// ParseClusterImageRegistries returns the image mirrors of the value of a
// ManagedCluster's annotation open-cluster-management.io/image-registries,
// such as {"registries":[{"mirror":"mirror.example.com/ocm","source":"quay.io/ocm"}]};
// nil for an empty value. The error says what is wrong with the value and
// how it should look.
func ParseClusterImageRegistries(value string) ([]addonv1alpha1.ImageMirror, error) {
	if value == "" {
		return nil, nil
	}
	var doc clusterImageRegistries
	dec := json.NewDecoder(bytes.NewReader([]byte(value)))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("annotation %s is not a JSON document of image mirrors (%v); write it as %s",
			clusterv1.ClusterImageRegistriesAnnotationKey, err, registriesExample)
	}
	if dec.More() {
		return nil, fmt.Errorf("annotation %s holds more than one JSON document; write one, as %s",
			clusterv1.ClusterImageRegistriesAnnotationKey, registriesExample)
	}
	out := make([]addonv1alpha1.ImageMirror, 0, len(doc.Registries))
	for i, r := range doc.Registries {
		if r.Mirror == "" {
			return nil, fmt.Errorf("annotation %s: registries[%d] has no mirror; give each entry the registry to pull from, as %s",
				clusterv1.ClusterImageRegistriesAnnotationKey, i, registriesExample)
		}
		out = append(out, addonv1alpha1.ImageMirror{Mirror: r.Mirror, Source: r.Source})
	}
	return out, nil
}

// registriesExample is a valid value of the annotation, for messages.
const registriesExample = `{"registries":[{"mirror":"mirror.example.com/ocm","source":"quay.io/open-cluster-management"}]}`
