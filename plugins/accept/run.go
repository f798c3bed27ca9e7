package accept

import (
	"context"
	"fmt"
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
	c, cfg, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	in := cli.NewInspector(c, cfg, cli.HubImageFix)
	c = cli.DryRunWriter(c, o.DryRun)
	for _, name := range o.Clusters {
		if err := o.accept(ctx, c, in, name); err != nil {
			return err
		}
	}
	return nil
}

// accept approves the cluster's requests, sets hubAcceptsClient and, with
// --wait, waits until the cluster has joined. While it waits, in names what
// stops the hub controller; when a wait fails, the error names the last
// Pod-level cause seen, or where to look at the agent.
func (o *Options) accept(ctx context.Context, c client.Client, in *deploystatus.Inspector, name string) error {
	skipped := map[string]bool{}
	approved, err := o.approveRequests(ctx, c, name, skipped)
	if err != nil {
		return err
	}
	if approved == 0 && o.Wait && o.alreadyAccepted(ctx, c, name) {
		// Auto-approval, or an earlier accept, already let the cluster in:
		// no request will come, so wait only for it to have joined.
		fmt.Fprintf(o.ErrOut, "Managed cluster %s is already accepted: no certificate request to wait for.\n", name)
	} else if approved == 0 && o.Wait {
		what := fmt.Sprintf("a certificate request of managed cluster %s (run `kubectl ocm join` on it)", name)
		err := cli.Wait(ctx, o.ErrOut, o.Timeout, what, func(ctx context.Context) (bool, string, error) {
			n, err := o.approveRequests(ctx, c, name, skipped)
			state := "no pending request that may be approved yet"
			if len(skipped) > 0 {
				state = fmt.Sprintf("%s; %d skipped, see above", state, len(skipped))
			}
			return n > 0, state, err
		})
		if err != nil {
			return explain(in, err)
		}
	}
	if err := o.setAccepted(ctx, c, in, name); err != nil {
		return err
	}
	if !o.Wait {
		return nil
	}
	err = cli.Wait(ctx, o.ErrOut, o.Timeout, "managed cluster "+name+" to join", func(ctx context.Context) (bool, string, error) {
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

// alreadyAccepted says whether the ManagedCluster name exists with
// spec.hubAcceptsClient set.
func (o *Options) alreadyAccepted(ctx context.Context, c client.Client, name string) bool {
	mc := &clusterv1.ManagedCluster{}
	return c.Get(ctx, client.ObjectKey{Name: name}, mc) == nil && mc.Spec.HubAcceptsClient
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

// approveRequests approves the cluster's pending requests that the approval
// policy allows, names each one it skips with the reason (once per request,
// remembered in skipped), and returns how many it approved.
func (o *Options) approveRequests(ctx context.Context, c client.Client, name string, skipped map[string]bool) (int, error) {
	list := &certificatesv1.CertificateSigningRequestList{}
	if err := c.List(ctx, list, client.MatchingLabels{clusterv1.ClusterNameLabelKey: name}); err != nil {
		return 0, fmt.Errorf("list certificate requests of cluster %s: %w", name, err)
	}
	n := 0
	for i := range list.Items {
		obj := &list.Items[i]
		if csr.Decided(obj) || skipped[obj.Name] {
			continue
		}
		ok, why := o.decide(obj)
		if !ok {
			fmt.Fprintf(o.ErrOut, "CSR %s of cluster %s skipped: %s\n", obj.Name, name, why)
			skipped[obj.Name] = true
			continue
		}
		if err := csr.ApproveRequest(ctx, c, obj, ReasonApproved, "Approved by the hub administrator with kubectl ocm accept: "+why); err != nil {
			return n, err
		}
		fmt.Fprintf(o.Out, "CSR %s approved%s\n", obj.Name, cli.DryRunSuffix(o.DryRun))
		n++
	}
	return n, nil
}

// decide applies the approval policy of a first join to obj.
func (o *Options) decide(obj *certificatesv1.CertificateSigningRequest) (bool, string) {
	req, err := csr.ParseRequest(obj)
	if err != nil {
		return false, err.Error()
	}
	return csr.DecideFirstJoin(req, o.trust())
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
		return fmt.Errorf("managed cluster %s is not registered on this hub: run `kubectl ocm join ... --cluster-name %s` on it first, or pass --wait", name, name)
	}
	if err != nil {
		return fmt.Errorf("get ManagedCluster %s: %w", name, err)
	}
	if !mc.Spec.HubAcceptsClient {
		base := mc.DeepCopy()
		mc.Spec.HubAcceptsClient = true
		if err := c.Patch(ctx, mc, client.MergeFrom(base)); err != nil {
			return fmt.Errorf("set hubAcceptsClient for managed cluster %s: %w", name, err)
		}
	}
	fmt.Fprintf(o.Out, "set hubAcceptsClient to true for managed cluster %s%s\n", name, cli.DryRunSuffix(o.DryRun))
	return nil
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
