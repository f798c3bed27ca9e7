package selfmanaged

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
)

// The add-on agent's hub credential and Lease, as OCM names them.
const (
	secretName = addonName + "-hub-kubeconfig"
	// leaseSeconds is the duration the agent gives its Lease: our agent
	// declares it stale 1.5 times that after the last renewal.
	leaseSeconds = 2
)

// testRequestApproved: our agent files the request of the registration the
// manager wrote; our hub approves it and the hub's kube-controller-manager
// signs it. The manager sees it with its own rights.
func (r *selfRun) testRequestApproved(t *testing.T) {
	var csr *certificatesv1.CertificateSigningRequest
	r.poll(t, "the add-on's request approved and signed", func(ctx context.Context) (bool, error) {
		list := &certificatesv1.CertificateSigningRequestList{}
		if err := r.m.c.List(ctx, list, client.MatchingLabels{
			"open-cluster-management.io/cluster-name": clusterName, "open-cluster-management.io/addon-name": addonName}); err != nil {
			return false, err
		}
		for i := range list.Items {
			if len(list.Items[i].Status.Certificate) > 0 {
				csr = &list.Items[i]
				return true, nil
			}
		}
		return false, nil
	})
	if !strings.HasPrefix(csr.Name, "addon-"+clusterName+"-"+addonName+"-") || csr.Spec.SignerName != certificatesv1.KubeAPIServerClientSignerName ||
		csr.Spec.Username != "system:open-cluster-management:"+clusterName+":agent1" {
		t.Errorf("request %s for signer %s by %s", csr.Name, csr.Spec.SignerName, csr.Spec.Username)
	}
	if !slices.ContainsFunc(csr.Status.Conditions, func(c certificatesv1.CertificateSigningRequestCondition) bool {
		return c.Type == certificatesv1.CertificateApproved && c.Status == corev1.ConditionTrue && c.Reason == "AutoApprovedByHubCSRApprovingController"
	}) {
		t.Errorf("request %s not approved by the hub: %+v", csr.Name, csr.Status.Conditions)
	}
	req, err := certs.ParseCSR(csr.Spec.Request)
	kit.Must(t, "parse the request", err)
	orgs := slices.Sorted(slices.Values(req.Subject.Organization)) // DER sorts the values of one attribute set
	if req.Subject.CommonName != addonUser() || !slices.Equal(orgs, []string{"system:open-cluster-management:addon:" + addonName, addonGroup()}) {
		t.Errorf("request subject %s, want the registration's %s in %v", req.Subject, addonUser(), addonGroups())
	}
}

// testCredentialSecret: Secret <addon>-hub-kubeconfig appears in the install
// namespace on cluster1 with the keys an OCM add-on agent mounts.
func (r *selfRun) testCredentialSecret(t *testing.T) {
	secret := &corev1.Secret{}
	r.poll(t, "Secret "+installNS+"/"+secretName+" on "+clusterName, func(ctx context.Context) (bool, error) {
		return true, r.spokeC.Get(ctx, client.ObjectKey{Namespace: installNS, Name: secretName}, secret)
	})
	for _, key := range []string{"kubeconfig", "tls.crt", "tls.key"} {
		if len(secret.Data[key]) == 0 {
			t.Errorf("Secret key %s is empty", key)
		}
	}
	chain, err := certutil.ParseCertsPEM(secret.Data["tls.crt"])
	kit.Must(t, "parse tls.crt", err)
	if chain[0].Subject.CommonName != addonUser() {
		t.Errorf("certificate of %s, want %s", chain[0].Subject.CommonName, addonUser())
	}
	r.secret = secret
	r.waitCondition(t, addonv1alpha1.ManagedClusterAddOnCertificateRotated, metav1.ConditionTrue, "ClientCertificateUpdated")
}

// testAgentAuthenticates: the add-on agent, given the Secret mounted as
// files and its kubeconfig, is the registration's user on the hub, reads
// the ConfigMaps the manager's RoleBinding grants in cluster1's namespace,
// and is refused the rest.
func (r *selfRun) testAgentAuthenticates(t *testing.T) {
	dir := t.TempDir()
	for key, value := range r.secret.Data {
		kit.Must(t, "write "+key, os.WriteFile(filepath.Join(dir, key), value, 0o600))
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	kit.Must(t, "load the add-on's kubeconfig", err)
	review, err := kubernetes.NewForConfigOrDie(cfg).AuthenticationV1().SelfSubjectReviews().Create(r.ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	kit.Must(t, "SelfSubjectReview with the add-on's credential", err)
	if u := review.Status.UserInfo; u.Username != addonUser() || !slices.Contains(u.Groups, addonGroup()) {
		t.Errorf("the hub sees %s in %v, want %s in %s", u.Username, u.Groups, addonUser(), addonGroup())
	}
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	kit.Must(t, "client of the add-on agent", err)
	r.create(t, r.hubC, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: addonName + "-settings"}})
	cms := &corev1.ConfigMapList{}
	kit.Must(t, "the add-on agent lists the ConfigMaps of "+clusterName, c.List(r.ctx, cms, client.InNamespace(clusterName)))
	if !slices.ContainsFunc(cms.Items, func(cm corev1.ConfigMap) bool { return cm.Name == addonName+"-settings" }) {
		t.Errorf("the add-on agent does not see ConfigMap %s-settings in %s", addonName, clusterName)
	}
	err = c.Get(r.ctx, client.ObjectKey{Namespace: otherName, Name: "kube-root-ca.crt"}, &corev1.ConfigMap{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("get a ConfigMap of %s: got %v, want 403 Forbidden", otherName, err)
	}
	agenttest.CheckAddonIsolation(r.ctx, t, c, agenttest.Isolation{Cluster: clusterName, Other: otherName, OtherAddon: "other"})
}

// testLease: the add-on agent, as its ServiceAccount on cluster1, renews
// Lease <addon> in its install namespace: our agent reports the add-on
// Available; renewals stop: Available False; the Lease is gone: Unknown.
func (r *selfRun) testLease(t *testing.T) {
	cfg, err := r.spoke.ConfigForServiceAccount(r.ctx, installNS, agentSA, time.Hour)
	kit.Must(t, "credentials of the add-on agent on "+clusterName, err)
	c, err := client.New(cfg, client.Options{Scheme: apis.Scheme})
	kit.Must(t, "client of the add-on agent on "+clusterName, err)
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: installNS, Name: addonName},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(addonName), LeaseDurationSeconds: ptr.To[int32](leaseSeconds),
			RenewTime: &metav1.MicroTime{Time: time.Now()}}}
	r.poll(t, "the add-on agent creates its Lease", func(ctx context.Context) (bool, error) {
		return true, c.Create(ctx, lease) // the agent's Role may reach the API server's authorizer late
	})
	const available = addonv1alpha1.ManagedClusterAddOnConditionAvailable
	r.poll(t, "ManagedClusterAddOn "+addonName+" Available while its Lease is renewed", func(ctx context.Context) (bool, error) {
		if time.Since(lease.Spec.RenewTime.Time) > leaseSeconds*time.Second/4 {
			lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
			if err := c.Update(ctx, lease); err != nil {
				return false, err
			}
		}
		mca := &addonv1alpha1.ManagedClusterAddOn{}
		if err := r.hubC.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: addonName}, mca); err != nil {
			return false, err
		}
		cond := meta.FindStatusCondition(mca.Status.Conditions, available)
		return cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == addonv1alpha1.AddonAvailableReasonLeaseUpdated &&
			cond.Message == addonName+" add-on is available.", nil
	})

	cond := r.waitCondition(t, available, metav1.ConditionFalse, addonv1alpha1.AddonAvailableReasonLeaseUpdateStopped)
	if cond.Message != addonName+" add-on is not available." {
		t.Errorf("message %q, want OCM's", cond.Message)
	}
	kit.Must(t, "delete the Lease, as the add-on's removal does", r.spokeC.Delete(r.ctx, lease))
	cond = r.waitCondition(t, available, metav1.ConditionUnknown, addonv1alpha1.AddonAvailableReasonLeaseNotFound)
	if cond.Message != "The status of "+addonName+" add-on is unknown." {
		t.Errorf("message %q, want OCM's", cond.Message)
	}
}

// testDelete: the manager deletes its ManagedClusterAddOn; our agent
// removes the add-on's hub credential from cluster1 and its pending
// request (the install namespace stays: the deploy work orphans it).
func (r *selfRun) testDelete(t *testing.T) {
	mca := newObject(addonV1beta1, "ManagedClusterAddOn")
	mca.SetNamespace(clusterName)
	mca.SetName(addonName)
	kit.Must(t, "the manager deletes its ManagedClusterAddOn", r.m.c.Delete(r.ctx, mca))
	for _, key := range []client.ObjectKey{{Namespace: installNS, Name: secretName}, {Namespace: config.AgentNamespace, Name: secretName + "-pending"}} {
		r.poll(t, "Secret "+key.String()+" deleted from "+clusterName, func(ctx context.Context) (bool, error) {
			err := r.spokeC.Get(ctx, key, &corev1.Secret{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	}
}
