package permissions

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// Verbs, in the order the file lists them.
var (
	// objectVerbs are the verbs of a resource of objects.
	objectVerbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	// statusVerbs are those of a status-like subresource.
	statusVerbs = []string{"get", "update", "patch"}
	// verbOrder orders every verb in the file; verbs a role names that are
	// not here follow, in alphabetical order.
	verbOrder = append(slices.Clone(objectVerbs), "approve", "sign", "bind", "escalate", "impersonate", "renew")
)

// registerGroup is the API group of the rights that admission and the hub
// controller check with an access review and that no API serves:
// managedclusters/accept and managedclusters/clientcertificates.
const registerGroup = "register.open-cluster-management.io"

// resource is one row of the grid: a resource (or subresource) of an API
// group, whether its objects live in namespaces, and the verbs asked.
type resource struct {
	group, resource, subresource string
	namespaced                   bool
	verbs                        []string
}

// String names the resource in the file: <resource>[.<group>][/<subresource>].
func (r resource) String() string {
	s := r.resource
	if r.group != "" {
		s += "." + r.group
	}
	if r.subresource != "" {
		s += "/" + r.subresource
	}
	return s
}

// builtinResources are the Kubernetes resources whose rights matter on a
// hub, and the rights the product checks that no API serves.
func builtinResources() []resource {
	obj := func(group, res string, namespaced bool, extra ...string) resource {
		return resource{group: group, resource: res, namespaced: namespaced, verbs: append(slices.Clone(objectVerbs), extra...)}
	}
	sub := func(group, res, sub string, namespaced bool, verbs ...string) resource {
		return resource{group: group, resource: res, subresource: sub, namespaced: namespaced, verbs: verbs}
	}
	certs := certificatesv1.GroupName
	return []resource{
		obj("", "namespaces", false),
		obj("", "secrets", true),
		obj("", "configmaps", true),
		obj("", "serviceaccounts", true, "impersonate"),
		sub("", "serviceaccounts", "token", true, "create"),
		obj("", "events", true),
		obj(eventsv1.GroupName, "events", true),
		obj(coordinationv1.GroupName, "leases", true),
		obj(rbacv1.GroupName, "roles", true, "bind", "escalate"),
		obj(rbacv1.GroupName, "rolebindings", true),
		obj(rbacv1.GroupName, "clusterroles", false, "bind", "escalate"),
		obj(rbacv1.GroupName, "clusterrolebindings", false),
		obj(certs, "certificatesigningrequests", false),
		sub(certs, "certificatesigningrequests", "approval", false, statusVerbs...),
		sub(certs, "certificatesigningrequests", "status", false, statusVerbs...),
		{group: certs, resource: "signers", verbs: []string{"approve", "sign"}},
		{resource: "users", verbs: []string{"impersonate"}},
		{resource: "groups", verbs: []string{"impersonate"}},
		obj(apiextensionsv1.GroupName, "customresourcedefinitions", false),
		obj(admissionregistrationv1.GroupName, "validatingadmissionpolicies", false),
		obj(admissionregistrationv1.GroupName, "validatingadmissionpolicybindings", false),
		sub(registerGroup, "managedclusters", "accept", false, "update"),
		sub(registerGroup, "managedclusters", "clientcertificates", false, "renew"),
		sub(clusterv1.GroupVersion.Group, "managedclustersets", "join", false, "create"),
		sub(clusterv1.GroupVersion.Group, "managedclustersets", "bind", false, "create"),
		sub(hubtunnel.Group, hubtunnel.Resource, hubtunnel.AttachSubresource, false, "get"),
		sub(hubtunnel.Group, hubtunnel.Resource, hubtunnel.ProxySubresource, false, "get", "create", "update", "patch", "delete"),
	}
}

// productResources returns the resources of the CRDs the hub installs,
// with their status subresources.
func productResources(t *testing.T) []resource {
	t.Helper()
	crds, err := config.HubCRDs()
	kit.Must(t, "read the hub's CRDs", err)
	var out []resource
	for _, crd := range crds {
		r := resource{group: crd.Spec.Group, resource: crd.Spec.Names.Plural, namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped, verbs: objectVerbs}
		out = append(out, r)
		if slices.ContainsFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool {
			return v.Subresources != nil && v.Subresources.Status != nil
		}) {
			r.subresource, r.verbs = "status", statusVerbs
			out = append(out, r)
		}
	}
	return out
}

// notServed says which resources that roles name no API of the test's hub
// serves live in namespaces: Cluster API's clusters, which the importer
// reads where Cluster API is installed.
var notServed = map[string]bool{"clusters.cluster.x-k8s.io": true}

// grid is what is asked of every identity.
type grid struct {
	resources []resource
	// namespaces are the namespaces asked of namespaced resources, in
	// order; "" stands for all namespaces.
	namespaces []string
	// names are, per resource (without its group or subresource), the
	// objects asked by name, in every namespace of namespaces for a
	// namespaced resource.
	names map[string][]string
}

// newGrid builds the grid on h: the built-in resources, the product's, and
// every resource and verb the product's roles on the hub name, asked in the
// clusters' namespaces, the hub's, another one and all of them; by name,
// the objects the product's roles name (resourceNames) and the clusters'
// ManagedClusters and namespaces. The product's roles are every Role and
// ClusterRole but Kubernetes' own (labeled kubernetes.io/bootstrapping).
func (h *hub) newGrid(t *testing.T) *grid {
	t.Helper()
	g := &grid{
		namespaces: []string{cluster1, cluster2, config.HubNamespace, identity.BootstrapNamespace, identity.ClusterBootstrapNamespace, identity.AgentTokenNamespace,
			metav1.NamespaceSystem, metav1.NamespacePublic, metav1.NamespaceDefault, metav1.NamespaceAll},
		names: map[string][]string{"managedclusters": {cluster1, cluster2}},
	}
	for _, ns := range g.namespaces {
		if ns != metav1.NamespaceAll {
			g.names["namespaces"] = append(g.names["namespaces"], ns)
		}
	}
	byKey := map[string]int{} // resource -> its index in g.resources
	add := func(r resource) {
		key := r.String()
		if i, ok := byKey[key]; ok {
			for _, v := range r.verbs {
				if !slices.Contains(g.resources[i].verbs, v) {
					g.resources[i].verbs = append(g.resources[i].verbs, v)
				}
			}
			return
		}
		r.verbs = slices.Clone(r.verbs)
		byKey[key] = len(g.resources)
		g.resources = append(g.resources, r)
	}
	for _, r := range append(builtinResources(), productResources(t)...) {
		add(r)
	}

	namespaced := h.servedScopes(t)
	for _, rule := range h.productRules(t) {
		for _, group := range rule.APIGroups {
			for _, res := range rule.Resources {
				if group == "*" || strings.Contains(res, "*") {
					continue
				}
				base, sub, _ := strings.Cut(res, "/")
				r := resource{group: group, resource: base, subresource: sub, verbs: slices.DeleteFunc(slices.Clone(rule.Verbs), func(v string) bool { return v == "*" })}
				if i, ok := byKey[resource{group: group, resource: base}.String()]; ok {
					r.namespaced = g.resources[i].namespaced
				} else if ns, ok := namespaced[resource{group: group, resource: base}.String()]; ok {
					r.namespaced = ns
				} else if ns, ok := notServed[resource{group: group, resource: base}.String()]; ok {
					r.namespaced = ns
				} else if ns, ok := namespaced[base]; ok {
					r.namespaced = ns
				} else {
					t.Fatalf("a role of the hub names resource %s of group %q, which the hub does not serve: say whether it is namespaced in notServed", res, group)
				}
				add(r)
				// Certificate requests are named by their requesters
				// (generateName): none is asked by name.
				if base == "certificatesigningrequests" {
					continue
				}
				for _, name := range rule.ResourceNames {
					if !slices.Contains(g.names[base], name) {
						g.names[base] = append(g.names[base], name)
					}
				}
			}
		}
	}
	for _, r := range g.resources {
		slices.SortFunc(r.verbs, compareVerbs)
	}
	slices.SortFunc(g.resources, func(a, b resource) int { return strings.Compare(a.String(), b.String()) })
	for k := range g.names {
		slices.Sort(g.names[k])
	}
	return g
}

// productRules returns the rules of every Role and ClusterRole on the hub
// but Kubernetes' own.
func (h *hub) productRules(t *testing.T) []rbacv1.PolicyRule {
	t.Helper()
	var rules []rbacv1.PolicyRule
	crs := &rbacv1.ClusterRoleList{}
	kit.Must(t, "list ClusterRoles", h.admin.List(h.ctx, crs))
	for _, cr := range crs.Items {
		if cr.Labels["kubernetes.io/bootstrapping"] == "" {
			rules = append(rules, cr.Rules...)
		}
	}
	roles := &rbacv1.RoleList{}
	kit.Must(t, "list Roles", h.admin.List(h.ctx, roles))
	for _, r := range roles.Items {
		if r.Labels["kubernetes.io/bootstrapping"] == "" {
			rules = append(rules, r.Rules...)
		}
	}
	return rules
}

// servedScopes returns, for every resource the hub serves, whether it is
// namespaced, keyed by <resource>.<group> and by <resource> alone.
func (h *hub) servedScopes(t *testing.T) map[string]bool {
	t.Helper()
	dc, err := discovery.NewDiscoveryClientForConfig(h.cluster.RESTConfig())
	kit.Must(t, "discovery client", err)
	lists, err := dc.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		t.Fatalf("discover the hub's resources: %v", err)
	}
	out := map[string]bool{}
	for _, list := range lists {
		gv, err := schemaGroup(list.GroupVersion)
		kit.Must(t, "parse "+list.GroupVersion, err)
		for _, r := range list.APIResources {
			out[resource{group: gv, resource: r.Name}.String()] = r.Namespaced
			out[r.Name] = r.Namespaced
		}
	}
	return out
}

// schemaGroup returns the group of groupVersion.
func schemaGroup(groupVersion string) (string, error) {
	gv, err := schema.ParseGroupVersion(groupVersion)
	return gv.Group, err
}

// compareVerbs orders verbs as verbOrder, then alphabetically.
func compareVerbs(a, b string) int {
	ia, ib := slices.Index(verbOrder, a), slices.Index(verbOrder, b)
	switch {
	case ia >= 0 && ib >= 0:
		return ia - ib
	case ia >= 0:
		return -1
	case ib >= 0:
		return 1
	}
	return strings.Compare(a, b)
}

// cell is one question: may the identity do verb on the resource in scope.
type cell struct {
	verb string
	res  resource
	// namespace is the namespace of a namespaced resource, "" for all of
	// them; name is the object's name, "" for any.
	namespace, name string
}

// scope names the cell's scope in the file: ns:<namespace>, ns:* (all
// namespaces), cluster (a cluster-scoped resource, any object),
// name:<name> (one cluster-scoped object) or ns:<namespace>/<name>
// (ns:*/<name> in all namespaces).
func (c cell) scope() string {
	ns := c.namespace
	if ns == metav1.NamespaceAll {
		ns = "*"
	}
	switch {
	case c.res.namespaced && c.name == "":
		return "ns:" + ns
	case c.res.namespaced:
		return "ns:" + ns + "/" + c.name
	case c.name == "":
		return "cluster"
	}
	return "name:" + c.name
}

// line is the cell in the file: verb, resource, scope.
func (c cell) line() string { return fmt.Sprintf("%-16s %s %s", c.verb, c.res, c.scope()) }

// wider returns the cells that, allowed, each allow this one: without its
// name, and, for a namespaced resource, in all namespaces.
func (c cell) wider() []cell {
	var out []cell
	if c.name != "" {
		w := c
		w.name = ""
		out = append(out, w)
	}
	if c.res.namespaced && c.namespace != metav1.NamespaceAll {
		w := c
		w.namespace = metav1.NamespaceAll
		out = append(out, w)
	}
	return out
}

// cells returns the cells of g in rounds, each cell after those wider than
// it: without namespace or name (a cluster-scoped resource, or all
// namespaces); of one namespace, or of one name in all namespaces or of a
// cluster-scoped resource; of one name in one namespace. A named cell asks
// a verb that names one object (not create, which names none but of a
// subresource, nor deletecollection).
func (g *grid) cells() (rounds [3][]cell) {
	for _, r := range g.resources {
		namespaces := []string{metav1.NamespaceAll}
		if r.namespaced {
			namespaces = g.namespaces
		}
		for _, ns := range namespaces {
			for _, v := range r.verbs {
				c := cell{verb: v, res: r, namespace: ns}
				rounds[len(c.wider())] = append(rounds[len(c.wider())], c)
				if v == "deletecollection" || (v == "create" && r.subresource == "") {
					continue
				}
				for _, name := range g.names[r.resource] {
					c.name = name
					rounds[len(c.wider())] = append(rounds[len(c.wider())], c)
				}
			}
		}
	}
	return rounds
}

// reviewer asks access reviews, at most workers at once however many
// identities ask.
type reviewer struct {
	cs    kubernetes.Interface
	slots chan struct{}
	// asked counts the access reviews asked.
	asked atomic.Int64
}

// workers is how many access reviews are in flight at once.
const workers = 48

// newReviewer returns a reviewer that asks the API server of h as the
// administrator, in protobuf and without a client-side rate limit.
func (h *hub) newReviewer(t *testing.T) *reviewer {
	t.Helper()
	cfg := rest.CopyConfig(h.cluster.RESTConfig())
	cfg.QPS, cfg.Burst = -1, 0
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf
	cs, err := kubernetes.NewForConfig(cfg)
	kit.Must(t, "clientset", err)
	return &reviewer{cs: cs, slots: make(chan struct{}, workers)}
}

// allowed returns the lines of the cells of g that user is allowed, in the
// file's order, and whether it is allowed every cell. A cell is asked, and
// listed, only when every cell wider than it (cell.wider) is denied: the
// file lists a right of one namespace only where it does not hold in all
// of them, and a right on one object only where it does not hold on all
// objects of the namespace, nor on objects of that name in every namespace.
func (rv *reviewer) allowed(ctx context.Context, g *grid, user authenticationv1.UserInfo) (lines []string, all bool, err error) {
	var allowed []cell
	denied := map[string]bool{} // the lines of the cells denied
	for round, cells := range g.cells() {
		cells = slices.DeleteFunc(cells, func(c cell) bool {
			return slices.ContainsFunc(c.wider(), func(w cell) bool { return !denied[w.line()] })
		})
		ok, err := rv.review(ctx, user, cells)
		if err != nil {
			return nil, false, err
		}
		for i, c := range cells {
			if ok[i] {
				allowed = append(allowed, c)
			} else {
				denied[c.line()] = true
			}
		}
		if round == 0 && len(denied) == 0 {
			return nil, true, nil
		}
	}
	slices.SortStableFunc(allowed, func(a, b cell) int {
		if c := strings.Compare(a.res.String(), b.res.String()); c != 0 {
			return c
		}
		if c := strings.Compare(scopeKey(g, a), scopeKey(g, b)); c != 0 {
			return c
		}
		return compareVerbs(a.verb, b.verb)
	})
	for _, c := range allowed {
		lines = append(lines, c.line())
	}
	return lines, false, nil
}

// scopeKey orders scopes: by the namespaces' order in g, all namespaces
// last, any object before named ones.
func scopeKey(g *grid, c cell) string {
	i := slices.Index(g.namespaces, c.namespace)
	return fmt.Sprintf("%02d/%s", i, c.name)
}

// review asks the API server whether user may do each of cells and
// returns the answers in order.
func (rv *reviewer) review(ctx context.Context, user authenticationv1.UserInfo, cells []cell) ([]bool, error) {
	out := make([]bool, len(cells))
	errs := make([]error, len(cells))
	var wg sync.WaitGroup
	for i := range cells {
		rv.slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-rv.slots }()
			rv.asked.Add(1)
			out[i], errs[i] = rv.ask(ctx, user, cells[i])
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("access review of %s for %q: %w", user.Username, cells[i].line(), err)
		}
	}
	return out, nil
}

// ask asks one access review.
func (rv *reviewer) ask(ctx context.Context, user authenticationv1.UserInfo, c cell) (bool, error) {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra(user.Extra),
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: c.verb, Group: c.res.group, Resource: c.res.resource, Subresource: c.res.subresource,
			Namespace: c.namespace, Name: c.name,
		},
	}}
	res, err := rv.cs.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	if res.Status.EvaluationError != "" {
		return false, fmt.Errorf("evaluation error: %s", res.Status.EvaluationError)
	}
	return res.Status.Allowed, nil
}

// extra converts the extra fields of an authenticated user into those of
// an access review.
func extra(in map[string]authenticationv1.ExtraValue) map[string]authorizationv1.ExtraValue {
	if in == nil {
		return nil
	}
	out := make(map[string]authorizationv1.ExtraValue, len(in))
	for k, v := range in {
		out[k] = authorizationv1.ExtraValue(v)
	}
	return out
}
