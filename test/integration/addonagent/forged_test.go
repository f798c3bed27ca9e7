package addonagent

import (
	"context"
	"crypto/x509/pkix"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	csrpolicy "github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// testForgedRequests files add-on requests as cluster1's agent that the hub
// must never approve, then lets the add-on agent file a genuine one: once
// that is approved, the forged ones, reconsidered before it, are still
// pending.
func (s *suite) testForgedRequests(ctx context.Context, t *testing.T) {
	reg := func(cluster, addon string) *addonv1alpha1.ManagedClusterAddOnStatus {
		return &addonv1alpha1.ManagedClusterAddOnStatus{Registrations: []addonv1alpha1.RegistrationConfig{
			{SignerName: certificatesv1.KubeAPIServerClientSignerName,
				Subject: addonv1alpha1.Subject{User: identity.AddonUserName(cluster, addon, addon), Groups: identity.AddonDefaultGroups(cluster, addon)}},
		}}
	}
	s.createAddon(ctx, t, otherName, "target", reg(otherName, "target"))
	agent1 := s.agentClient(t, clusterName)
	def := func(cluster, addon string) pkix.Name {
		return certs.AddonSubject(cluster, addon, addonv1alpha1.Subject{})
	}
	forged := map[string]string{
		"ghost":                                 s.fileRequest(ctx, t, agent1, clusterName, "ghost", def(clusterName, "ghost"), certificatesv1.KubeAPIServerClientSignerName),
		"subject of another add-on":             s.fileRequest(ctx, t, agent1, clusterName, "target", def(clusterName, "other"), certificatesv1.KubeAPIServerClientSignerName),
		"subject of another cluster":            s.fileRequest(ctx, t, agent1, clusterName, "target", def(otherName, "target"), certificatesv1.KubeAPIServerClientSignerName),
		"another cluster's add-on":              s.fileRequest(ctx, t, agent1, otherName, "target", def(otherName, "target"), certificatesv1.KubeAPIServerClientSignerName),
		"the cluster's agent with add-on label": s.fileRequest(ctx, t, agent1, clusterName, "target", certs.AgentSubject(clusterName, "x"), certificatesv1.KubeAPIServerClientSignerName),
	}

	s.createAddon(ctx, t, clusterName, "target", reg(clusterName, "target"))
	framework.Eventually(ctx, t, pollTimeout, "the add-on agent's request for add-on target approved", func(ctx context.Context) (bool, error) {
		for _, csr := range s.addonCSRs(ctx, t, "target") {
			req, err := certs.ParseCSR(csr.Spec.Request)
			if err != nil {
				return false, err
			}
			if certs.SubjectEqual(req.Subject, def(clusterName, "target")) && approvedBy(&csr, "AutoApprovedByHubCSRApprovingController") {
				return true, nil
			}
		}
		return false, nil
	})
	for what, name := range forged {
		csr := &certificatesv1.CertificateSigningRequest{}
		if err := s.hubC.Get(ctx, client.ObjectKey{Name: name}, csr); err != nil {
			t.Fatal(err)
		}
		if len(csr.Status.Conditions) > 0 {
			t.Errorf("forged request %s (%s) was decided: %+v", name, what, csr.Status.Conditions)
		}
	}
}

// fileRequest files, with c, a request to signer labeled for addon of
// cluster for subject, and returns its name.
func (s *suite) fileRequest(ctx context.Context, t *testing.T, c client.Client, cluster, addon string, subject pkix.Name, signer string) string {
	t.Helper()
	p, err := certs.NewPendingRequest()
	if err != nil {
		t.Fatal(err)
	}
	data, err := certutil.MakeCSR(p.Key, &subject, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "forged-", Labels: map[string]string{
			clusterv1.ClusterNameLabelKey: cluster, addonv1alpha1.AddonLabelKey: addon}},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request: data, SignerName: signer,
			Usages: csrpolicy.AgentUsages(),
		},
	}
	kit.MustCreate(ctx, t, c, csr)
	return csr.Name
}
