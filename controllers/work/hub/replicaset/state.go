package replicaset

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// conditionTrue reports whether mw has condition typ True at its generation.
func conditionTrue(mw *workv1.ManifestWork, typ string) bool {
	c := meta.FindStatusCondition(mw.Status.Conditions, typ)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == mw.Generation
}
