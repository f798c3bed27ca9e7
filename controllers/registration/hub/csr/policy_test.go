package csr

import (
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// request builds an agent request labeled cluster, for agent1 of
// subjectCluster, made by requester.
func request(cluster, subjectCluster, requester string) Request {
	return Request{
		Cluster: cluster, Requester: requester, SignerName: certificatesv1.KubeAPIServerClientSignerName,
		Usages:        []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageClientAuth},
		CommonName:    "system:open-cluster-management:" + subjectCluster + ":agent1",
		Organizations: []string{ManagedClustersGroup, "system:open-cluster-management:" + subjectCluster},
	}
}

const bootstrap = "system:serviceaccount:open-cluster-management:agent-registration-bootstrap"

func TestDecide(t *testing.T) {
	agent1 := "system:open-cluster-management:cluster1:agent1"
	agent2 := "system:open-cluster-management:cluster2:agent1"
	accepted := Facts{ClusterAccepted: true}
	tests := []struct {
		name  string
		req   Request
		facts Facts
		want  Action
	}{
		{"renewal by the same cluster", request("cluster1", "cluster1", agent1), accepted, ApproveIfAuthorized},
		{"renewal without the managed-clusters group", func() Request {
			r := request("cluster1", "cluster1", agent1)
			r.Organizations = r.Organizations[1:]
			return r
		}(), accepted, ApproveIfAuthorized},
		{"renewal of a cluster not accepted", request("cluster1", "cluster1", agent1), Facts{}, LeavePending},
		{"subject names another cluster than the label", request("cluster1", "cluster2", agent2), accepted, LeavePending},
		{"renewal requested by another cluster's identity", request("cluster2", "cluster2", agent1), accepted, LeavePending},
		{"bootstrap requester not in the list", request("cluster1", "cluster1", bootstrap), accepted, LeavePending},
		{"bootstrap requester in the list", request("cluster1", "cluster1", bootstrap), Facts{AutoApproveUsers: []string{bootstrap}}, Approve},
		{"listed bootstrap requester, subject names another cluster", request("cluster1", "cluster2", bootstrap), Facts{AutoApproveUsers: []string{bootstrap}}, LeavePending},
		{"extra organization", func() Request {
			r := request("cluster1", "cluster1", agent1)
			r.Organizations = append(r.Organizations, "system:masters")
			return r
		}(), accepted, LeavePending},
		{"agent id with a colon", func() Request {
			r := request("cluster1", "cluster1", agent1)
			r.CommonName += ":x"
			r.Requester = r.CommonName
			return r
		}(), accepted, LeavePending},
		{"server auth usage", func() Request {
			r := request("cluster1", "cluster1", agent1)
			r.Usages = append(r.Usages, certificatesv1.UsageServerAuth)
			return r
		}(), accepted, LeavePending},
		{"other signer", func() Request {
			r := request("cluster1", "cluster1", agent1)
			r.SignerName = certificatesv1.KubeletServingSignerName
			return r
		}(), accepted, LeavePending},
		{"no cluster label", request("", "cluster1", agent1), accepted, LeavePending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := Decide(tt.req, tt.facts)
			if got != tt.want {
				t.Errorf("Decide = %s (%s), want %s", got, why, tt.want)
			}
			if why == "" {
				t.Error("Decide gave no reason")
			}
		})
	}
}

func TestParseRequestRejectsGarbage(t *testing.T) {
	csr := &certificatesv1.CertificateSigningRequest{Spec: certificatesv1.CertificateSigningRequestSpec{Request: []byte("not pem")}}
	if _, err := ParseRequest(csr); err == nil {
		t.Error("ParseRequest accepted a request that is not PEM")
	}
}
