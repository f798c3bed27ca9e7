package csr

import (
	"context"
	"sync"

	certificatesv1 "k8s.io/api/certificates/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// clusterIndex indexes the cached CertificateSigningRequests by the cluster
// their cluster-name label names.
const clusterIndex = "csrCluster"

// indexed holds the field indexers IndexByCluster registered clusterIndex
// with: a manager's controllers share one.
var indexed sync.Map

// IndexByCluster indexes the CertificateSigningRequests of the cache behind
// indexer by their cluster-name label, once per indexer, for OfCluster. The
// approvers look up a cluster's requests at each change of the cluster;
// without the index each look-up read every request of the fleet.
func IndexByCluster(ctx context.Context, indexer client.FieldIndexer) error {
	if _, done := indexed.LoadOrStore(indexer, struct{}{}); done {
		return nil
	}
	err := indexer.IndexField(ctx, &certificatesv1.CertificateSigningRequest{}, clusterIndex, func(o client.Object) []string {
		if cluster := o.GetLabels()[clusterv1.ClusterNameLabelKey]; cluster != "" {
			return []string{cluster}
		}
		return nil
	})
	if err != nil {
		indexed.Delete(indexer)
	}
	return err
}

// OfCluster lists, from a cache indexed with IndexByCluster, the requests
// labeled with cluster.
func OfCluster(cluster string) client.ListOption {
	return client.MatchingFields{clusterIndex: cluster}
}
