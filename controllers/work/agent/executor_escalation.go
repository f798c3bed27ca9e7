package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
)

// rbacResources are the resources whose writes the API server checks for
// privilege escalation: whoever creates or updates them must hold every
// permission they grant (or have the escalate or bind verb).
var rbacResources = []string{"roles", "clusterroles", "rolebindings", "clusterrolebindings"}

// dryRunFunc writes obj with dryRun as user and returns the API server's
// error (nil when it would accept the write); update says whether obj exists.
type dryRunFunc func(ctx context.Context, user string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, update bool) error

// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=impersonate

// impersonatingDryRun returns a dryRunFunc that writes as the impersonated
// user with clients made from cfg, one per user, kept for reuse. The agent
// needs the impersonate verb on serviceaccounts; the API server adds the
// ServiceAccount's groups itself.
func impersonatingDryRun(cfg *rest.Config) dryRunFunc {
	var mu sync.Mutex
	clients := map[string]dynamic.Interface{}
	return func(ctx context.Context, user string, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, update bool) error {
		mu.Lock()
		dyn, ok := clients[user]
		if !ok {
			c := rest.CopyConfig(cfg)
			c.Impersonate = rest.ImpersonationConfig{UserName: user}
			var err error
			if dyn, err = dynamic.NewForConfig(c); err != nil {
				mu.Unlock()
				return fmt.Errorf("client impersonating %s: %w", user, err)
			}
			clients[user] = dyn
		}
		mu.Unlock()
		ri := dyn.Resource(gvr).Namespace(obj.GetNamespace())
		dryRun := []string{metav1.DryRunAll}
		var err error
		if update {
			_, err = ri.Update(ctx, obj, metav1.UpdateOptions{DryRun: dryRun, FieldManager: fieldManagerDryRun})
		} else {
			_, err = ri.Create(ctx, obj, metav1.CreateOptions{DryRun: dryRun, FieldManager: fieldManagerDryRun})
		}
		return err
	}
}

// fieldManagerDryRun is the field manager of the escalation dry runs.
const fieldManagerDryRun = "work-agent-executor-check"

// isRBAC reports whether m is an RBAC object whose writes the API server
// checks for privilege escalation.
func isRBAC(m workv1.ManifestResourceMeta) bool {
	return m.Group == rbacv1.GroupName && slices.Contains(rbacResources, m.Resource)
}

// checkEscalation asks the API server, with a dry-run write as sa, whether
// sa could write required itself without escalating its privileges. A
// refusal is an executorDeniedError naming the escalation; other dry-run
// errors are left to the real write to report.
func (c *executorChecker) checkEscalation(ctx context.Context, sa *workv1.ManifestWorkSubjectServiceAccount, m workv1.ManifestResourceMeta,
	required, existing *unstructured.Unstructured) error {
	if c.dryRun == nil {
		return nil
	}
	user := "system:serviceaccount:" + sa.Namespace + ":" + sa.Name
	obj := required.DeepCopy()
	verb := "create"
	if existing != nil {
		verb = "update"
		obj.SetResourceVersion(existing.GetResourceVersion())
		obj.SetUID(existing.GetUID())
	}
	data, err := json.Marshal(obj.Object)
	if err != nil {
		return fmt.Errorf("encode %s %q: %w", m.Resource, m.Name, err)
	}
	sum := sha256.Sum256(data)
	key := accessKey{user: user, verb: "dry-run " + verb + " " + hex.EncodeToString(sum[:8]), group: m.Group, resource: m.Resource, namespace: m.Namespace, name: m.Name}
	ans, ok := c.cached(key)
	if !ok {
		gvr := schema.GroupVersionResource{Group: m.Group, Version: m.Version, Resource: m.Resource}
		err := c.dryRun(ctx, user, gvr, obj, existing != nil)
		switch {
		case apierrors.IsForbidden(err):
			ans = cachedAnswer{reason: forbiddenDetail(err)}
		case err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsConflict(err) && !apierrors.IsInvalid(err) && !apierrors.IsNotFound(err):
			return fmt.Errorf("dry-run %s of %s %q as executor ServiceAccount %s/%s: %w", verb, m.Resource, m.Name, sa.Namespace, sa.Name, err)
		default:
			ans = cachedAnswer{allowed: true}
		}
		c.remember(key, ans)
	}
	if ans.allowed {
		return nil
	}
	return &executorDeniedError{sa: *sa, verbs: []string{verb}, resource: m.Resource + "." + m.Group, namespace: m.Namespace, name: m.Name,
		escalation: ans.reason}
}

// forbiddenDetail is the API server's reason for refusing an RBAC write,
// without the repetition of the object it starts with.
func forbiddenDetail(err error) string {
	msg := err.Error()
	if _, after, ok := strings.Cut(msg, " is forbidden: "); ok {
		return after
	}
	return msg
}
