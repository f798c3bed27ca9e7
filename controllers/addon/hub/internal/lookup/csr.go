package lookup

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/registration"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
)

// AddonRequestFacts gathers, from c, what csr.DecideAddon needs to know
// about the hub for the add-on request req: whether its cluster is accepted,
// whether its ManagedClusterAddOn exists and the subjects of that add-on's
// registrations with the request's signer. For a custom signer it also
// returns the registration of the add-on's desired AddOnTemplate that names
// the signer (nil when there is none), from which it computes the subjects
// the hub signs, as the deploy controller computes the status.
func AddonRequestFacts(ctx context.Context, c client.Reader, req csr.Request) (csr.AddonFacts, *addonv1alpha1.CustomSignerRegistrationConfig, error) {
	var facts csr.AddonFacts
	if req.Cluster == "" || req.Addon == "" {
		return facts, nil, nil // ValidateAddon refuses it
	}
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: req.Cluster}, mc); client.IgnoreNotFound(err) != nil {
		return facts, nil, fmt.Errorf("get ManagedCluster %s: %w", req.Cluster, err)
	} else if err == nil {
		facts.ClusterAccepted = ClusterAccepted(mc)
	}
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: req.Cluster, Name: req.Addon}, mca); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return facts, nil, fmt.Errorf("get ManagedClusterAddOn %s/%s: %w", req.Cluster, req.Addon, err)
		}
		return facts, nil, nil
	}
	facts.AddonExists = true
	facts.Subjects = csr.RegistrationSubjects(req.Cluster, req.Addon, req.SignerName, mca.Status.Registrations)
	if !registration.IsCustomSigner(req.SignerName) {
		return facts, nil, nil
	}
	tpl, err := desiredTemplate(ctx, c, mca)
	if err != nil || tpl == nil {
		return facts, nil, err
	}
	var signer *addonv1alpha1.CustomSignerRegistrationConfig
	for i, r := range tpl.Spec.Registration {
		if r.Type == addonv1alpha1.RegistrationTypeCustomSigner && r.CustomSigner != nil && r.CustomSigner.SignerName == req.SignerName {
			signer = tpl.Spec.Registration[i].CustomSigner
			break
		}
	}
	if signer == nil {
		return facts, nil, nil
	}
	for _, rc := range template.Registrations(req.Cluster, req.Addon, mca.Status.KubeClientDriver, tpl) {
		if rc.SignerName == req.SignerName {
			facts.SignedSubjects = append(facts.SignedSubjects, certs.AddonSubject(req.Cluster, req.Addon, rc.Subject))
		}
	}
	return facts, signer, nil
}

// desiredTemplate reads the AddOnTemplate mca desires
// (status.configReferences), nil when it desires none or the template does
// not exist. It reads the template as an unstructured object, as the deploy
// controller does, so that both share one informer.
func desiredTemplate(ctx context.Context, c client.Reader, mca *addonv1alpha1.ManagedClusterAddOn) (*addonv1alpha1.AddOnTemplate, error) {
	for _, ref := range mca.Status.ConfigReferences {
		if !ref.IsTemplateConfig() || ref.DesiredConfig == nil {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(addonv1alpha1.GroupVersion.WithKind("AddOnTemplate"))
		if err := c.Get(ctx, client.ObjectKey{Name: ref.DesiredConfig.Name}, u); err != nil {
			if client.IgnoreNotFound(err) != nil {
				return nil, fmt.Errorf("get AddOnTemplate %s: %w", ref.DesiredConfig.Name, err)
			}
			return nil, nil
		}
		tpl := &addonv1alpha1.AddOnTemplate{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, tpl); err != nil {
			return nil, fmt.Errorf("decode AddOnTemplate %s: %w", ref.DesiredConfig.Name, err)
		}
		return tpl, nil
	}
	return nil, nil
}

// ClusterAccepted reports whether the hub accepts mc's agents: accepted by
// an administrator, with HubAcceptedManagedCluster True, and not being
// deleted.
func ClusterAccepted(mc *clusterv1.ManagedCluster) bool {
	return mc.Spec.HubAcceptsClient && mc.IsAccepted() && mc.DeletionTimestamp.IsZero()
}
