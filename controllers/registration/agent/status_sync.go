package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
)

const (
	// unavailableThreshold is how long the API server must fail its health
	// check before the cluster is reported unavailable.
	unavailableThreshold = 20 * time.Second
	// defaultMaxCustomClusterClaims is the default of the Klusterlet's
	// clusterClaimConfiguration.maxCustomClusterClaims.
	defaultMaxCustomClusterClaims = 20
	// eventReasonClaimsTruncated is the hub event recorded when custom claims
	// are left out.
	eventReasonClaimsTruncated = "CustomClusterClaimsTruncated"
)

// probeAPIServer checks the managed cluster's API server: GET /livez, or
// /healthz when /livez is not served (404) or not allowed (403).
func (a *Agent) probeAPIServer(ctx context.Context) error {
	rc := a.spokeKube.Discovery().RESTClient()
	err := rc.Get().AbsPath("/livez").Do(ctx).Error()
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		err = rc.Get().AbsPath("/healthz").Do(ctx).Error()
	}
	return err
}

// availableCondition probes the API server and returns the Available
// condition to report, or nil to keep the current one (a failure shorter than
// unavailableThreshold).
func (a *Agent) availableCondition(ctx context.Context) *metav1.Condition {
	err := a.probeAPIServer(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	c, since := availability(err, a.now(), a.failingSince)
	a.failingSince = since
	return c
}

// availability decides the Available condition from a probe result err at
// now, given since when the probe has been failing (zero: it was healthy). It
// returns the condition (nil: keep the current one) and the new failing-since
// time.
func availability(err error, now, failingSince time.Time) (*metav1.Condition, time.Time) {
	if err == nil {
		return &metav1.Condition{
			Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionTrue,
			Reason: clusterv1.ReasonManagedClusterAvailable, Message: "Managed cluster is available",
		}, time.Time{}
	}
	if failingSince.IsZero() {
		failingSince = now
	}
	if now.Sub(failingSince) < unavailableThreshold {
		return nil, failingSince
	}
	return &metav1.Condition{
		Type: clusterv1.ManagedClusterConditionAvailable, Status: metav1.ConditionFalse,
		Reason:  clusterv1.ReasonManagedClusterKubeAPIServerUnavailable,
		Message: fmt.Sprintf("The managed cluster's kube-apiserver has been failing its health check since %s: %v", failingSince.UTC().Format(time.RFC3339), err),
	}, failingSince
}

// applyResources sets the Kubernetes version, capacity and allocatable.
func (a *Agent) applyResources(ctx context.Context, mc *clusterv1.ManagedCluster) error {
	v, err := a.spokeKube.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("read the server version: %w", err)
	}
	mc.Status.Version.Kubernetes = v.GitVersion
	nodes := &corev1.NodeList{}
	if err := a.spoke.List(ctx, nodes); err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	mc.Status.Capacity, mc.Status.Allocatable = sumResources(nodes.Items)
	return nil
}

// sumResources returns the sum of every node's capacity and the sum of the
// allocatable resources of the schedulable nodes.
func sumResources(nodes []corev1.Node) (capacity, allocatable clusterv1.ResourceList) {
	capacity, allocatable = clusterv1.ResourceList{}, clusterv1.ResourceList{}
	add := func(into clusterv1.ResourceList, from corev1.ResourceList) {
		for name, q := range from {
			sum := into[clusterv1.ResourceName(name)]
			sum.Add(q)
			into[clusterv1.ResourceName(name)] = sum
		}
	}
	for i := range nodes {
		add(capacity, nodes[i].Status.Capacity)
		if !nodes[i].Spec.Unschedulable {
			add(allocatable, nodes[i].Status.Allocatable)
		}
	}
	// Report zero CPU and memory rather than nothing for an empty cluster.
	for _, name := range []clusterv1.ResourceName{clusterv1.ResourceCPU, clusterv1.ResourceMemory} {
		for _, l := range []clusterv1.ResourceList{capacity, allocatable} {
			if _, ok := l[name]; !ok {
				l[name] = resource.Quantity{}
			}
		}
	}
	return capacity, allocatable
}

// applyClaims sets status.clusterClaims from the ClusterClaims, the agent's
// own version claim (version.AgentVersionClaim), the CAs it trusts for the
// hub (certs.HubCAsClaim), the CA of its client certificate
// (certs.ClientIssuerClaim) and the Pod Security level of the add-on
// agents' namespace (podsecurity.AddonNamespaceClaim), and records a hub
// event when custom claims are left out. With the ClusterClaim feature off
// it reports no claim. Until the ClusterClaim informer has synced it keeps
// the reported claims: the sync that follows the informer's sync reports them.
func (a *Agent) applyClaims(ctx context.Context, conn *hubConnection, mc *clusterv1.ManagedCluster) error {
	if a.opts.DisableClusterClaims {
		mc.Status.ClusterClaims = nil
		return nil
	}
	if !informerSynced(ctx, a.spokeCache, &clusterv1alpha1.ClusterClaim{}) {
		ctrl.LoggerFrom(ctx).V(1).Info("ClusterClaims not read yet; reporting them in a later sync")
		return nil
	}
	claims := &clusterv1alpha1.ClusterClaimList{}
	if err := a.spoke.List(ctx, claims); err != nil {
		return fmt.Errorf("list ClusterClaims: %w", err)
	}
	limit := defaultMaxCustomClusterClaims
	var suffixes []string
	synthesized := []clusterv1.ManagedClusterClaim{version.AgentClaim(version.Version)}
	k := &operatorv1.Klusterlet{}
	if err := a.mgmt.Get(ctx, types.NamespacedName{Name: a.opts.KlusterletName}, k); err == nil {
		if rc := k.Spec.RegistrationConfiguration; rc != nil && rc.ClusterClaimConfiguration != nil {
			limit = int(rc.ClusterClaimConfiguration.MaxCustomClusterClaims)
			suffixes = rc.ClusterClaimConfiguration.ReservedClusterClaimSuffixes
		}
		if host := hostingCluster(k, mc.Name); host != "" {
			synthesized = append(synthesized, clusterv1.ManagedClusterClaim{Name: clusterv1alpha1.ClusterClaimHostingCluster, Value: host})
		}
	}
	if cas := certs.HubCAsClaimValue(conn.cred.hub.CAData); cas != "" {
		synthesized = append(synthesized, clusterv1.ManagedClusterClaim{Name: certs.HubCAsClaim, Value: cas})
	}
	if cert := conn.cred.cert; cert != nil && len(cert.AuthorityKeyId) > 0 {
		synthesized = append(synthesized, clusterv1.ManagedClusterClaim{Name: certs.ClientIssuerClaim, Value: certs.KeyID(cert.AuthorityKeyId)})
	}
	if level := a.addonNamespaceLevel(ctx); level != "" {
		synthesized = append(synthesized, clusterv1.ManagedClusterClaim{Name: podsecurity.AddonNamespaceClaim, Value: level})
	}
	selected, truncated := selectClaims(claims.Items, limit, suffixes, synthesized...)
	mc.Status.ClusterClaims = selected
	a.mu.Lock()
	changed := truncated != a.truncatedClaims
	a.truncatedClaims = truncated
	a.mu.Unlock()
	if changed && truncated > 0 {
		a.recordHubEvent(ctx, conn, mc, corev1.EventTypeWarning, eventReasonClaimsTruncated, fmt.Sprintf(
			"%d custom cluster claims were left out: at most %d are reported (Klusterlet %s spec.registrationConfiguration.clusterClaimConfiguration.maxCustomClusterClaims)",
			truncated, limit, a.opts.KlusterletName))
	}
	return nil
}

// hostingCluster is the cluster the agent of Klusterlet k reports it runs
// on (spec.deployOption.reportHostingCluster: Enable): cluster itself, or
// spec.deployOption.hosted.managementClusterName in the Hosted modes; ""
// when it reports none. The claim is the agent's own, for its own
// ManagedCluster, so it replaces a ClusterClaim of the same name.
func hostingCluster(k *operatorv1.Klusterlet, cluster string) string {
	opt := k.Spec.DeployOption
	if opt.ReportHostingCluster != operatorv1.ReportHostingClusterModeEnable {
		return ""
	}
	if k.Mode().IsHosted() {
		if opt.Hosted == nil {
			return ""
		}
		return opt.Hosted.ManagementClusterName
	}
	return cluster
}

// addonNamespaceLevel is the Pod Security level the add-on agents'
// namespace enforces on the managed cluster (podsecurity.EnforcedLevel),
// from the cache, whose Namespace events trigger status syncs; "" when the
// namespace does not exist or the cache has not synced.
func (a *Agent) addonNamespaceLevel(ctx context.Context) string {
	if !informerSynced(ctx, a.spokeCache, &corev1.Namespace{}) {
		return ""
	}
	ns := &corev1.Namespace{}
	if err := a.spokeCache.Get(ctx, types.NamespacedName{Name: addonv1alpha1.DefaultAddonInstallNamespace}, ns); err != nil {
		return ""
	}
	return podsecurity.EnforcedLevel(ns.Labels)
}

// selectClaims returns the claims to report: without those labeled
// spoke-only, reserved ones first, then custom ones, each sorted by name,
// custom ones truncated to maxCustom. Reserved are the reserved names and
// the names ending with one of reservedSuffixes (the Klusterlet's
// clusterClaimConfiguration.reservedClusterClaimSuffixes). The agent's
// synthesized claims count as reserved and replace ClusterClaims of the same
// name. It also returns how many custom claims were left out.
func selectClaims(claims []clusterv1alpha1.ClusterClaim, maxCustom int, reservedSuffixes []string, synthesized ...clusterv1.ManagedClusterClaim) ([]clusterv1.ManagedClusterClaim, int) {
	reserved := slices.Clone(synthesized)
	var custom []clusterv1.ManagedClusterClaim
	for i := range claims {
		c := &claims[i]
		if _, hidden := c.Labels[clusterv1alpha1.ClusterClaimSpokeOnlyLabel]; hidden {
			continue
		}
		if slices.ContainsFunc(synthesized, func(s clusterv1.ManagedClusterClaim) bool { return s.Name == c.Name }) {
			continue
		}
		mcc := clusterv1.ManagedClusterClaim{Name: c.Name, Value: c.Spec.Value}
		if clusterv1alpha1.IsReservedClusterClaimName(c.Name) || hasAnySuffix(c.Name, reservedSuffixes) {
			reserved = append(reserved, mcc)
		} else {
			custom = append(custom, mcc)
		}
	}
	byName := func(x, y clusterv1.ManagedClusterClaim) int { return strings.Compare(x.Name, y.Name) }
	slices.SortFunc(reserved, byName)
	slices.SortFunc(custom, byName)
	truncated := 0
	if maxCustom >= 0 && len(custom) > maxCustom {
		truncated = len(custom) - maxCustom
		custom = custom[:maxCustom]
	}
	out := append(reserved, custom...)
	if len(out) == 0 {
		return nil, truncated
	}
	return out, truncated
}

// hasAnySuffix reports whether name ends with one of suffixes; empty
// suffixes match nothing.
func hasAnySuffix(name string, suffixes []string) bool {
	return slices.ContainsFunc(suffixes, func(suffix string) bool {
		return suffix != "" && strings.HasSuffix(name, suffix)
	})
}

// recordHubEvent records an event about mc in the cluster's namespace on the
// hub, where its agent may create events. The API server takes an event about
// a cluster-scoped object only in default or kube-system, so the event names
// the cluster namespace as the ManagedCluster's: `kubectl events -n CLUSTER`
// shows it.
func (a *Agent) recordHubEvent(ctx context.Context, conn *hubConnection, mc *clusterv1.ManagedCluster, eventType, reason, note string) {
	_, id := a.current()
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: mc.Name, GenerateName: mc.Name + "-"},
		EventTime:  metav1.NewMicroTime(a.now()),
		Regarding: corev1.ObjectReference{
			APIVersion: clusterv1.GroupVersion.String(), Kind: "ManagedCluster", Namespace: mc.Name, Name: mc.Name, UID: mc.UID,
		},
		Type: eventType, Reason: reason, Note: note, Action: "SyncStatus",
		ReportingController: "kubectl-ocm.io/klusterlet-agent",
		ReportingInstance:   id.subject().CommonName,
	}
	if err := conn.client.Create(ctx, ev); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Cannot record an event on the hub", "reason", reason)
	}
}
