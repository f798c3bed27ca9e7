package addondeploy

import (
	"context"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// farewellManifests is an agent with a pre-delete hook Job. The Job is
// managed by nobody on the managed cluster (spec.managedBy), so that the
// test alone writes its status.
const farewellManifests = `apiVersion: v1
kind: ConfigMap
metadata: {name: farewell-agent, namespace: default}
data: {cluster: "{{CLUSTER_NAME}}"}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: farewell-cleanup
  namespace: default
  labels: {open-cluster-management.io/addon-pre-delete: ""}
spec:
  managedBy: example.com/test
  template:
    spec:
      restartPolicy: Never
      containers: [{name: cleanup, image: busybox, args: ["--cluster={{CLUSTER_NAME}}"]}]`

func (s *suite) testPreDeleteHook(t *testing.T) {
	s.create(t, s.hubC, newCMA("farewell"))
	tpl := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: "farewell-template"}}
	tpl.Spec.AddonName = "farewell"
	tpl.Spec.AgentSpec.Workload.Manifests = manifests(t, farewellManifests)
	s.create(t, s.hubC, tpl)
	s.create(t, s.hubC, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "farewell"}})
	s.setDesired(t, "farewell", nil, configRef{addonv1alpha1.AddOnTemplateResource, "", "farewell-template"})

	agentCM := client.ObjectKey{Namespace: "default", Name: "farewell-agent"}
	jobKey := client.ObjectKey{Namespace: "default", Name: "farewell-cleanup"}
	s.poll(t, "the agent deployed and the add-on holding the hook finalizer", func(ctx context.Context) (bool, error) {
		m, err := s.mca(ctx, "farewell")
		if err != nil {
			return false, err
		}
		err = s.spokeC.Get(ctx, agentCM, &corev1.ConfigMap{})
		return err == nil && slices.Contains(m.Finalizers, addonv1alpha1.AddonPreDeleteHookFinalizer), err
	})
	if err := s.spokeC.Get(s.ctx, jobKey, &batchv1.Job{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the hook Job is on the cluster before the add-on is deleted (get: %v)", err)
	}

	kit.Must(t, "delete the add-on", s.hubC.Delete(s.ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "farewell"}}))
	s.waitCondition(t, "farewell", addonv1alpha1.ManagedClusterAddOnHookManifestCompleted, metav1.ConditionFalse, addonv1alpha1.HookManifestReasonNotCompleted)
	job := &batchv1.Job{}
	s.poll(t, "the hook Job on the cluster", func(ctx context.Context) (bool, error) {
		err := s.spokeC.Get(ctx, jobKey, job)
		return err == nil, err
	})
	// The add-on and its agent stay while the hook runs.
	if _, err := s.mca(s.ctx, "farewell"); err != nil {
		t.Fatalf("the add-on went before its hook completed: %v", err)
	}
	kit.Must(t, "the agent stays while the hook runs", s.spokeC.Get(s.ctx, agentCM, &corev1.ConfigMap{}))

	s.update(t, s.spokeC, job, true, func() {
		now := metav1.Now()
		job.Status.StartTime, job.Status.CompletionTime, job.Status.Succeeded = &now, &now, 1
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}
	})
	s.poll(t, "the add-on, its works and its agent gone once the hook completed", func(ctx context.Context) (bool, error) {
		return gone(ctx,
			objectRef{s.hubC, client.ObjectKey{Namespace: clusterName, Name: "farewell"}, &addonv1alpha1.ManagedClusterAddOn{}},
			objectRef{s.hubC, client.ObjectKey{Namespace: clusterName, Name: "addon-farewell-deploy-0"}, &workv1.ManifestWork{}},
			objectRef{s.hubC, client.ObjectKey{Namespace: clusterName, Name: "addon-farewell-pre-delete"}, &workv1.ManifestWork{}},
			objectRef{s.spokeC, agentCM, &corev1.ConfigMap{}},
			objectRef{s.spokeC, jobKey, &batchv1.Job{}},
		)
	})
}

func (s *suite) testSeedDefaultNamespace(t *testing.T) {
	s.create(t, s.hubC, newCMA("helloworld"))
	tpl := &addonv1alpha1.AddOnTemplate{ObjectMeta: metav1.ObjectMeta{Name: "helloworld"}}
	tpl.Spec.AddonName = "helloworld"
	tpl.Spec.AgentSpec.Workload.Manifests = manifests(t, `apiVersion: v1
kind: Namespace
metadata: {name: open-cluster-management-agent-addon}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: helloworld-agent, namespace: open-cluster-management-agent-addon}
spec:
  selector: {matchLabels: {app: helloworld-agent}}
  template:
    metadata: {labels: {app: helloworld-agent}}
    spec:
      containers: [{name: agent, image: quay.io/open-cluster-management/helloworld:v1, args: ["--cluster={{CLUSTER_NAME}}"]}]`)
	tpl.Spec.Registration = []addonv1alpha1.RegistrationSpec{{Type: addonv1alpha1.RegistrationTypeKubeClient}}
	s.create(t, s.hubC, tpl)

	obj := &unstructured.Unstructured{}
	kit.Must(t, "decode seed 003-managedclusteraddon-default-ns.yaml", yaml.Unmarshal(seed(t, "003-managedclusteraddon-default-ns.yaml"), &obj.Object))
	kit.Must(t, "apply the seed", apply.Apply(s.ctx, s.hubC, []*unstructured.Unstructured{obj}, apply.Options{FieldManager: "kubectl-ocm"}))
	s.setDesired(t, "helloworld", nil, configRef{addonv1alpha1.AddOnTemplateResource, "", "helloworld"})

	d := &appsv1.Deployment{}
	s.poll(t, "the helloworld agent in namespace default", func(ctx context.Context) (bool, error) {
		err := s.spokeC.Get(ctx, client.ObjectKey{Namespace: "default", Name: "helloworld-agent"}, d)
		return err == nil, err
	})
	env := map[string]string{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	if env["INSTALL_NAMESPACE"] != "default" || env["HUB_KUBECONFIG"] != "/managed/hub-kubeconfig/kubeconfig" {
		t.Errorf("agent env %v", env)
	}
	m := s.waitCondition(t, "helloworld", addonv1alpha1.ManagedClusterAddOnManifestApplied, metav1.ConditionTrue, "")
	if m.Status.Namespace != "default" || len(m.Status.Registrations) != 1 {
		t.Errorf("status.namespace %q registrations %+v", m.Status.Namespace, m.Status.Registrations)
	}
}

func (s *suite) testDelete(t *testing.T) {
	kit.Must(t, "delete add-on hello", s.hubC.Delete(s.ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "hello"}}))
	s.poll(t, "hello's works, hub permissions and agent gone", func(ctx context.Context) (bool, error) {
		return gone(ctx,
			objectRef{s.hubC, client.ObjectKey{Namespace: clusterName, Name: "addon-hello-deploy-0"}, &workv1.ManifestWork{}},
			objectRef{s.hubC, client.ObjectKey{Namespace: clusterName, Name: "open-cluster-management:hello:clusterrole:agent"}, &rbacv1.RoleBinding{}},
			objectRef{s.hubC, client.ObjectKey{Namespace: "hello-shared", Name: "open-cluster-management:hello:role:agent"}, &rbacv1.RoleBinding{}},
			objectRef{s.spokeC, client.ObjectKey{Namespace: "hello-agents", Name: "hello-agent"}, &appsv1.Deployment{}},
		)
	})
	s.waitLabel(t, "hello", "")
}

// objectRef is an object on the hub or the managed cluster.
type objectRef struct {
	c   client.Client
	key client.ObjectKey
	obj client.Object
}

// gone reports whether none of refs exists any more.
func gone(ctx context.Context, refs ...objectRef) (bool, error) {
	for _, r := range refs {
		if err := r.c.Get(ctx, r.key, r.obj); !apierrors.IsNotFound(err) {
			return false, err
		}
	}
	return true, nil
}
