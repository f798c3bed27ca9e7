package agent

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

func typesUID(s string) types.UID { return types.UID(s) }

func equalStatus(a, b *workv1.ManifestWork) bool {
	return equality.Semantic.DeepEqual(a.Status, b.Status)
}
