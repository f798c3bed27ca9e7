package framework

import (
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// AppWork returns ManifestWork name of the cluster namespace cluster that
// delivers a small application to namespace app: the namespace, ConfigMap
// app-config and Deployment app (busybox, sleeping: on a node it runs). Tests of a disruption deliver it
// and watch its objects on the managed cluster.
func AppWork(cluster, name, app string) (*workv1.ManifestWork, error) {
	labels := map[string]string{"app": "app"}
	objs := []runtime.Object{
		&corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: app}},
		&corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: "app-config"},
			Data: map[string]string{"greeting": "hello"}},
		&appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Namespace: app, Name: "app"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox", Command: []string{"sleep", "86400"}}}}}}},
	}
	w := &workv1.ManifestWork{ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: name}}
	for _, obj := range objs {
		raw, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		w.Spec.Workload.Manifests = append(w.Spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}})
	}
	return w, nil
}
