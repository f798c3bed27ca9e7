package manager

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	addonv1beta1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// Condition reasons addon-framework writes on RegistrationApplied.
const (
	reasonPermissionApplied = "SetPermissionApplied"
	reasonPermissionPending = "PermissionConfigPending"
	reasonPermissionFailed  = "SetPermissionFailed"
	messageConfigured       = "Registration of the addon agent is configured"
)

// Kube client drivers the agent reports on the kubeClient registration.
const (
	driverCSR   = "csr"
	driverToken = "token"
)

// SupportedConfigs are the configuration kinds the add-on reads: its
// AddOnDeploymentConfigs.
var SupportedConfigs = []addonv1beta1.ConfigGroupResource{
	{Group: addonv1beta1.GroupVersion.Group, Resource: "addondeploymentconfigs"},
}

// registration writes what addon-framework's registration controller
// writes on a ManagedClusterAddOn, and the agent's RBAC on the hub.
type registration struct {
	client client.Client
	opts   Options
}

// Roles and bindings in the cluster namespaces; ManagedClusters are read.
func (r *registration) setup(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(r.opts.AddonName+"-registration").
		For(&addonv1beta1.ManagedClusterAddOn{}, builder.WithPredicates(named(r.opts.AddonName))).
		Complete(r)
}

// named passes the objects named name.
func named(name string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == name })
}

// Reconcile follows addon-framework's registration controller: the
// supported configurations in a patch of their own, then the permissions,
// registrations, install namespace and RegistrationApplied in another.
func (r *registration) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mca := &addonv1beta1.ManagedClusterAddOn{}
	if err := r.client.Get(ctx, req.NamespacedName, mca); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	cluster := &clusterv1.ManagedCluster{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: mca.Namespace}, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ownedByClusterManagementAddOn(mca) || !mca.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	updated := mca.DeepCopy()
	updated.Status.SupportedConfigs = SupportedConfigs
	if changed, err := patchStatus(ctx, r.client, mca, updated, mca.Status, updated.Status); changed {
		return ctrl.Result{}, wrap(err, "patch the supported configurations")
	}

	subject := kubeClientSubject(mca)
	pending := subject == nil
	if !pending {
		if err := r.bindAgent(ctx, mca, subject); err != nil {
			setCondition(&updated.Status.Conditions, addonv1alpha1.ManagedClusterAddOnRegistrationApplied, metav1.ConditionFalse,
				reasonPermissionFailed, fmt.Sprintf("Failed to set permission for hub agent: %v", err))
			_, perr := patchStatus(ctx, r.client, mca, updated, mca.Status, updated.Status)
			return ctrl.Result{}, firstError(perr, err)
		}
	}
	ns, err := agentNamespace(ctx, r.client, mca)
	if err != nil {
		return ctrl.Result{}, err
	}
	updated.Status.Registrations = r.registrations(mca)
	updated.Status.Namespace = ns
	if pending {
		setCondition(&updated.Status.Conditions, addonv1alpha1.ManagedClusterAddOnRegistrationApplied, metav1.ConditionFalse,
			reasonPermissionPending, "registration subject not ready")
	} else {
		setCondition(&updated.Status.Conditions, addonv1alpha1.ManagedClusterAddOnRegistrationApplied, metav1.ConditionTrue,
			reasonPermissionApplied, messageConfigured)
	}
	_, err = patchStatus(ctx, r.client, mca, updated, mca.Status, updated.Status)
	return ctrl.Result{}, wrap(err, "patch the registrations")
}

// registrations returns the add-on's one kubeClient registration as
// addon-framework builds it from the status: the driver the agent
// reported; with the token driver the subject the agent wrote (none until
// it writes one), otherwise the default subject.
func (r *registration) registrations(mca *addonv1beta1.ManagedClusterAddOn) []addonv1beta1.RegistrationConfig {
	reg := addonv1beta1.RegistrationConfig{Type: addonv1beta1.KubeClient, KubeClient: &addonv1beta1.KubeClientConfig{
		Subject: addonv1beta1.KubeClientSubject{BaseSubject: addonv1beta1.BaseSubject{
			User:   DefaultUser(mca.Namespace, r.opts.AddonName, r.opts.AgentName),
			Groups: DefaultGroups(mca.Namespace, r.opts.AddonName),
		}},
	}}
	for _, existing := range mca.Status.Registrations {
		if existing.Type != addonv1beta1.KubeClient || existing.KubeClient == nil || existing.KubeClient.Driver == "" {
			continue
		}
		reg.KubeClient.Driver = existing.KubeClient.Driver
		if existing.KubeClient.Driver == driverToken {
			reg.KubeClient.Subject = existing.KubeClient.Subject
		}
		break
	}
	return []addonv1beta1.RegistrationConfig{reg}
}

// kubeClientSubject returns the subject of mca's kubeClient registration,
// nil when it has none yet.
func kubeClientSubject(mca *addonv1beta1.ManagedClusterAddOn) *addonv1beta1.BaseSubject {
	for _, reg := range mca.Status.Registrations {
		if reg.Type == addonv1beta1.KubeClient && reg.KubeClient != nil {
			if s := reg.KubeClient.Subject.BaseSubject; s.User != "" || len(s.Groups) > 0 {
				return &s
			}
			return nil
		}
	}
	return nil
}

// bindAgent lets the agent's hub identity (subject) read the ConfigMaps of
// its cluster's namespace: a Role and its RoleBinding there, owned by mca,
// as addon-framework's BindKubeClientRole writes them.
func (r *registration) bindAgent(ctx context.Context, mca *addonv1beta1.ManagedClusterAddOn, subject *addonv1beta1.BaseSubject) error {
	name := "open-cluster-management:" + r.opts.AddonName + ":agent"
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: mca.Namespace, Name: name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.client, role, func() error {
		role.Rules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}}}
		return controllerutil.SetOwnerReference(mca, role, r.client.Scheme())
	}); err != nil {
		return fmt.Errorf("write Role %s/%s: %w", mca.Namespace, name, err)
	}
	var subjects []rbacv1.Subject
	if subject.User != "" {
		subjects = append(subjects, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: subject.User})
	}
	for _, g := range subject.Groups {
		if g != "system:authenticated" {
			subjects = append(subjects, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: g})
		}
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: mca.Namespace, Name: name}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.client, binding, func() error {
		binding.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}
		binding.Subjects = subjects
		return controllerutil.SetOwnerReference(mca, binding, r.client.Scheme())
	})
	if err != nil {
		return fmt.Errorf("write RoleBinding %s/%s: %w", mca.Namespace, name, err)
	}
	return nil
}

// installNamespace is the install-namespace annotation of mca (a v1alpha1
// spec.installNamespace), else addon-framework's default.
func installNamespace(mca *addonv1beta1.ManagedClusterAddOn) string {
	if ns := mca.Annotations[addonv1beta1.InstallNamespaceAnnotation]; ns != "" {
		return ns
	}
	return DefaultInstallNamespace
}

// DefaultUser is addon-framework's default user of an add-on agent's hub
// identity.
func DefaultUser(cluster, addon, agent string) string {
	return fmt.Sprintf("system:open-cluster-management:cluster:%s:addon:%s:agent:%s", cluster, addon, agent)
}

// DefaultGroups are addon-framework's default groups of an add-on agent's
// hub identity.
func DefaultGroups(cluster, addon string) []string {
	return []string{
		fmt.Sprintf("system:open-cluster-management:cluster:%s:addon:%s", cluster, addon),
		fmt.Sprintf("system:open-cluster-management:addon:%s", addon),
	}
}

// conditionSet reports whether mca has a condition of type typ.
func conditionSet(mca *addonv1beta1.ManagedClusterAddOn, typ string) bool {
	return meta.FindStatusCondition(mca.Status.Conditions, typ) != nil
}

// wrap names what failed, keeping nil nil and conflicts recognizable.
func wrap(err error, what string) error {
	if err == nil || apierrors.IsConflict(err) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// firstError returns the first non-nil error.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
