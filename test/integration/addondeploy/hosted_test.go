package addondeploy

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// hostedManifests is the agent of the template add-on hosted: a ConfigMap
// for the managed cluster (no location), the agent Deployment for the
// hosting cluster and a ConfigMap deployed nowhere.
const hostedManifests = `apiVersion: v1
kind: ConfigMap
metadata: {name: hosted-managed, namespace: open-cluster-management-agent-addon}
data: {cluster: "{{CLUSTER_NAME}}"}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: hosted-agent
  namespace: open-cluster-management-agent-addon
  annotations: {addon.open-cluster-management.io/hosted-manifest-location: hosting}
spec:
  replicas: 1
  selector: {matchLabels: {app: hosted-agent}}
  template:
    metadata: {labels: {app: hosted-agent}}
    spec:
      containers:
      - {name: agent, image: quay.io/open-cluster-management/hello:v1, args: ["--cluster={{CLUSTER_NAME}}"]}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: hosted-nowhere
  namespace: open-cluster-management-agent-addon
  annotations: {addon.open-cluster-management.io/hosted-manifest-location: none}`

// hostedCluster is the managed cluster whose add-on cluster1 hosts: a
// ManagedCluster on the hub, with no agent of its own in this test.
const hostedCluster = "cluster2"

// testHosted runs the add-on hosted of cluster2 in Hosted mode on cluster1:
// its hosting manifests in a work in cluster1's namespace, applied by
// cluster1's work agent, its other manifests in cluster2's namespace; a
// user who may not update ManagedCluster cluster1 cannot choose it as a
// hosting cluster; a hosting cluster that does not exist removes the
// hosting work; deleting the add-on removes it too.
func (s *suite) testHosted(t *testing.T) {
	s.create(t, s.hubC, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hostedCluster}})
	s.create(t, s.hubC, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: hostedCluster}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}})
	s.create(t, s.hubC, newCMA("hosted"))
	tpl := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: "hosted-template"}}
	tpl.Spec.AddonName = "hosted"
	tpl.Spec.AgentSpec.Workload.Manifests = manifests(t, hostedManifests)
	s.create(t, s.hubC, tpl)
	hostedTemplate := configRef{addonv1alpha1.AddOnTemplateResource, "", "hosted-template"}

	t.Run("a user who may not update the hosting ManagedCluster cannot choose it", func(t *testing.T) {
		// mallory may write cluster2's add-ons and update ManagedCluster
		// cluster2, not cluster1.
		s.create(t, s.hubC, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: hostedCluster, Name: "addon-editor"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{addonv1alpha1.GroupVersion.Group}, Resources: []string{"managedclusteraddons"},
				Verbs: []string{"get", "create", "update", "patch"}}}})
		s.create(t, s.hubC, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: hostedCluster, Name: "mallory-addon-editor"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "addon-editor"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "mallory"}}})
		s.create(t, s.hubC, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "cluster2-admin"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{clusterv1.GroupVersion.Group}, Resources: []string{"managedclusters"},
				ResourceNames: []string{hostedCluster}, Verbs: []string{"get", "update", "patch"}}}})
		s.create(t, s.hubC, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "mallory-cluster2-admin"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster2-admin"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "mallory"}}})
		cfg, err := s.hub.ConfigForUser("mallory")
		kit.Must(t, "mallory's config", err)
		mallory, err := client.New(cfg, client.Options{Scheme: s.hubC.Scheme()})
		kit.Must(t, "mallory's client", err)
		hostedOn := map[string]string{addonv1alpha1.HostingClusterNameAnnotationKey: clusterName}
		refused := func(what string, write func(ctx context.Context) error) {
			s.poll(t, what+" refused at admission", func(ctx context.Context) (bool, error) {
				err := write(ctx)
				switch {
				case err == nil:
					t.Fatalf("%s was admitted", what)
				case apierrors.IsForbidden(err) && kit.ErrorSays(err, "needs the right to update ManagedCluster "+clusterName):
					return true, nil
				}
				return false, err
			})
		}
		refused("mallory's add-on hosted on cluster1", func(ctx context.Context) error {
			return mallory.Create(ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: hostedCluster, Name: "hosted", Annotations: hostedOn}})
		})
		refused("mallory's annotation on ManagedCluster cluster2, which the add-on annotation sync would copy", func(ctx context.Context) error {
			mc := &clusterv1.ManagedCluster{}
			if err := mallory.Get(ctx, client.ObjectKey{Name: hostedCluster}, mc); err != nil {
				return err
			}
			mc.Annotations = hostedOn
			return mallory.Update(ctx, mc)
		})
		// An add-on mallory may create is still hers without the annotation.
		kit.Must(t, "mallory's add-on in Default mode",
			mallory.Create(s.ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: hostedCluster, Name: "hosted"}}))
		refused("mallory's annotation on her add-on", func(ctx context.Context) error {
			mca := &addonv1alpha1.ManagedClusterAddOn{}
			if err := mallory.Get(ctx, client.ObjectKey{Namespace: hostedCluster, Name: "hosted"}, mca); err != nil {
				return err
			}
			mca.Annotations = hostedOn
			return mallory.Update(ctx, mca)
		})
	})

	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: hostedCluster, Name: "hosted"}}
	s.update(t, s.hubC, mca, false, func() {
		mca.Annotations = map[string]string{addonv1alpha1.HostingClusterNameAnnotationKey: clusterName}
	})
	s.setDesiredIn(t, hostedCluster, "hosted", nil, hostedTemplate)
	hostingWork := "addon-hosted-deploy-hosting-cluster2-0"

	t.Run("the hosting manifests go to the hosting cluster, the others to the managed cluster", func(t *testing.T) {
		d := &appsv1.Deployment{}
		s.poll(t, "the hosted agent Deployment on cluster1", func(ctx context.Context) (bool, error) {
			err := s.spokeC.Get(ctx, client.ObjectKey{Namespace: addonv1alpha1.DefaultAddonInstallNamespace, Name: "hosted-agent"}, d)
			return err == nil, client.IgnoreNotFound(err)
		})
		if got := d.Spec.Template.Spec.Containers[0].Args; !slices.Equal(got, []string{"--cluster=" + hostedCluster}) {
			t.Errorf("agent args %v: rendered for cluster2", got)
		}
		w := &workv1.ManifestWork{}
		kit.Must(t, "get the hosting work", s.hubC.Get(s.ctx, client.ObjectKey{Namespace: clusterName, Name: hostingWork}, w))
		// The agent, then the grant of its credential to cluster2's hosted agent.
		grant := template.HostedCredentialRoleName("hosted")
		if got := manifestNames(t, w); !slices.Equal(got, []string{"hosted-agent", grant, grant}) {
			t.Errorf("hosting work manifests %v, want [hosted-agent %s %s]", got, grant, grant)
		}
		rb := &rbacv1.RoleBinding{}
		kit.Must(t, "get the grant on cluster1", s.spokeC.Get(s.ctx, client.ObjectKey{Namespace: addonv1alpha1.DefaultAddonInstallNamespace, Name: grant}, rb))
		if want := identity.HostedAgentSubject(hostedCluster); len(rb.Subjects) != 1 || rb.Subjects[0] != want {
			t.Errorf("grant subjects %v, want %v", rb.Subjects, want)
		}
		if w.Labels[addonv1alpha1.AddonLabelKey] != "hosted" || w.Labels[addonv1alpha1.AddonNamespaceLabelKey] != hostedCluster || len(w.OwnerReferences) != 0 {
			t.Errorf("hosting work labels %v, owners %v", w.Labels, w.OwnerReferences)
		}
		managed := &workv1.ManifestWork{}
		kit.Must(t, "get the managed work", s.hubC.Get(s.ctx, client.ObjectKey{Namespace: hostedCluster, Name: "addon-hosted-deploy-0"}, managed))
		if got := manifestNames(t, managed); !slices.Equal(got, []string{"hosted-managed"}) {
			t.Errorf("managed work manifests %v, want [hosted-managed]", got)
		}
		got := s.waitHosted(t, addonv1alpha1.ManagedClusterAddOnHostingManifestApplied, metav1.ConditionTrue, addonv1alpha1.ManifestAppliedReasonManifestsApplied)
		if c := meta.FindStatusCondition(got.Status.Conditions, addonv1alpha1.ManagedClusterAddOnHostingClusterValidity); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("HostingClusterValidity %+v", c)
		}
		if !slices.Contains(got.Finalizers, addonv1alpha1.AddonHostingManifestFinalizer) {
			t.Errorf("finalizers %v lack %s", got.Finalizers, addonv1alpha1.AddonHostingManifestFinalizer)
		}
	})

	t.Run("a hosting cluster that is not a managed cluster removes the hosting work", func(t *testing.T) {
		s.update(t, s.hubC, mca, false, func() { mca.Annotations[addonv1alpha1.HostingClusterNameAnnotationKey] = "no-such-cluster" })
		got := s.waitHosted(t, addonv1alpha1.ManagedClusterAddOnHostingClusterValidity, metav1.ConditionFalse, addonv1alpha1.HostingClusterValidityReasonInvalid)
		if c := meta.FindStatusCondition(got.Status.Conditions, addonv1alpha1.ManagedClusterAddOnHostingClusterValidity); !strings.Contains(c.Message, "no-such-cluster") {
			t.Errorf("HostingClusterValidity message %q does not name the cluster", c.Message)
		}
		s.poll(t, "the hosting work and the finalizer gone", func(ctx context.Context) (bool, error) {
			err := s.hubC.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: hostingWork}, &workv1.ManifestWork{})
			if !apierrors.IsNotFound(err) {
				return false, client.IgnoreNotFound(err)
			}
			got := &addonv1alpha1.ManagedClusterAddOn{}
			if err := s.hubC.Get(ctx, client.ObjectKeyFromObject(mca), got); err != nil {
				return false, err
			}
			return !slices.Contains(got.Finalizers, addonv1alpha1.AddonHostingManifestFinalizer), nil
		})
		s.update(t, s.hubC, mca, false, func() { mca.Annotations[addonv1alpha1.HostingClusterNameAnnotationKey] = clusterName })
		s.waitHosted(t, addonv1alpha1.ManagedClusterAddOnHostingManifestApplied, metav1.ConditionTrue, addonv1alpha1.ManifestAppliedReasonManifestsApplied)
	})

	t.Run("deleting the add-on removes its hosting work", func(t *testing.T) {
		kit.Must(t, "delete the add-on", s.hubC.Delete(s.ctx, mca))
		s.poll(t, "the hosted add-on and its hosting work gone", func(ctx context.Context) (bool, error) {
			err := s.hubC.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: hostingWork}, &workv1.ManifestWork{})
			if !apierrors.IsNotFound(err) {
				return false, client.IgnoreNotFound(err)
			}
			err = s.hubC.Get(ctx, client.ObjectKeyFromObject(mca), &addonv1alpha1.ManagedClusterAddOn{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		s.poll(t, "the hosted agent Deployment gone from cluster1", func(ctx context.Context) (bool, error) {
			err := s.spokeC.Get(ctx, client.ObjectKey{Namespace: addonv1alpha1.DefaultAddonInstallNamespace, Name: "hosted-agent"}, &appsv1.Deployment{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	})
}

// waitHosted waits until condition typ of cluster2's add-on hosted has
// status and reason, and returns the add-on.
func (s *suite) waitHosted(t *testing.T, typ string, status metav1.ConditionStatus, reason string) *addonv1alpha1.ManagedClusterAddOn {
	t.Helper()
	got := &addonv1alpha1.ManagedClusterAddOn{}
	s.poll(t, "add-on cluster2/hosted "+typ+"="+string(status)+" ("+reason+")", func(ctx context.Context) (bool, error) {
		if err := s.hubC.Get(ctx, client.ObjectKey{Namespace: hostedCluster, Name: "hosted"}, got); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, typ)
		return c != nil && c.Status == status && c.Reason == reason, nil
	})
	return got
}
