package v1alpha1

import (
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
)

// cmaV1alpha1Fields are the v1alpha1 fields of a ClusterManagementAddOn that
// v1beta1 lacks, kept under v1beta1.V1alpha1FieldsAnnotation.
type cmaV1alpha1Fields struct {
	// AddOnConfiguration is spec.addOnConfiguration.
	AddOnConfiguration *ConfigCoordinates `json:"addOnConfiguration,omitempty"`
}

// ConvertTo converts this ClusterManagementAddOn to the v1beta1 hub version.
// spec.supportedConfigs become spec.defaultConfigs, and
// spec.addOnConfiguration moves into an annotation.
func (cma *ClusterManagementAddOn) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*v1beta1.ClusterManagementAddOn)
	if !ok {
		return hubTypeError(dst, dstRaw)
	}
	dst.ObjectMeta = copyMeta(&cma.ObjectMeta)
	dst.Spec = cmaSpecToV1beta1(cma.Spec)
	dst.Status = cmaStatusToV1beta1(cma.Status)

	var extra cmaV1alpha1Fields
	if cma.Spec.AddOnConfiguration != (ConfigCoordinates{}) {
		extra.AddOnConfiguration = &cma.Spec.AddOnConfiguration
	}
	return putAnnotationJSON(&dst.ObjectMeta, v1beta1.V1alpha1FieldsAnnotation, extra)
}

// ConvertFrom sets this ClusterManagementAddOn from the v1beta1 hub version,
// restoring what ConvertTo kept in annotations.
func (cma *ClusterManagementAddOn) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*v1beta1.ClusterManagementAddOn)
	if !ok {
		return hubTypeError(src, srcRaw)
	}
	cma.ObjectMeta = copyMeta(&src.ObjectMeta)
	var extra cmaV1alpha1Fields
	if err := takeAnnotationJSON(&cma.ObjectMeta, v1beta1.V1alpha1FieldsAnnotation, &extra); err != nil {
		return err
	}
	cma.Spec = cmaSpecFromV1beta1(src.Spec)
	if extra.AddOnConfiguration != nil {
		cma.Spec.AddOnConfiguration = *extra.AddOnConfiguration
	}
	cma.Status = cmaStatusFromV1beta1(src.Status)
	return nil
}

// cmaSpecToV1beta1 maps the spec of a ClusterManagementAddOn, all but
// addOnConfiguration. A supported configuration without a default becomes a
// defaultConfigs entry named v1beta1.ReservedNoDefaultConfigName, as in OCM.
func cmaSpecToV1beta1(in ClusterManagementAddOnSpec) v1beta1.ClusterManagementAddOnSpec {
	return v1beta1.ClusterManagementAddOnSpec{
		AddOnMeta:               addOnMetaToV1beta1(in.AddOnMeta),
		DefaultConfigs:          mapSlice(in.SupportedConfigs, supportedConfigToV1beta1),
		InstallStrategy:         installStrategyToV1beta1(in.InstallStrategy),
		HostedModeAutoDiscovery: autoDiscoveryToV1beta1(in.HostedModeAutoDiscovery),
	}
}

// cmaSpecFromV1beta1 maps the spec of a ClusterManagementAddOn back.
func cmaSpecFromV1beta1(in v1beta1.ClusterManagementAddOnSpec) ClusterManagementAddOnSpec {
	return ClusterManagementAddOnSpec{
		AddOnMeta:               addOnMetaFromV1beta1(in.AddOnMeta),
		SupportedConfigs:        mapSlice(in.DefaultConfigs, supportedConfigFromV1beta1),
		InstallStrategy:         installStrategyFromV1beta1(in.InstallStrategy),
		HostedModeAutoDiscovery: autoDiscoveryFromV1beta1(in.HostedModeAutoDiscovery),
	}
}

// supportedConfigToV1beta1 maps a supportedConfigs entry to a defaultConfigs entry.
func supportedConfigToV1beta1(in ConfigMeta) v1beta1.AddOnConfig {
	out := v1beta1.AddOnConfig{
		ConfigGroupResource: groupResourceToV1beta1(in.ConfigGroupResource),
		ConfigReferent:      v1beta1.ConfigReferent{Name: v1beta1.ReservedNoDefaultConfigName},
	}
	if in.DefaultConfig != nil {
		out.ConfigReferent = referentToV1beta1(*in.DefaultConfig)
	}
	return out
}

// supportedConfigFromV1beta1 maps a defaultConfigs entry to a supportedConfigs entry.
func supportedConfigFromV1beta1(in v1beta1.AddOnConfig) ConfigMeta {
	out := ConfigMeta{ConfigGroupResource: groupResourceFromV1beta1(in.ConfigGroupResource)}
	if in.Name != v1beta1.ReservedNoDefaultConfigName {
		ref := referentFromV1beta1(in.ConfigReferent)
		out.DefaultConfig = &ref
	}
	return out
}

// installStrategyToV1beta1 and installStrategyFromV1beta1 map InstallStrategy.
func installStrategyToV1beta1(in InstallStrategy) v1beta1.InstallStrategy {
	return v1beta1.InstallStrategy{
		Type: in.Type,
		Placements: mapSlice(in.Placements, func(p PlacementStrategy) v1beta1.PlacementStrategy {
			return v1beta1.PlacementStrategy{
				PlacementRef:    placementRefToV1beta1(p.PlacementRef),
				Configs:         mapSlice(p.Configs, addOnConfigToV1beta1),
				RolloutStrategy: *p.RolloutStrategy.DeepCopy(),
			}
		}),
	}
}

func installStrategyFromV1beta1(in v1beta1.InstallStrategy) InstallStrategy {
	return InstallStrategy{
		Type: in.Type,
		Placements: mapSlice(in.Placements, func(p v1beta1.PlacementStrategy) PlacementStrategy {
			return PlacementStrategy{
				PlacementRef:    placementRefFromV1beta1(p.PlacementRef),
				Configs:         mapSlice(p.Configs, addOnConfigFromV1beta1),
				RolloutStrategy: *p.RolloutStrategy.DeepCopy(),
			}
		}),
	}
}

// cmaStatusToV1beta1 maps the status of a ClusterManagementAddOn; the
// versions differ only in the JSON spelling of defaultConfigReferences.
func cmaStatusToV1beta1(in ClusterManagementAddOnStatus) v1beta1.ClusterManagementAddOnStatus {
	return v1beta1.ClusterManagementAddOnStatus{
		DefaultConfigReferences: mapSlice(in.DefaultConfigReferences, func(r DefaultConfigReference) v1beta1.DefaultConfigReference {
			return v1beta1.DefaultConfigReference{
				ConfigGroupResource: groupResourceToV1beta1(r.ConfigGroupResource),
				DesiredConfig:       mapPtr(r.DesiredConfig, specHashToV1beta1),
			}
		}),
		InstallProgressions: mapSlice(in.InstallProgressions, func(p InstallProgression) v1beta1.InstallProgression {
			return v1beta1.InstallProgression{
				PlacementRef: placementRefToV1beta1(p.PlacementRef),
				ConfigReferences: mapSlice(p.ConfigReferences, func(r InstallConfigReference) v1beta1.InstallConfigReference {
					return v1beta1.InstallConfigReference{
						ConfigGroupResource: groupResourceToV1beta1(r.ConfigGroupResource),
						DesiredConfig:       mapPtr(r.DesiredConfig, specHashToV1beta1),
						LastKnownGoodConfig: mapPtr(r.LastKnownGoodConfig, specHashToV1beta1),
						LastAppliedConfig:   mapPtr(r.LastAppliedConfig, specHashToV1beta1),
					}
				}),
				Conditions: conditionsCopy(p.Conditions),
			}
		}),
	}
}

// cmaStatusFromV1beta1 maps the status of a ClusterManagementAddOn back.
func cmaStatusFromV1beta1(in v1beta1.ClusterManagementAddOnStatus) ClusterManagementAddOnStatus {
	return ClusterManagementAddOnStatus{
		DefaultConfigReferences: mapSlice(in.DefaultConfigReferences, func(r v1beta1.DefaultConfigReference) DefaultConfigReference {
			return DefaultConfigReference{
				ConfigGroupResource: groupResourceFromV1beta1(r.ConfigGroupResource),
				DesiredConfig:       mapPtr(r.DesiredConfig, specHashFromV1beta1),
			}
		}),
		InstallProgressions: mapSlice(in.InstallProgressions, func(p v1beta1.InstallProgression) InstallProgression {
			return InstallProgression{
				PlacementRef: placementRefFromV1beta1(p.PlacementRef),
				ConfigReferences: mapSlice(p.ConfigReferences, func(r v1beta1.InstallConfigReference) InstallConfigReference {
					return InstallConfigReference{
						ConfigGroupResource: groupResourceFromV1beta1(r.ConfigGroupResource),
						DesiredConfig:       mapPtr(r.DesiredConfig, specHashFromV1beta1),
						LastKnownGoodConfig: mapPtr(r.LastKnownGoodConfig, specHashFromV1beta1),
						LastAppliedConfig:   mapPtr(r.LastAppliedConfig, specHashFromV1beta1),
					}
				}),
				Conditions: conditionsCopy(p.Conditions),
			}
		}),
	}
}

// autoDiscoveryToV1beta1 maps spec.hostedModeAutoDiscovery.
func autoDiscoveryToV1beta1(in *HostedModeAutoDiscoveryConfig) *v1beta1.HostedModeAutoDiscoveryConfig {
	if in == nil {
		return nil
	}
	return &v1beta1.HostedModeAutoDiscoveryConfig{Mode: v1beta1.HostedModeAutoDiscoveryModeType(in.Mode)}
}

// autoDiscoveryFromV1beta1 maps spec.hostedModeAutoDiscovery back.
func autoDiscoveryFromV1beta1(in *v1beta1.HostedModeAutoDiscoveryConfig) *HostedModeAutoDiscoveryConfig {
	if in == nil {
		return nil
	}
	return &HostedModeAutoDiscoveryConfig{Mode: HostedModeAutoDiscoveryModeType(in.Mode)}
}
