package accept

import (
	"context"
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// ReasonApproved is the Approved condition reason of the requests accept approves.
const ReasonApproved = "ApprovedByKubectlOCM"

// Run accepts every cluster in turn.
func (o *Options) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(o.getter)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("create client for %s: %w", cfg.Host, err)
	}
	for _, name := range o.Clusters {
		if err := o.accept(ctx, c, cs, name); err != nil {
			return err
		}
	}
	return nil
}

// accept approves the cluster's requests, sets hubAcceptsClient and, with
// --wait, waits until the cluster has joined.
func (o *Options) accept(ctx context.Context, c client.Client, cs kubernetes.Interface, name string) error {
	approved, err := o.approveRequests(ctx, c, cs, name)
	if err != nil {
		return err
	}
	if approved == 0 && o.Wait {
		what := fmt.Sprintf("a certificate request of managed cluster %s (run `kubectl ocm join` on it)", name)
		err := cli.Wait(ctx, o.ErrOut, o.Timeout, what, func(ctx context.Context) (bool, string, error) {
			n, err := o.approveRequests(ctx, c, cs, name)
			return n > 0, "no pending request from a trusted requester yet", err
		})
		if err != nil {
			return err
		}
	}
	if err := o.setAccepted(ctx, c, name); err != nil {
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
		return mc.IsJoined(), joinState(mc), nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "Your managed cluster %s has joined the Hub successfully.\n", name)
	return nil
}

// approveRequests approves the cluster's pending requests from trusted
// requesters, reports the others, and returns how many it approved.
func (o *Options) approveRequests(ctx context.Context, c client.Client, cs kubernetes.Interface, name string) (int, error) {
	list := &certificatesv1.CertificateSigningRequestList{}
	if err := c.List(ctx, list, client.MatchingLabels{clusterv1.ClusterNameLabelKey: name}); err != nil {
		return 0, fmt.Errorf("list certificate requests of cluster %s: %w", name, err)
	}
	n := 0
	for i := range list.Items {
		csr := &list.Items[i]
		if decided(csr) {
			continue
		}
		if !o.trusted(csr.Spec.Username) {
			fmt.Fprintf(o.ErrOut, "CSR %s of cluster %s comes from unexpected requester %s: skipped; rerun with --requesters %s (or --skip-approve-check) to approve it\n",
				csr.Name, name, csr.Spec.Username, csr.Spec.Username)
			continue
		}
		approved := csr.DeepCopy()
		approved.Status.Conditions = append(approved.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
			Reason: ReasonApproved, Message: "Approved by the hub administrator with kubectl ocm accept",
		})
		if _, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, approved, metav1.UpdateOptions{}); err != nil {
			return n, fmt.Errorf("approve CSR %s: %w", csr.Name, err)
		}
		fmt.Fprintf(o.Out, "CSR %s approved\n", csr.Name)
		n++
	}
	return n, nil
}

// setAccepted sets spec.hubAcceptsClient, waiting for the ManagedCluster
// with --wait.
func (o *Options) setAccepted(ctx context.Context, c client.Client, name string) error {
	mc := &clusterv1.ManagedCluster{}
	get := func(ctx context.Context) error { return c.Get(ctx, client.ObjectKey{Name: name}, mc) }
	err := get(ctx)
	if apierrors.IsNotFound(err) && o.Wait {
		err = cli.Wait(ctx, o.ErrOut, o.Timeout, "ManagedCluster "+name+" to be created by its agent", func(ctx context.Context) (bool, string, error) {
			err := get(ctx)
			return err == nil, "not registered yet", client.IgnoreNotFound(err)
		})
	}
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("managed cluster %s is not registered on this hub: run `kubectl ocm join ... --cluster-name %s` on it first, or pass --wait", name, name)
	}
	if err != nil {
		return fmt.Errorf("get ManagedCluster %s: %w", name, err)
	}
	if !mc.Spec.HubAcceptsClient {
		patch := client.RawPatch("application/merge-patch+json", []byte(`{"spec":{"hubAcceptsClient":true}}`))
		if err := c.Patch(ctx, mc, patch); err != nil {
			return fmt.Errorf("set hubAcceptsClient for managed cluster %s: %w", name, err)
		}
	}
	fmt.Fprintf(o.Out, "set hubAcceptsClient to true for managed cluster %s\n", name)
	return nil
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

// decided reports whether csr was approved or denied already.
func decided(csr *certificatesv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved || c.Type == certificatesv1.CertificateDenied {
			return true
		}
	}
	return false
}
