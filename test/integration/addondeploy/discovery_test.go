package addondeploy

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	clusterv1beta2 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1beta2"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// discoveredCluster is the managed cluster whose add-on finds its hosting
// cluster through the hosting cluster its agent reports.
const discoveredCluster = "cluster3"

// testDiscovery runs the add-on discovered of cluster3, which asks for
// Hosted mode without naming a hosting cluster, with its
// ClusterManagementAddOn's hostedModeAutoDiscovery enabled: it waits while
// cluster3 reports no hosting cluster, when only another cluster reports
// one, and while the reported cluster shares no ManagedClusterSet (other
// than default and global) with cluster3; another cluster's agent cannot
// write cluster3's report; once both clusters are in one set, the hub names
// the reported cluster and deploys there; a later report of another
// cluster does not move it, and says so in HostingClusterValidity.
func (s *suite) testDiscovery(t *testing.T) {
	s.create(t, s.hubC, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: discoveredCluster}})
	target := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: discoveredCluster}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
	s.create(t, s.hubC, target)
	cma := newCMA("discovered")
	cma.Spec.HostedModeAutoDiscovery = &addonv1alpha1.HostedModeAutoDiscoveryConfig{Mode: addonv1alpha1.HostedModeAutoDiscoveryModeEnable}
	s.create(t, s.hubC, cma)
	tpl := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: "discovered-template"}}
	tpl.Spec.AddonName = "discovered"
	tpl.Spec.AgentSpec.Workload.Manifests = manifests(t, hostedManifests)
	s.create(t, s.hubC, tpl)
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: discoveredCluster, Name: "discovered",
		Annotations: map[string]string{addonv1alpha1.InstallModeAnnotationKey: addonv1alpha1.InstallModeHosted}}}
	s.create(t, s.hubC, mca)
	s.setDesiredIn(t, discoveredCluster, "discovered", nil, configRef{addonv1alpha1.AddOnTemplateResource, "", "discovered-template"})
	hostingWork := "addon-discovered-deploy-hosting-cluster3-0"
	report := func(t *testing.T, mc *clusterv1.ManagedCluster, host string) {
		t.Helper()
		s.update(t, s.hubC, mc, true, func() {
			mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: clusterv1alpha1.ClusterClaimHostingCluster, Value: host}}
		})
	}
	nothingDeployed := func(t *testing.T, why string) {
		t.Helper()
		s.stays(t, 3*time.Second, "no work of the add-on while "+why, func(ctx context.Context) (bool, error) {
			list := &workv1.ManifestWorkList{}
			if err := s.hubC.List(ctx, list, client.MatchingLabels{addonv1alpha1.AddonLabelKey: "discovered"}); err != nil {
				return false, err
			}
			return len(list.Items) == 0, nil
		})
	}

	t.Run("without a report of its own cluster the add-on waits", func(t *testing.T) {
		// Another cluster's report says nothing about cluster3's add-on.
		other := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: hostedCluster}}
		report(t, other, clusterName)
		got := s.waitDiscovered(t, addonv1alpha1.ManagedClusterAddOnHostingClusterValidity, metav1.ConditionFalse,
			addonv1alpha1.HostingClusterValidityReasonAutoDiscoveryPending)
		if c := meta.FindStatusCondition(got.Status.Conditions, addonv1alpha1.ManagedClusterAddOnHostingClusterValidity); !strings.Contains(c.Message, "reportHostingCluster") {
			t.Errorf("HostingClusterValidity message %q does not say how to report", c.Message)
		}
		nothingDeployed(t, "cluster3 reports no hosting cluster")
	})

	t.Run("another cluster's agent cannot write cluster3's report", func(t *testing.T) {
		cfg, err := s.hub.ConfigForUser(identity.AgentUserName(hostedCluster, "agent"), identity.AgentGroups(hostedCluster)...)
		kit.Must(t, "cluster2's agent config", err)
		agent, err := client.New(cfg, client.Options{Scheme: s.hubC.Scheme()})
		kit.Must(t, "cluster2's agent client", err)
		forged := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: discoveredCluster}}
		kit.Must(t, "get cluster3", s.hubC.Get(s.ctx, client.ObjectKeyFromObject(forged), forged))
		forged.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: clusterv1alpha1.ClusterClaimHostingCluster, Value: hostedCluster}}
		if err := agent.Status().Update(s.ctx, forged); !apierrors.IsForbidden(err) {
			t.Fatalf("cluster2's agent wrote cluster3's hosting report: %v", err)
		}
	})

	t.Run("a reported cluster that shares no set with cluster3 is not used", func(t *testing.T) {
		report(t, target, clusterName)
		s.poll(t, "the add-on waiting for a shared ManagedClusterSet", func(ctx context.Context) (bool, error) {
			got := &addonv1alpha1.ManagedClusterAddOn{}
			if err := s.hubC.Get(ctx, client.ObjectKeyFromObject(mca), got); err != nil {
				return false, err
			}
			c := meta.FindStatusCondition(got.Status.Conditions, addonv1alpha1.ManagedClusterAddOnHostingClusterValidity)
			return c != nil && c.Reason == addonv1alpha1.HostingClusterValidityReasonAutoDiscoveryPending && strings.Contains(c.Message, "ManagedClusterSet"), nil
		})
		nothingDeployed(t, "cluster1 and cluster3 share no set")
	})

	t.Run("the hub names the reported cluster once both are in one set", func(t *testing.T) {
		s.create(t, s.hubC, &clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "hosting-group"}})
		for _, name := range []string{clusterName, discoveredCluster} {
			mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
			s.update(t, s.hubC, mc, false, func() {
				if mc.Labels == nil {
					mc.Labels = map[string]string{}
				}
				mc.Labels[clusterv1beta2.ClusterSetLabel] = "hosting-group"
			})
		}
		got := s.waitDiscovered(t, addonv1alpha1.ManagedClusterAddOnHostingManifestApplied, metav1.ConditionTrue, addonv1alpha1.ManifestAppliedReasonManifestsApplied)
		if h, by := got.Annotations[addonv1alpha1.HostingClusterNameAnnotationKey], got.Annotations[addonv1alpha1.HostingClusterNameManagedByAnnotationKey]; h != clusterName || by != addonv1alpha1.HostingClusterNameManagedByAutoDiscoveryValue {
			t.Errorf("annotations %v: want hosting cluster %s marked %s", got.Annotations, clusterName, addonv1alpha1.HostingClusterNameManagedByAutoDiscoveryValue)
		}
		kit.Must(t, "get the hosting work in cluster1's namespace",
			s.hubC.Get(s.ctx, client.ObjectKey{Namespace: clusterName, Name: hostingWork}, &workv1.ManifestWork{}))
	})

	t.Run("a later report of another cluster does not move the add-on", func(t *testing.T) {
		report(t, target, hostedCluster)
		got := s.waitDiscovered(t, addonv1alpha1.ManagedClusterAddOnHostingClusterValidity, metav1.ConditionFalse, addonv1alpha1.HostingClusterValidityReasonMismatch)
		if h := got.Annotations[addonv1alpha1.HostingClusterNameAnnotationKey]; h != clusterName {
			t.Errorf("hosting cluster %q, want %s kept", h, clusterName)
		}
		s.stays(t, 3*time.Second, "the hosting work kept in cluster1's namespace, none in cluster2's", func(ctx context.Context) (bool, error) {
			if err := s.hubC.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: hostingWork}, &workv1.ManifestWork{}); err != nil {
				return false, err
			}
			err := s.hubC.Get(ctx, client.ObjectKey{Namespace: hostedCluster, Name: hostingWork}, &workv1.ManifestWork{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	})

	t.Run("deleting the add-on removes its hosting work", func(t *testing.T) {
		kit.Must(t, "delete the add-on", s.hubC.Delete(s.ctx, mca))
		s.poll(t, "the add-on and its hosting work gone", func(ctx context.Context) (bool, error) {
			err := s.hubC.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: hostingWork}, &workv1.ManifestWork{})
			if !apierrors.IsNotFound(err) {
				return false, client.IgnoreNotFound(err)
			}
			err = s.hubC.Get(ctx, client.ObjectKeyFromObject(mca), &addonv1alpha1.ManagedClusterAddOn{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	})
}

// waitDiscovered waits until condition typ of cluster3's add-on discovered
// has status and reason, and returns the add-on.
func (s *suite) waitDiscovered(t *testing.T, typ string, status metav1.ConditionStatus, reason string) *addonv1alpha1.ManagedClusterAddOn {
	t.Helper()
	got := &addonv1alpha1.ManagedClusterAddOn{}
	s.poll(t, "add-on cluster3/discovered "+typ+"="+string(status)+" ("+reason+")", func(ctx context.Context) (bool, error) {
		if err := s.hubC.Get(ctx, client.ObjectKey{Namespace: discoveredCluster, Name: "discovered"}, got); err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(got.Status.Conditions, typ)
		return c != nil && c.Status == status && c.Reason == reason, nil
	})
	return got
}
