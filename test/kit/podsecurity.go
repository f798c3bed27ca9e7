package kit

import (
	"context"
	"fmt"
	"maps"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/podsecurity"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// probeLabel marks the ReplicaSets and Pods ExpectRestrictedPods creates,
// with the name of the Deployment they stand for.
const probeLabel = "test.kubectl-ocm.io/pod-security-probe"

// ExpectRestrictedPods checks, with the admin client c of a cluster whose
// kube-controller-manager runs the replicaset controller, that each of
// namespaces carries the Pod Security labels of pkg/podsecurity, and that
// the Pods of every Deployment of the product in them are admitted there:
// for each, it creates a ReplicaSet of the Deployment's Pod template (what
// the deployment controller creates, which the component runner stands in
// for), waits until the replicaset controller created its Pod, failing with
// the ReplicaFailure (FailedCreate) message the Pod Security admission gave
// when it could not, and deletes it. It returns the Deployments checked.
func ExpectRestrictedPods(ctx context.Context, t testing.TB, c client.Client, namespaces ...string) []string {
	t.Helper()
	var checked []string
	for _, ns := range namespaces {
		namespace := &corev1.Namespace{}
		Must(t, "get namespace "+ns, c.Get(ctx, client.ObjectKey{Name: ns}, namespace))
		for k, v := range podsecurity.Labels() {
			if got := namespace.Labels[k]; got != v {
				t.Errorf("namespace %s has label %s=%q, want %q", ns, k, got, v)
			}
		}
		deps := &appsv1.DeploymentList{}
		Must(t, "list the Deployments of "+ns, c.List(ctx, deps, client.InNamespace(ns),
			client.MatchingLabels{apply.PartOfLabelKey: apply.PartOfLabelValue}))
		for i := range deps.Items {
			expectAdmitted(ctx, t, c, &deps.Items[i])
			checked = append(checked, ns+"/"+deps.Items[i].Name)
		}
	}
	return checked
}

// ExpectSharedNamespace checks, with the admin client c, that namespace ns,
// one the product shares with OCM's add-ons (open-cluster-management on the
// hub, open-cluster-management-agent-addon on a managed cluster), warns and
// audits at restricted but does not enforce it (podsecurity.SharedLabels),
// and that the Pod template of every Deployment of the product in it meets
// restricted all the same, by the API server's own policy
// (podsecurity.Check). It returns the Deployments checked.
func ExpectSharedNamespace(ctx context.Context, t testing.TB, c client.Client, ns string) []string {
	t.Helper()
	namespace := &corev1.Namespace{}
	Must(t, "get namespace "+ns, c.Get(ctx, client.ObjectKey{Name: ns}, namespace))
	got := podsecurity.LabelsOf(namespace.Labels)
	if want := podsecurity.SharedLabels(false); !maps.Equal(got, want) {
		t.Errorf("namespace %s has Pod Security labels %v, want %v", ns, got, want)
	}
	deps := &appsv1.DeploymentList{}
	Must(t, "list the Deployments of "+ns, c.List(ctx, deps, client.InNamespace(ns),
		client.MatchingLabels{apply.PartOfLabelKey: apply.PartOfLabelValue}))
	var checked []string
	for _, d := range deps.Items {
		if f := podsecurity.Check(&d.Spec.Template.ObjectMeta, &d.Spec.Template.Spec); len(f) > 0 {
			t.Errorf("Deployment %s/%s %s", ns, d.Name, podsecurity.Describe(f))
		}
		checked = append(checked, ns+"/"+d.Name)
	}
	return checked
}

// expectAdmitted runs one Pod of dep's template through a ReplicaSet.
func expectAdmitted(ctx context.Context, t testing.TB, c client.Client, dep *appsv1.Deployment) {
	t.Helper()
	labels := map[string]string{probeLabel: dep.Name}
	tmpl := *dep.Spec.Template.DeepCopy()
	tmpl.Labels = maps.Clone(tmpl.Labels)
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	maps.Copy(tmpl.Labels, labels)
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: dep.Namespace, Name: dep.Name + "-pod-security", Labels: labels},
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl},
	}
	Must(t, "create ReplicaSet "+rs.Namespace+"/"+rs.Name, c.Create(ctx, rs))
	defer func() {
		Must(t, "delete ReplicaSet "+rs.Namespace+"/"+rs.Name, client.IgnoreNotFound(
			c.Delete(context.WithoutCancel(ctx), rs, client.PropagationPolicy(metav1.DeletePropagationBackground))))
	}()
	var refused string
	framework.Eventually(ctx, t, time.Minute, fmt.Sprintf("a Pod of Deployment %s/%s created in its namespace", dep.Namespace, dep.Name),
		func(ctx context.Context) (bool, error) {
			got := &appsv1.ReplicaSet{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(rs), got); err != nil {
				return false, err
			}
			for _, cond := range got.Status.Conditions {
				if cond.Type == appsv1.ReplicaSetReplicaFailure && cond.Status == corev1.ConditionTrue {
					refused = cond.Reason + ": " + cond.Message
					return true, nil
				}
			}
			pods := &corev1.PodList{}
			if err := c.List(ctx, pods, client.InNamespace(rs.Namespace), client.MatchingLabels(labels)); err != nil {
				return false, err
			}
			return len(pods.Items) > 0, nil
		})
	if refused != "" {
		t.Fatalf("the Pods of Deployment %s/%s are refused in their namespace: %s", dep.Namespace, dep.Name, refused)
	}
}
