package accept

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// ReasonApproved is the Approved condition reason of the requests accept approves.
const ReasonApproved = "ApprovedByKubectlOCM"

// hubController is the hub controller's Deployment: it accepts clusters and
// serves the admission webhooks the agents' requests pass, so the waits name
// what stops it.
var hubController = types.NamespacedName{Namespace: config.HubNamespace, Name: config.HubControllerDeployment}

// agentHint says where to look when a cluster's agent does not act: it runs
// on the managed cluster, which the hub does not see.
const agentHint = "the agent runs on the managed cluster, out of the hub's sight: on that cluster, " +
	"`kubectl ocm get klusterlet` shows its state and `kubectl -n open-cluster-management-agent get pods` its Pods"

// Run accepts every cluster in turn.
func (o *Options) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	in := cli.NewInspector(c, cfg, cli.HubImageFix)
	if o.acceptedBy, err = cli.WhoAmI(ctx, c); err != nil {
		fmt.Fprintf(o.ErrOut, "Warning: cannot ask %s who you are (SelfSubjectReview): %v; the clusters accepted do not record who accepted them\n", cfg.Host, err)
	}
	c = cli.DryRunWriter(c, o.DryRun)
	for _, name := range o.Clusters {
		if err := o.accept(ctx, c, in, name); err != nil {
			return err
		}
	}
	var missing []string
	for _, name := range o.CSRs {
		if !o.approved[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("--csr %s: no pending request of cluster %s by that name was approved (see above for the ones skipped, and `kubectl get csr -l %s=NAME` for those there are)",
			strings.Join(missing, ","), strings.Join(o.Clusters, ", "), clusterv1.ClusterNameLabelKey)
	}
	return nil
}

// accept approves the cluster's requests, sets hubAcceptsClient and, with
// --wait, waits until the cluster has joined. While it waits, in names what
// stops the hub controller; when a wait fails, the error names the last
// Pod-level cause seen, or where to look at the agent.
func (o *Options) accept(ctx context.Context, c client.Client, in *deploystatus.Inspector, name string) error {
	skipped := map[string]bool{}
	if o.hasAgent(ctx, c, name) && !o.Rejoin {
		// A new registration of an accepted cluster whose agent joined
		// replaces that agent: it takes --rejoin, whoever asks (the hub's
		// auto-approval never does it). A cluster accepted before any
		// agent joined, as OCM's pre-created ManagedClusters are, still
		// has its first join ahead.
		why := fmt.Sprintf("managed cluster %s is accepted already and its agent joined, so approving another registration of it would replace that agent; if its agent was reinstalled, rerun with --rejoin", name)
		if _, err := o.approveRequests(ctx, c, name, skipped, why); err != nil {
			return err
		}
		fmt.Fprintf(o.ErrOut, "Managed cluster %s is already accepted: no certificate request to wait for (--rejoin approves a new registration of it).\n", name)
	} else if n, by, err := o.approveOrWait(ctx, c, in, name, skipped); err != nil {
		return err
	} else if by != "" {
		// Accepted while accept waited, by someone else: the hub's
		// auto-approval of the cluster's identity, most often. Nothing is
		// left to approve, and the wait for its join below ends at once
		// when it joined.
		fmt.Fprintf(o.ErrOut, "Managed cluster %s was accepted %s while this command waited: no certificate request of it was left to approve.\n", name, by)
	} else if n == 0 && len(o.CSRs) > 0 {
		// --csr names the agent's request: without it approved, the
		// cluster is not accepted either.
		return fmt.Errorf("--csr %s: no pending request of cluster %s by that name could be approved (see above for those skipped); cluster %s was not accepted",
			strings.Join(o.CSRs, ","), name, name)
	}
	if err := o.setAccepted(ctx, c, in, name); err != nil {
		return err
	}
	if !o.Wait {
		return nil
	}
	err := cli.Wait(ctx, o.ErrOut, o.Timeout, "managed cluster "+name+" to join", func(ctx context.Context) (bool, string, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return false, "", err
		}
		if mc.IsJoined() {
			return true, joinState(mc), nil
		}
		if hint, err := unsignedRequest(ctx, c, name); err != nil || hint != "" {
			return false, hint, err
		}
		return false, cli.DescribeNotReady(ctx, in, joinState(mc), hubController), nil
	})
	if err != nil {
		return explain(in, err)
	}
	fmt.Fprintf(o.Out, "Your managed cluster %s has joined the Hub successfully.\n", name)
	return nil
}

// hasAgent says whether the ManagedCluster name exists with
// spec.hubAcceptsClient set and an agent joined it: its agent reported the
// ManagedClusterJoined condition.
func (o *Options) hasAgent(ctx context.Context, c client.Client, name string) bool {
	mc := &clusterv1.ManagedCluster{}
	return c.Get(ctx, client.ObjectKey{Name: name}, mc) == nil && mc.Spec.HubAcceptsClient &&
		meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined) != nil
}

// unsignedRequest returns csr.UnsignedHint for a request of the cluster that
// was approved longer than csr.UnsignedGrace ago and has no certificate:
// the hub signs none, and waiting longer will not help.
func unsignedRequest(ctx context.Context, c client.Client, name string) (string, error) {
	list := &certificatesv1.CertificateSigningRequestList{}
	if err := c.List(ctx, list, client.MatchingLabels{clusterv1.ClusterNameLabelKey: name}); err != nil {
		return "", fmt.Errorf("list certificate requests of cluster %s: %w", name, err)
	}
	now := time.Now()
	for i := range list.Items {
		if csr.Unsigned(&list.Items[i], now) > csr.UnsignedGrace {
			return csr.UnsignedHint(list.Items[i].Name), nil
		}
	}
	return "", nil
}

// approveOrWait approves the cluster's requests and, with --wait, waits for
// one when none is pending yet, and returns how many it approved. The wait
// also ends when the cluster's first join is accepted by someone else
// meanwhile (the hub's auto-approval, another admin), with acceptedBy saying
// by whom (acceptedElsewhere); never with --rejoin, whose new registration
// is this command's to approve. A request that arrives meanwhile from a
// requester the hub auto-approves is left to the hub for hubTurn. An
// ambiguous set of requests ends the wait.
func (o *Options) approveOrWait(ctx context.Context, c client.Client, in *deploystatus.Inspector, name string, skipped map[string]bool) (approved int, acceptedBy string, err error) {
	approved, err = o.approveRequests(ctx, c, name, skipped, "")
	if err != nil || approved > 0 || !o.Wait {
		return approved, "", err
	}
	// The new registration of a cluster whose agent joined before
	// (--rejoin) is this command's to approve, whoever accepted the cluster:
	// only a first join can have been accepted by someone else meanwhile.
	watch := !o.Rejoin
	if watch {
		// A first join the hub auto-approves is the hub's to approve.
		o.hub = readHubApproval(ctx, c)
		defer func() { o.hub = nil }()
	}
	what := fmt.Sprintf("a certificate request of managed cluster %s (its agent files one once `kubectl ocm join` runs on it or the hub imports it)", name)
	err = cli.Wait(ctx, o.ErrOut, o.Timeout, what, func(ctx context.Context) (bool, string, error) {
		n, err := o.approveRequests(ctx, c, name, skipped, "")
		approved += n
		if errors.As(err, new(ambiguousError)) {
			return false, "", cli.Stop(err)
		}
		if err != nil || n > 0 || !watch {
			return n > 0, "", err
		}
		by, err := acceptedElsewhere(ctx, c, name)
		if err != nil || by != "" {
			acceptedBy = by
			return by != "", "", err
		}
		state := "no pending request that may be approved yet"
		if len(skipped) > 0 {
			state = fmt.Sprintf("%s; %d skipped, see above", state, len(skipped))
		}
		return false, state, nil
	})
	if err != nil && !errors.As(err, new(ambiguousError)) {
		return approved, "", explain(in, err)
	}
	return approved, acceptedBy, err
}

// acceptedElsewhere says by whom the cluster name was accepted, when it was
// while accept waited for a request to approve: the ManagedCluster accepts
// its agent (spec.hubAcceptsClient) and the agent joined with a
// certificate someone else approved. "" when it is not.
func acceptedElsewhere(ctx context.Context, c client.Client, name string) (string, error) {
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	switch {
	case !mc.Spec.HubAcceptsClient || !mc.IsJoined():
		return "", nil
	case mc.Annotations[clusterv1.AutomaticallyAcceptedOnAnnotationKey] != "":
		return "by the hub's auto-approval of its identity", nil
	case mc.Annotations[AcceptedByAnnotation] != "":
		return "by " + mc.Annotations[AcceptedByAnnotation], nil
	}
	return "already", nil
}

// setAccepted sets spec.hubAcceptsClient, waiting for the ManagedCluster
// with --wait while in names what stops the hub controller.
func (o *Options) setAccepted(ctx context.Context, c client.Client, in *deploystatus.Inspector, name string) error {
	mc := &clusterv1.ManagedCluster{}
	get := func(ctx context.Context) error { return c.Get(ctx, client.ObjectKey{Name: name}, mc) }
	err := get(ctx)
	if apierrors.IsNotFound(err) && o.Wait {
		err = cli.Wait(ctx, o.ErrOut, o.Timeout, "ManagedCluster "+name+" to be created by its agent", func(ctx context.Context) (bool, string, error) {
			err := get(ctx)
			return err == nil, cli.DescribeNotReady(ctx, in, "not registered yet", hubController), client.IgnoreNotFound(err)
		})
		if err != nil && !apierrors.IsNotFound(err) {
			return explain(in, err)
		}
	}
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("managed cluster %s is not registered on this hub: run `kubectl ocm join ... --cluster-name %s` on it or `kubectl ocm import %s` on the hub first, or pass --wait", name, name, name)
	}
	if err != nil {
		return fmt.Errorf("get ManagedCluster %s: %w", name, err)
	}
	base := mc.DeepCopy()
	accept := !mc.Spec.HubAcceptsClient
	if accept {
		mc.Spec.HubAcceptsClient = true
		o.recordAcceptance(mc, time.Now())
	}
	changed := accept
	key, recordKey := o.agentKey(name)
	if recordKey && csr.SetAgentKey(mc, key) {
		changed = true
	}
	if changed {
		if err := c.Patch(ctx, mc, client.MergeFrom(base)); err != nil {
			return fmt.Errorf("set hubAcceptsClient and the key of the agent for managed cluster %s: %w", name, err)
		}
	}
	switch {
	case !recordKey:
	case key != "":
		fmt.Fprintf(o.Out, "recorded key %s as the key of the agent of managed cluster %s%s\n", key, name, cli.DryRunSuffix(o.DryRun))
	default:
		fmt.Fprintf(o.ErrOut, "Warning: the requests approved for managed cluster %s hold different keys: no key of its agent is on record, "+
			"so any new registration of it takes `kubectl ocm accept --rejoin`\n", name)
	}
	fmt.Fprintf(o.Out, "set hubAcceptsClient to true for managed cluster %s%s\n", name, cli.DryRunSuffix(o.DryRun))
	return nil
}

// agentKey returns the key to record for the agent of cluster name after
// this run approved its requests, and whether there is one to record: the
// key of the requests approved, or "" (no record) when they hold different
// keys (--csr named several).
func (o *Options) agentKey(name string) (string, bool) {
	keys := o.approvedKeys[name]
	switch len(keys) {
	case 0:
		return "", false
	case 1:
		return keys[0], true
	}
	return "", true
}

// Annotations with which accept records, on the ManagedCluster, who
// accepted it and when: the hub's audit log holds the same for as long as
// it keeps its records. OCM's controllers and agents ignore them.
const (
	// AcceptedByAnnotation is the user who accepted the cluster, as the
	// hub authenticated them (SelfSubjectReview).
	AcceptedByAnnotation = "kubectl-ocm.io/accepted-by"
	// AcceptedAtAnnotation is when, in RFC 3339 UTC.
	AcceptedAtAnnotation = "kubectl-ocm.io/accepted-at"
)

// recordAcceptance sets mc's acceptance annotations: by o.acceptedBy,
// unless unknown, at now.
func (o *Options) recordAcceptance(mc *clusterv1.ManagedCluster, now time.Time) {
	if mc.Annotations == nil {
		mc.Annotations = map[string]string{}
	}
	if o.acceptedBy != "" {
		mc.Annotations[AcceptedByAnnotation] = o.acceptedBy
	}
	mc.Annotations[AcceptedAtAnnotation] = now.UTC().Format(time.RFC3339)
}

// explain adds to err, a failed wait, the last Pod-level cause in saw of the
// hub controller, and where to look at the agent.
func explain(in *deploystatus.Inspector, err error) error {
	return in.Explain(fmt.Errorf("%w; %s", err, agentHint))
}

// joinState describes how far a cluster is in joining.
func joinState(mc *clusterv1.ManagedCluster) string {
	for _, t := range []string{clusterv1.ManagedClusterConditionJoined, clusterv1.ManagedClusterConditionHubAccepted} {
		if c := meta.FindStatusCondition(mc.Status.Conditions, t); c != nil {
			return fmt.Sprintf("%s=%s (%s)", c.Type, c.Status, c.Reason)
		}
	}
	return "waiting for the hub to accept it"
}
