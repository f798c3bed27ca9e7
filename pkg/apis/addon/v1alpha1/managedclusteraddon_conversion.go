package v1alpha1

import (
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
)

// mcaV1alpha1Fields are the v1alpha1 fields of a ManagedClusterAddOn that
// v1beta1 lacks, kept under v1beta1.V1alpha1FieldsAnnotation. The lists are
// indexed like status.configReferences and status.registrations and are
// applied back only while those lists keep their length.
type mcaV1alpha1Fields struct {
	// StatusAddOnConfiguration is status.addOnConfiguration.
	StatusAddOnConfiguration *ConfigCoordinates `json:"statusAddOnConfiguration,omitempty"`
	// KubeClientDriver is status.kubeClientDriver when no registration is a
	// kubeClient one that could carry it.
	KubeClientDriver string `json:"kubeClientDriver,omitempty"`
	// OrganizationUnits are the subjects' organization units of the
	// kube-apiserver-client registrations, which v1beta1 kubeClient subjects lack.
	OrganizationUnits [][]string `json:"organizationUnits,omitempty"`
	// ConfigReferents are the deprecated namespace and name of each config
	// reference, when one differs from its desiredConfig.
	ConfigReferents []ConfigReferent `json:"configReferents,omitempty"`
}

// mcaV1beta1Fields are the v1beta1 fields of a ManagedClusterAddOn that
// v1alpha1 lacks, kept under v1beta1.V1beta1FieldsAnnotation.
type mcaV1beta1Fields struct {
	// RegistrationDrivers are the drivers of status.registrations by index,
	// when the kubeClient registrations do not all share one driver (v1alpha1
	// has a single status.kubeClientDriver).
	RegistrationDrivers []string `json:"registrationDrivers,omitempty"`
}

// ConvertTo converts this ManagedClusterAddOn to the v1beta1 hub version.
// spec.installNamespace moves into the annotation
// v1beta1.InstallNamespaceAnnotation, as in OCM; status.kubeClientDriver
// becomes the driver of each kubeClient registration.
func (mca *ManagedClusterAddOn) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*v1beta1.ManagedClusterAddOn)
	if !ok {
		return hubTypeError(dst, dstRaw)
	}
	dst.ObjectMeta = copyMeta(&mca.ObjectMeta)
	var restore mcaV1beta1Fields
	if err := takeAnnotationJSON(&dst.ObjectMeta, v1beta1.V1beta1FieldsAnnotation, &restore); err != nil {
		return err
	}
	if mca.Spec.InstallNamespace != "" {
		setAnnotation(&dst.ObjectMeta, v1beta1.InstallNamespaceAnnotation, mca.Spec.InstallNamespace)
	}
	dst.Spec = v1beta1.ManagedClusterAddOnSpec{Configs: mapSlice(mca.Spec.Configs, addOnConfigToV1beta1)}
	var keep mcaV1alpha1Fields
	dst.Status = mcaStatusToV1beta1(mca.Status, restore, &keep)
	return putAnnotationJSON(&dst.ObjectMeta, v1beta1.V1alpha1FieldsAnnotation, keep)
}

// ConvertFrom sets this ManagedClusterAddOn from the v1beta1 hub version,
// restoring what ConvertTo kept in annotations.
func (mca *ManagedClusterAddOn) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*v1beta1.ManagedClusterAddOn)
	if !ok {
		return hubTypeError(src, srcRaw)
	}
	mca.ObjectMeta = copyMeta(&src.ObjectMeta)
	var restore mcaV1alpha1Fields
	if err := takeAnnotationJSON(&mca.ObjectMeta, v1beta1.V1alpha1FieldsAnnotation, &restore); err != nil {
		return err
	}
	mca.Spec = ManagedClusterAddOnSpec{Configs: mapSlice(src.Spec.Configs, addOnConfigFromV1beta1)}
	if ns := mca.Annotations[v1beta1.InstallNamespaceAnnotation]; ns != "" {
		mca.Spec.InstallNamespace = ns
		deleteAnnotation(&mca.ObjectMeta, v1beta1.InstallNamespaceAnnotation)
	}
	var keep mcaV1beta1Fields
	mca.Status = mcaStatusFromV1beta1(src.Status, restore, &keep)
	return putAnnotationJSON(&mca.ObjectMeta, v1beta1.V1beta1FieldsAnnotation, keep)
}

// mcaStatusToV1beta1 maps the status of a ManagedClusterAddOn, using restore
// for the v1beta1 fields an earlier conversion kept, and recording in keep
// the v1alpha1 fields v1beta1 cannot hold.
func mcaStatusToV1beta1(in ManagedClusterAddOnStatus, restore mcaV1beta1Fields, keep *mcaV1alpha1Fields) v1beta1.ManagedClusterAddOnStatus {
	out := v1beta1.ManagedClusterAddOnStatus{
		Conditions:       conditionsCopy(in.Conditions),
		RelatedObjects:   mapSlice(in.RelatedObjects, relatedObjectToV1beta1),
		AddOnMeta:        addOnMetaToV1beta1(in.AddOnMeta),
		SupportedConfigs: mapSlice(in.SupportedConfigs, groupResourceToV1beta1),
		ConfigReferences: mapSlice(in.ConfigReferences, configReferenceToV1beta1),
		Namespace:        in.Namespace,
		Registrations:    registrationsToV1beta1(in.Registrations, in.KubeClientDriver, restore.RegistrationDrivers),
		HealthCheck:      v1beta1.HealthCheck{Mode: v1beta1.HealthCheckMode(in.HealthCheck.Mode)},
	}
	if in.AddOnConfiguration != (ConfigCoordinates{}) {
		keep.StatusAddOnConfiguration = &in.AddOnConfiguration
	}
	if in.KubeClientDriver != "" && firstKubeClient(out.Registrations) < 0 {
		keep.KubeClientDriver = in.KubeClientDriver
	}
	for _, r := range in.Registrations {
		if r.SignerName == KubeAPIServerClientSignerName && len(r.Subject.OrganizationUnits) > 0 {
			keep.OrganizationUnits = mapSlice(in.Registrations, func(r RegistrationConfig) []string {
				if r.SignerName != KubeAPIServerClientSignerName {
					return nil
				}
				return stringsCopy(r.Subject.OrganizationUnits)
			})
			break
		}
	}
	for _, r := range in.ConfigReferences {
		if r.ConfigReferent != derivedReferent(r.DesiredConfig) {
			keep.ConfigReferents = mapSlice(in.ConfigReferences, func(r ConfigReference) ConfigReferent { return r.ConfigReferent })
			break
		}
	}
	return out
}

// mcaStatusFromV1beta1 maps the status of a ManagedClusterAddOn back, using
// restore for the v1alpha1 fields an earlier conversion kept, and recording
// in keep the v1beta1 fields v1alpha1 cannot hold.
func mcaStatusFromV1beta1(in v1beta1.ManagedClusterAddOnStatus, restore mcaV1alpha1Fields, keep *mcaV1beta1Fields) ManagedClusterAddOnStatus {
	out := ManagedClusterAddOnStatus{
		Conditions:       conditionsCopy(in.Conditions),
		RelatedObjects:   mapSlice(in.RelatedObjects, relatedObjectFromV1beta1),
		AddOnMeta:        addOnMetaFromV1beta1(in.AddOnMeta),
		SupportedConfigs: mapSlice(in.SupportedConfigs, groupResourceFromV1beta1),
		ConfigReferences: mapSlice(in.ConfigReferences, configReferenceFromV1beta1),
		Namespace:        in.Namespace,
		Registrations:    mapSlice(in.Registrations, registrationFromV1beta1),
		HealthCheck:      HealthCheck{Mode: HealthCheckMode(in.HealthCheck.Mode)},
		KubeClientDriver: restore.KubeClientDriver,
	}
	if restore.StatusAddOnConfiguration != nil {
		out.AddOnConfiguration = *restore.StatusAddOnConfiguration
	}
	if len(restore.ConfigReferents) == len(out.ConfigReferences) {
		for i := range out.ConfigReferences {
			out.ConfigReferences[i].ConfigReferent = restore.ConfigReferents[i]
		}
	}
	if len(restore.OrganizationUnits) == len(out.Registrations) {
		for i := range out.Registrations {
			if out.Registrations[i].SignerName == KubeAPIServerClientSignerName {
				out.Registrations[i].Subject.OrganizationUnits = stringsCopy(restore.OrganizationUnits[i])
			}
		}
	}
	if first := firstKubeClient(in.Registrations); first >= 0 {
		out.KubeClientDriver = kubeClientDriver(in.Registrations[first])
		for _, r := range in.Registrations {
			if r.Type == v1beta1.KubeClient && kubeClientDriver(r) != out.KubeClientDriver {
				keep.RegistrationDrivers = mapSlice(in.Registrations, kubeClientDriver)
				break
			}
		}
	}
	return out
}

// relatedObjectToV1beta1 and relatedObjectFromV1beta1 map ObjectReference.
func relatedObjectToV1beta1(in ObjectReference) v1beta1.ObjectReference {
	return v1beta1.ObjectReference{Group: in.Group, Resource: in.Resource, Namespace: in.Namespace, Name: in.Name}
}

func relatedObjectFromV1beta1(in v1beta1.ObjectReference) ObjectReference {
	return ObjectReference{Group: in.Group, Resource: in.Resource, Namespace: in.Namespace, Name: in.Name}
}

// configReferenceToV1beta1 maps a config reference, all but its deprecated
// namespace and name, which v1beta1 dropped.
func configReferenceToV1beta1(in ConfigReference) v1beta1.ConfigReference {
	return v1beta1.ConfigReference{
		ConfigGroupResource:    groupResourceToV1beta1(in.ConfigGroupResource),
		LastObservedGeneration: in.LastObservedGeneration,
		DesiredConfig:          mapPtr(in.DesiredConfig, specHashToV1beta1),
		LastAppliedConfig:      mapPtr(in.LastAppliedConfig, specHashToV1beta1),
	}
}

// configReferenceFromV1beta1 maps a config reference back; its deprecated
// namespace and name are those of desiredConfig, as OCM fills them.
func configReferenceFromV1beta1(in v1beta1.ConfigReference) ConfigReference {
	out := ConfigReference{
		ConfigGroupResource:    groupResourceFromV1beta1(in.ConfigGroupResource),
		LastObservedGeneration: in.LastObservedGeneration,
		DesiredConfig:          mapPtr(in.DesiredConfig, specHashFromV1beta1),
		LastAppliedConfig:      mapPtr(in.LastAppliedConfig, specHashFromV1beta1),
	}
	out.ConfigReferent = derivedReferent(out.DesiredConfig)
	return out
}

// derivedReferent is the deprecated namespace and name of a config reference
// whose desiredConfig is desired.
func derivedReferent(desired *ConfigSpecHash) ConfigReferent {
	if desired == nil {
		return ConfigReferent{}
	}
	return desired.ConfigReferent
}
