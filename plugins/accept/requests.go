package accept

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// approveRequests approves the cluster's pending requests that the approval
// policy allows, names each one it skips with the reason (once per request,
// remembered in skipped), and returns how many it approved. With refuse set,
// it approves none and skips every pending request for that reason. With
// --csr, only the requests named are considered. It refuses to guess, with
// an ambiguousError naming each request, when the approvable requests come
// from more than one requester or key and --csr names none of them. While
// accept --wait waits for a request (o.hub), one the hub auto-approves is
// left to the hub for its turn (hubTurn).
func (o *Options) approveRequests(ctx context.Context, c client.Client, name string, skipped map[string]bool, refuse string) (int, error) {
	list := &certificatesv1.CertificateSigningRequestList{}
	if err := c.List(ctx, list, client.MatchingLabels{clusterv1.ClusterNameLabelKey: name}); err != nil {
		return 0, fmt.Errorf("list certificate requests of cluster %s: %w", name, err)
	}
	recorded, err := recordedKey(ctx, c, name)
	if err != nil {
		return 0, err
	}
	var approvable []candidate
	for i := range list.Items {
		obj := &list.Items[i]
		if csr.Decided(obj) || skipped[obj.Name] || (len(o.CSRs) > 0 && !slices.Contains(o.CSRs, obj.Name)) {
			continue
		}
		o.showRecordedKey(name, recorded)
		req, ok, why := o.decide(ctx, c, obj)
		if ok && refuse != "" {
			ok, why = false, refuse
		}
		if !ok {
			fmt.Fprintf(o.ErrOut, "CSR %s of cluster %s skipped: %s%s\n", obj.Name, name, why, compareKey(req, recorded))
			skipped[obj.Name] = true
			continue
		}
		if leave, say := o.hub.leave(obj.Name, req.Requester, time.Now()); leave {
			if say != "" {
				fmt.Fprintln(o.ErrOut, say)
			}
			continue
		}
		approvable = append(approvable, candidate{obj: obj, req: req, why: why, recorded: recorded})
	}
	if len(o.CSRs) == 0 && !oneAgent(approvable) {
		return 0, ambiguousError{cluster: name, requests: approvable}
	}
	n := 0
	for _, cand := range approvable {
		if err := csr.ApproveRequest(ctx, c, cand.obj, ReasonApproved, "Approved by the hub administrator with kubectl ocm accept: "+cand.why); err != nil {
			return n, err
		}
		fmt.Fprintf(o.Out, "CSR %s approved%s (requester %s, %s)\n", cand.obj.Name, cli.DryRunSuffix(o.DryRun), cand.req.Requester, describeKey(cand.req, recorded))
		if o.approved == nil {
			o.approved, o.approvedKeys = map[string]bool{}, map[string][]string{}
		}
		o.approved[cand.obj.Name] = true
		if key := cand.req.Key(); !slices.Contains(o.approvedKeys[name], key) {
			o.approvedKeys[name] = append(o.approvedKeys[name], key)
		}
		n++
	}
	return n, nil
}

// recordedKey returns the key of the agent of cluster name on record
// (csr.AgentKey), "" when none or when the cluster is not registered.
func recordedKey(ctx context.Context, c client.Reader, name string) (string, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return "", nil
		}
		return "", fmt.Errorf("get ManagedCluster %s: %w", name, err)
	}
	return csr.AgentKey(mc), nil
}

// showRecordedKey says once per cluster which key of its agent the hub has
// on record, for the administrator to compare with the keys of the
// requests listed after it and with the key the agent holds.
func (o *Options) showRecordedKey(name, recorded string) {
	if recorded == "" || o.shownKeys[name] {
		return
	}
	if o.shownKeys == nil {
		o.shownKeys = map[string]bool{}
	}
	o.shownKeys[name] = true
	fmt.Fprintf(o.ErrOut, "Managed cluster %s: the key of its agent on record is %s; a request with another key is another agent's "+
		"(the agent on the managed cluster names its key in its pending request's message: `kubectl ocm get klusterlet` there)\n", name, recorded)
}

// compareKey tells, for a skipped request, its key and whether it is the
// key on record; "" when no key is on record or the request holds none.
func compareKey(req csr.Request, recorded string) string {
	key := req.Key()
	switch {
	case recorded == "" || key == "":
		return ""
	case key == recorded:
		return fmt.Sprintf(" (its key %s is the key of the agent on record)", key)
	}
	return fmt.Sprintf(" (its key %s is not the key of the agent on record, %s)", key, recorded)
}

// candidate is a pending request the policy allows.
type candidate struct {
	obj *certificatesv1.CertificateSigningRequest
	req csr.Request
	why string
	// recorded is the key of the cluster's agent on record, "" when none.
	recorded string
}

// oneAgent reports whether the requests all come from one requester with
// one key: one agent, which may have filed its request more than once.
func oneAgent(cands []candidate) bool {
	for _, cand := range cands {
		if cand.req.Requester != cands[0].req.Requester || csr.KeyFingerprint(cand.req.PublicKey) != csr.KeyFingerprint(cands[0].req.PublicKey) {
			return false
		}
	}
	return true
}

// describeKey names the agent and the key a request asks a credential for,
// and whether that key is recorded, the key of the cluster's agent on
// record ("" when none).
func describeKey(req csr.Request, recorded string) string {
	agent := "no agent id"
	if _, id, ok := identity.ParseAgentUserName(req.CommonName); ok {
		agent = "agent id " + id
	}
	s := agent + ", key " + csr.KeyFingerprint(req.PublicKey)
	switch {
	case recorded == "":
	case req.Key() == recorded:
		s += ", the key of the agent on record"
	default:
		s += ", not the key of the agent on record " + recorded
	}
	return s
}

// ambiguousError is accept's refusal to guess which of several approvable
// requests of a cluster is its agent's.
type ambiguousError struct {
	cluster  string
	requests []candidate
}

// Error lists the requests and says how to approve one.
func (e ambiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cluster %s has %d pending requests from different requesters or keys, and accept will not guess which one is its agent's:", e.cluster, len(e.requests))
	for _, cand := range e.requests {
		fmt.Fprintf(&b, "\n  CSR %s: requester %s, %s, filed %s", cand.obj.Name, cand.req.Requester, describeKey(cand.req, cand.recorded), cand.obj.CreationTimestamp.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(&b, "\ncompare each key with the one the agent holds, then approve the agent's: kubectl ocm accept --clusters %s --csr NAME", e.cluster)
	return b.String()
}

// decide applies the approval policy of a first join to obj and refuses a
// request filed with a bootstrap token revoked since.
func (o *Options) decide(ctx context.Context, c client.Reader, obj *certificatesv1.CertificateSigningRequest) (csr.Request, bool, string) {
	req, err := csr.ParseRequest(obj)
	if err != nil {
		return req, false, err.Error()
	}
	ok, why := csr.DecideFirstJoin(req, o.trust())
	if !ok {
		return req, false, why
	}
	revoked, err := csr.Revoked(ctx, c, req)
	if err != nil {
		return req, false, err.Error()
	}
	if revoked != "" {
		return req, false, revoked
	}
	return req, true, why
}
