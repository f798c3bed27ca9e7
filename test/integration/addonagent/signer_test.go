package addonagent

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/controllers/addon/hub/template"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/registration"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// The custom-signer template add-on of the tests.
const (
	signedAddon = "signed"
	signerName  = "example.com/signed"
	signingCA   = "signed-ca"
)

// testCustomSigner follows a template add-on with a KubeClient and a
// CustomSigner registration from its ManagedClusterAddOn, through the
// hub's deploy controller, approver and signer, to the agent's Secrets:
// the custom-signer certificate chains to the signingCA and carries the
// registration's subject. Forged custom-signer requests (another cluster's
// subject, another cluster's agent, one an administrator approved) stay
// unsigned. Deleted credential Secrets come back.
func (s *suite) testCustomSigner(ctx context.Context, t *testing.T) {
	ca := s.createSigningCA(ctx, t)
	s.createSignedAddon(ctx, t)
	subject := func(cluster string) pkix.Name {
		return certs.AddonSubject(cluster, signedAddon, addonv1alpha1.Subject{
			User: identity.AddonUserName(cluster, signedAddon, template.AgentName(signedAddon)), Groups: identity.AddonDefaultGroups(cluster, signedAddon)})
	}
	forgedSubject := s.fileSignerRequest(ctx, t, s.agentClient(t, clusterName), subject(otherName))
	forgedRequester := s.fileSignerRequest(ctx, t, s.agentClient(t, otherName), subject(clusterName))
	adminApproved := s.fileSignerRequest(ctx, t, s.agentClient(t, clusterName), pkix.Name{CommonName: "kubernetes-admin", Organization: []string{"system:masters"}})
	s.approveAsAdmin(ctx, t, adminApproved)

	// The install namespace, which the deploy work would create.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: addonv1alpha1.DefaultAddonInstallNamespace}}
	if err := s.spokeC.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	kit.MustCreate(ctx, t, s.hubC, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: signedAddon}})
	certName := registration.CustomSignerSecretName(signedAddon, signerName)
	secret := s.waitAddonSecret(ctx, t, certName, "")
	leaf, err := certs.ValidateClientCertificate(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey], subject(clusterName), ca.NotBefore)
	if err != nil {
		t.Fatalf("Secret %s holds no certificate of the registration's subject: %v", certName, err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the certificate does not chain to the signingCA: %v", err)
	}
	if got := string(secret.Data["cluster-name"]); got != clusterName {
		t.Errorf("cluster-name = %q, want %q", got, clusterName)
	}
	kubeSecret := s.waitAddonSecret(ctx, t, signedAddon+"-hub-kubeconfig", "")

	for what, name := range map[string]string{"another cluster's subject": forgedSubject, "another cluster's agent": forgedRequester, "approved by an administrator": adminApproved} {
		csr := &certificatesv1.CertificateSigningRequest{}
		if err := s.hubC.Get(ctx, client.ObjectKey{Name: name}, csr); err != nil {
			t.Fatal(err)
		}
		if len(csr.Status.Certificate) > 0 || (what != "approved by an administrator" && len(csr.Status.Conditions) > 0) {
			t.Errorf("forged request %s (%s) was decided or signed: %+v", name, what, csr.Status)
		}
	}

	// Deleted credentials come back, each with a new request.
	for _, old := range []*corev1.Secret{secret, kubeSecret} {
		if err := s.spokeC.Delete(ctx, old); err != nil {
			t.Fatal(err)
		}
	}
	s.waitAddonSecret(ctx, t, certName, secret.UID)
	s.waitAddonSecret(ctx, t, signedAddon+"-hub-kubeconfig", kubeSecret.UID)
}

// createSigningCA writes a CA to the signingCA Secret in the hub
// controller's namespace and returns its certificate.
func (s *suite) createSigningCA(ctx context.Context, t *testing.T) *x509.Certificate {
	t.Helper()
	key, keyPEM, err := certs.NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "signed-addon-ca"}, key)
	if err != nil {
		t.Fatal(err)
	}
	kit.MustCreate(ctx, t, s.hubC, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: config.HubNamespace, Name: signingCA},
		Type: corev1.SecretTypeTLS, Data: map[string][]byte{corev1.TLSCertKey: pem.EncodeToMemory(&pem.Block{Type: certutil.CertificateBlockType, Bytes: ca.Raw}), corev1.TLSPrivateKeyKey: keyPEM}})
	return ca
}

// createSignedAddon creates the template add-on signed, installed by hand,
// whose template has a KubeClient and a CustomSigner registration.
func (s *suite) createSignedAddon(ctx context.Context, t *testing.T) {
	t.Helper()
	cm := &unstructured.Unstructured{}
	cm.SetAPIVersion("v1")
	cm.SetKind("ConfigMap")
	cm.SetName(signedAddon + "-settings")
	cm.SetNamespace(addonv1alpha1.DefaultAddonInstallNamespace)
	raw, err := cm.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	tpl := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: signedAddon + "-template"}}
	tpl.Spec.AddonName = signedAddon
	tpl.Spec.AgentSpec.Workload.Manifests = []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	tpl.Spec.Registration = []addonv1alpha1.RegistrationSpec{
		{Type: addonv1alpha1.RegistrationTypeKubeClient, KubeClient: &addonv1alpha1.KubeClientRegistrationConfig{}},
		{Type: addonv1alpha1.RegistrationTypeCustomSigner, CustomSigner: &addonv1alpha1.CustomSignerRegistrationConfig{
			SignerName: signerName, SigningCA: addonv1alpha1.SigningCARef{Name: signingCA}}},
	}
	kit.MustCreate(ctx, t, s.hubC, tpl)
	kit.MustCreate(ctx, t, s.hubC, &addonv1alpha1.ClusterManagementAddOn{ObjectMeta: metav1.ObjectMeta{Name: signedAddon},
		Spec: addonv1alpha1.ClusterManagementAddOnSpec{
			InstallStrategy: addonv1alpha1.InstallStrategy{Type: addonv1alpha1.InstallStrategyManual},
			SupportedConfigs: []addonv1alpha1.ConfigMeta{{
				ConfigGroupResource: addonv1alpha1.ConfigGroupResource{Group: addonv1alpha1.GroupVersion.Group, Resource: addonv1alpha1.AddOnTemplateResource},
				DefaultConfig:       &addonv1alpha1.ConfigReferent{Name: tpl.Name},
			}},
		}})
}

// fileSignerRequest files, with c, a request of the custom signer labeled
// for the add-on signed of cluster1 for subject, and returns its name.
func (s *suite) fileSignerRequest(ctx context.Context, t *testing.T, c client.Client, subject pkix.Name) string {
	t.Helper()
	return s.fileRequest(ctx, t, c, clusterName, signedAddon, subject, signerName)
}

// approveAsAdmin approves request name as the hub's administrator.
func (s *suite) approveAsAdmin(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	csr := &certificatesv1.CertificateSigningRequest{}
	if err := s.hubC.Get(ctx, client.ObjectKey{Name: name}, csr); err != nil {
		t.Fatal(err)
	}
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "ApprovedByAdmin"})
	if err := s.hubC.SubResource("approval").Update(ctx, csr); err != nil {
		t.Fatal(err)
	}
}

// waitAddonSecret waits until Secret name exists in the default install
// namespace on cluster1 with another UID than old, and returns it.
func (s *suite) waitAddonSecret(ctx context.Context, t *testing.T, name string, old types.UID) *corev1.Secret {
	t.Helper()
	secret := &corev1.Secret{}
	framework.Eventually(ctx, t, pollTimeout, "Secret "+name+" written", func(ctx context.Context) (bool, error) {
		err := s.spokeC.Get(ctx, types.NamespacedName{Namespace: addonv1alpha1.DefaultAddonInstallNamespace, Name: name}, secret)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil && secret.UID != old, err
	})
	return secret
}
