package hub

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// TestWaitForClusterManagerNamesPodCause waits for a ClusterManager whose
// operator cannot start because its image cannot be pulled: the progress and
// the timeout name the Pod, the image and the fix.
func TestWaitForClusterManagerNamesPodCause(t *testing.T) {
	const image = "quay.io/kubectl-ocm/ocm-controller:does-not-exist"
	labels := map[string]string{"app": "cluster-manager"}
	cm := &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: operatorv1.ClusterManagerName, Generation: 1}}
	operator := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: config.OperatorNamespace, Name: config.HubOperatorDeployment, Generation: 1},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels}},
		Status:     appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 1, UpdatedReplicas: 1},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: config.OperatorNamespace, Name: "cluster-manager-abc", Labels: labels},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "operator", Image: image, State: corev1.ContainerState{
			Waiting: &corev1.ContainerStateWaiting{Reason: deploystatus.ReasonImagePullBackOff, Message: `Back-off pulling image "` + image + `"`},
		}}}},
	}
	c := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(cm, operator, pod).Build()
	in := deploystatus.NewInspector(c, nil)
	in.ImageFix = cli.ImageFlagsFix
	var out bytes.Buffer
	err := WaitForClusterManager(context.Background(), c, in, &out, 1200*time.Millisecond, operatorv1.ClusterManagerName)
	if err == nil {
		t.Fatal("the wait succeeded")
	}
	wantProgress := "Waiting for ClusterManager cluster-manager to be available: generation 1 not yet observed by the ClusterManager operator; " +
		"Deployment open-cluster-management/cluster-manager: 0 of 1 updated replicas available; " +
		"Pod open-cluster-management/cluster-manager-abc, container operator: ImagePullBackOff for image " + image
	if !strings.Contains(out.String(), wantProgress) {
		t.Errorf("progress lacks %q:\n%s", wantProgress, out.String())
	}
	for _, want := range []string{"timed out after 1.2s", "The last Pod-level cause seen of Deployment open-cluster-management/cluster-manager",
		"ImagePullBackOff for image " + image, "To fix: " + cli.ImageFlagsFix} {
		assert.ErrorContains(t, err, want)
	}
}
