package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
)

// ConvertTo converts this AddOnDeploymentConfig to the v1beta1 hub version;
// both versions hold the same fields.
func (adc *AddOnDeploymentConfig) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*v1beta1.AddOnDeploymentConfig)
	if !ok {
		return hubTypeError(dst, dstRaw)
	}
	dst.ObjectMeta = copyMeta(&adc.ObjectMeta)
	in := adc.Spec
	dst.Spec = v1beta1.AddOnDeploymentConfigSpec{
		CustomizedVariables: mapSlice(in.CustomizedVariables, func(v CustomizedVariable) v1beta1.CustomizedVariable {
			return v1beta1.CustomizedVariable{Name: v.Name, Value: v.Value}
		}),
		NodePlacement: mapPtr(in.NodePlacement, func(p NodePlacement) v1beta1.NodePlacement {
			return v1beta1.NodePlacement{NodeSelector: copyStringMap(p.NodeSelector), Tolerations: tolerationsCopy(p.Tolerations)}
		}),
		Registries: mapSlice(in.Registries, func(m ImageMirror) v1beta1.ImageMirror {
			return v1beta1.ImageMirror{Mirror: m.Mirror, Source: m.Source}
		}),
		ProxyConfig: v1beta1.ProxyConfig{
			HTTPProxy:  in.ProxyConfig.HTTPProxy,
			HTTPSProxy: in.ProxyConfig.HTTPSProxy,
			CABundle:   bytesCopy(in.ProxyConfig.CABundle),
			NoProxy:    in.ProxyConfig.NoProxy,
		},
		AgentInstallNamespace: in.AgentInstallNamespace,
		ResourceRequirements: mapSlice(in.ResourceRequirements, func(r ContainerResourceRequirements) v1beta1.ContainerResourceRequirements {
			return v1beta1.ContainerResourceRequirements{ContainerID: r.ContainerID, Resources: *r.Resources.DeepCopy()}
		}),
	}
	return nil
}

// ConvertFrom sets this AddOnDeploymentConfig from the v1beta1 hub version.
func (adc *AddOnDeploymentConfig) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*v1beta1.AddOnDeploymentConfig)
	if !ok {
		return hubTypeError(src, srcRaw)
	}
	adc.ObjectMeta = copyMeta(&src.ObjectMeta)
	in := src.Spec
	adc.Spec = AddOnDeploymentConfigSpec{
		CustomizedVariables: mapSlice(in.CustomizedVariables, func(v v1beta1.CustomizedVariable) CustomizedVariable {
			return CustomizedVariable{Name: v.Name, Value: v.Value}
		}),
		NodePlacement: mapPtr(in.NodePlacement, func(p v1beta1.NodePlacement) NodePlacement {
			return NodePlacement{NodeSelector: copyStringMap(p.NodeSelector), Tolerations: tolerationsCopy(p.Tolerations)}
		}),
		Registries: mapSlice(in.Registries, func(m v1beta1.ImageMirror) ImageMirror {
			return ImageMirror{Mirror: m.Mirror, Source: m.Source}
		}),
		ProxyConfig: ProxyConfig{
			HTTPProxy:  in.ProxyConfig.HTTPProxy,
			HTTPSProxy: in.ProxyConfig.HTTPSProxy,
			CABundle:   bytesCopy(in.ProxyConfig.CABundle),
			NoProxy:    in.ProxyConfig.NoProxy,
		},
		AgentInstallNamespace: in.AgentInstallNamespace,
		ResourceRequirements: mapSlice(in.ResourceRequirements, func(r v1beta1.ContainerResourceRequirements) ContainerResourceRequirements {
			return ContainerResourceRequirements{ContainerID: r.ContainerID, Resources: *r.Resources.DeepCopy()}
		}),
	}
	return nil
}

// tolerationsCopy deep-copies a toleration list, keeping nil nil.
func tolerationsCopy(in []corev1.Toleration) []corev1.Toleration {
	return mapSlice(in, func(t corev1.Toleration) corev1.Toleration { return *t.DeepCopy() })
}

// copyStringMap copies a string map, keeping nil nil.
func copyStringMap(in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

// bytesCopy copies a byte slice, keeping nil nil.
func bytesCopy(in []byte) []byte {
	if in == nil {
		return nil
	}
	return append([]byte{}, in...)
}
