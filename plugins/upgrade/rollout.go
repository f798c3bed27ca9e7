package upgrade

import (
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Condition types the operator writes on both resources and the upgrade
// reads: Applied says whether it could apply the spec, Available whether what
// it installed runs.
const (
	conditionApplied   = "Applied"
	conditionAvailable = "Available"
)

// resourceStatus is what the upgrade reads from the status of a
// ClusterManager or Klusterlet.
type resourceStatus struct {
	generation, observedGeneration int64
	conditions                     []metav1.Condition
	generations                    []operatorv1.GenerationStatus
	related                        []operatorv1.RelatedResourceMeta
}

// statusOf returns the status of a ClusterManager or Klusterlet.
func statusOf(obj client.Object) resourceStatus {
	st := resourceStatus{generation: obj.GetGeneration()}
	switch o := obj.(type) {
	case *operatorv1.ClusterManager:
		st.observedGeneration, st.conditions = o.Status.ObservedGeneration, o.Status.Conditions
		st.generations, st.related = o.Status.Generations, o.Status.RelatedResources
	case *operatorv1.Klusterlet:
		st.observedGeneration, st.conditions = o.Status.ObservedGeneration, o.Status.Conditions
		st.generations, st.related = o.Status.Generations, o.Status.RelatedResources
	}
	return st
}

// listedDeployments returns the Deployments the status lists in generations
// or relatedResources, without repeats, sorted.
func (st resourceStatus) listedDeployments() []client.ObjectKey {
	var keys []client.ObjectKey
	add := func(group, resource, namespace, name string) {
		key := client.ObjectKey{Namespace: namespace, Name: name}
		if group == appsv1.GroupName && resource == "deployments" && !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	for _, g := range st.generations {
		add(g.Group, g.Resource, g.Namespace, g.Name)
	}
	for _, r := range st.related {
		add(r.Group, r.Resource, r.Namespace, r.Name)
	}
	slices.SortFunc(keys, func(a, b client.ObjectKey) int { return strings.Compare(a.String(), b.String()) })
	return keys
}

// observation is one look at an upgrade under way.
type observation struct {
	// kind and name name the resource, such as "ClusterManager cluster-manager".
	kind, name string
	// generation is the resource's generation the upgrade wrote.
	generation int64
	// image is the image the upgrade rolls out.
	image string
	// status is the resource's current status.
	status resourceStatus
	// deployments are the Deployments the upgrade waits for: the operator's
	// own and those the status lists, read now; missing names those listed
	// that do not exist.
	deployments []*appsv1.Deployment
	missing     []client.ObjectKey
}

// judge reports whether the upgrade is done, the state to show, and an error
// when it cannot finish: the operator rejected the spec (Applied False at
// the new generation) or a Deployment's rollout stalled for good.
func judge(o observation) (bool, string, error) {
	var pending []string
	if o.status.observedGeneration < o.generation {
		pending = append(pending, fmt.Sprintf("the operator has not acted on generation %d yet (observed %d)", o.generation, o.status.observedGeneration))
	} else if c := cli.CurrentCondition(o.status.conditions, conditionApplied, o.generation); c != nil && c.Status == metav1.ConditionFalse {
		return false, "", fmt.Errorf("%s %s was not applied: %s: %s", o.kind, o.name, c.Reason, c.Message)
	}
	for _, dep := range o.deployments {
		ok, state, err := rolloutState(dep, o.image)
		if err != nil {
			return false, "", err
		}
		if !ok {
			pending = append(pending, state)
		}
	}
	for _, key := range o.missing {
		pending = append(pending, fmt.Sprintf("Deployment %s is missing", key))
	}
	if o.status.observedGeneration >= o.generation {
		if len(o.status.listedDeployments()) == 0 {
			pending = append(pending, "its status lists no Deployment yet")
		}
		switch c := cli.CurrentCondition(o.status.conditions, conditionAvailable, o.generation); {
		case c == nil:
			pending = append(pending, "Available is not reported yet")
		case c.Status != metav1.ConditionTrue:
			pending = append(pending, fmt.Sprintf("Available=%s (%s): %s", c.Status, c.Reason, c.Message))
		}
	}
	if len(pending) == 0 {
		return true, "", nil
	}
	return false, strings.Join(pending, "; "), nil
}

// rolloutState reports whether dep runs image and is rolled out by the
// rule of deploystatus.Of, and otherwise what it waits for, with the cause
// the Deployment gives. A rollout that exceeded its progress deadline is an
// error.
func rolloutState(dep *appsv1.Deployment, image string) (bool, string, error) {
	name := fmt.Sprintf("Deployment %s/%s", dep.Namespace, dep.Name)
	if !runsImage(dep, image) {
		return false, name + " does not run the new image yet", nil
	}
	switch st := deploystatus.Of(dep); {
	case st.Stalled:
		return false, "", fmt.Errorf("%s did not roll out: %s", name, st)
	case !st.Done:
		return false, name + ": " + st.String(), nil
	}
	return true, "", nil
}

// runsImage reports whether a container of dep's pod template runs image.
func runsImage(dep *appsv1.Deployment, image string) bool {
	return slices.ContainsFunc(dep.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Image == image })
}
