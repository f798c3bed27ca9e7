package csr

import (
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"slices"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// FuzzApprovalPolicy runs the CSR approval policy on requests with arbitrary
// labels, requesters, subjects and usages (or an arbitrary spec.request).
// Whatever the input, a request the policy approves, automatically or for an
// administrator who accepts the cluster, names in its subject exactly the
// cluster its label names, carries that cluster's group, asks only for a
// client certificate, and was not made by another cluster's identity.
func FuzzApprovalPolicy(f *testing.F) {
	orgs := identity.ManagedClustersGroup + "," + identity.ClusterGroup("cluster1")
	f.Add("cluster1", "cluster1", "agent1", agent1, orgs, "client auth", true, []byte(nil))
	f.Add("cluster1", "cluster1", "agent1", bootstrap, orgs, "client auth,digital signature", false, []byte(nil))
	f.Add("cluster1", "cluster2", "agent1", bound1, orgs, "client auth", true, []byte(nil))
	f.Add("cluster1", "cluster1", "x:y", bound2, orgs+",system:masters", "server auth", true, []byte(nil))
	f.Add("cluster1", "", "", bootstrap, "", "", true, []byte("-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n"))
	f.Fuzz(func(t *testing.T, label, subjectCluster, agentID, requester, orgList, usages string, accepted bool, raw []byte) {
		request := raw
		if len(raw) == 0 {
			der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{
				CommonName:   identity.AgentUserName(subjectCluster, agentID),
				Organization: strings.Split(orgList, ","),
			}}, p256)
			if err != nil {
				return
			}
			request = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
		}
		csr := &certificatesv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: "fuzz", Labels: map[string]string{clusterv1.ClusterNameLabelKey: label}},
			Spec: certificatesv1.CertificateSigningRequestSpec{
				Request: request, SignerName: certificatesv1.KubeAPIServerClientSignerName, Username: requester,
			},
		}
		for _, u := range strings.Split(usages, ",") {
			csr.Spec.Usages = append(csr.Spec.Usages, certificatesv1.KeyUsage(u))
		}
		req, err := ParseRequest(csr)
		if err != nil {
			return
		}
		approved := func(how string) {
			t.Helper()
			cluster, _, ok := identity.ParseAgentUserName(req.CommonName)
			if !ok || cluster != label || label == "" {
				t.Fatalf("%s: approved %q for labeled cluster %q", how, req.CommonName, label)
			}
			if !slices.Contains(req.Organizations, identity.ClusterGroup(label)) {
				t.Fatalf("%s: approved without group %s: %v", how, identity.ClusterGroup(label), req.Organizations)
			}
			if !slices.Contains(req.Usages, certificatesv1.UsageClientAuth) || slices.Contains(req.Usages, certificatesv1.UsageServerAuth) {
				t.Fatalf("%s: approved usages %v", how, req.Usages)
			}
			if who := identity.Classify(requester); (who.Kind == identity.Agent || who.Kind == identity.ClusterBootstrap) && who.Cluster != label {
				t.Fatalf("%s: approved a request of %s for cluster %s", how, requester, label)
			}
		}
		switch action, why := Decide(req, Facts{ClusterAccepted: accepted, AutoApproveUsers: []string{bootstrap}}); action {
		case LeavePending:
			if why == "" {
				t.Fatal("left pending without a reason")
			}
		case ApproveIfAuthorized:
			approved("renewal")
			if !accepted || requester != req.CommonName {
				t.Fatalf("renewal approved for requester %s of %s (accepted %t)", requester, req.CommonName, accepted)
			}
		case Approve:
			approved("auto-approval")
			if requester != bootstrap {
				t.Fatalf("auto-approved a request of %s", requester)
			}
		}
		if ok, _ := DecideFirstJoin(req, FirstJoinTrust{AnyRequester: true}); ok {
			approved("first join")
		}
	})
}
