package addon

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/registration"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
)

// addonCSRs returns the certificate signing requests of addon on the hub,
// by cluster, newest first. A user who may not list them gets none, and the
// table says the request is unknown.
func (h hub) addonCSRs(ctx context.Context, addon string) (map[string][]certificatesv1.CertificateSigningRequest, error) {
	list := &certificatesv1.CertificateSigningRequestList{}
	if err := h.List(ctx, list, client.MatchingLabels{addonv1alpha1.AddonLabelKey: addon}, client.HasLabels{clusterv1.ClusterNameLabelKey}); err != nil {
		return nil, fmt.Errorf("list the CertificateSigningRequests of add-on %s on %s: %w", addon, h.host, err)
	}
	out := map[string][]certificatesv1.CertificateSigningRequest{}
	for _, csr := range list.Items {
		c := csr.Labels[clusterv1.ClusterNameLabelKey]
		out[c] = append(out[c], csr)
	}
	for _, csrs := range out {
		slices.SortFunc(csrs, func(a, b certificatesv1.CertificateSigningRequest) int {
			return b.CreationTimestamp.Compare(a.CreationTimestamp.Time)
		})
	}
	return out, nil
}

// RegistrationTable renders the registration state of one add-on on each
// cluster as a kubectl table: CLUSTER, DRIVER (status.kubeClientDriver the
// agent reports, "-" without a kube-apiserver-client registration),
// SECRET (whether the agent reports the hub credential Secret written),
// EXPIRES (of the certificate or token, from the agent's condition),
// REFRESH (when the agent refreshes a token), LAST CSR (the newest
// certificate request of the add-on on the cluster with its state, and
// why when it is pending or denied); MESSAGE at priority 1. csrs holds the
// requests by cluster, newest first; nil means they could not be read.
func RegistrationTable(mcas []addonv1alpha1.ManagedClusterAddOn, csrs map[string][]certificatesv1.CertificateSigningRequest, now time.Time) *metav1.Table {
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Cluster", Type: "string"}, {Name: "Driver", Type: "string"}, {Name: "Secret", Type: "string"},
		{Name: "Expires", Type: "string"}, {Name: "Refresh", Type: "string"}, {Name: "Last CSR", Type: "string"},
		{Name: "Message", Type: "string", Priority: 1},
	}}
	for i := range mcas {
		mca := &mcas[i]
		c := credentialCondition(mca)
		secret, message := "no", ""
		if c != nil {
			message = c.Message
			if c.Status == metav1.ConditionTrue {
				secret = "yes"
			}
		}
		driver := mca.Status.KubeClientDriver
		if registration.KubeClient(mca.Status.Registrations) < 0 {
			driver, secret = "-", "-"
		} else if driver == "" {
			driver = "(not reported)"
		}
		lastCSR := "unknown"
		if csrs != nil {
			lastCSR = csrState(csrs[mca.Namespace], now)
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{
			mca.Namespace, driver, secret, messageTime(c, expiresPattern, now), messageTime(c, refreshPattern, now), lastCSR, message,
		}})
	}
	return table
}

// credentialCondition is the condition the agent reports its credential
// on: TokenRefreshed for the token driver, ClusterCertificateRotated
// otherwise; nil when absent.
func credentialCondition(mca *addonv1alpha1.ManagedClusterAddOn) *metav1.Condition {
	typ := addonv1alpha1.ManagedClusterAddOnCertificateRotated
	if mca.Status.KubeClientDriver == addonv1alpha1.KubeClientDriverToken {
		typ = addonv1alpha1.ManagedClusterAddOnTokenRefreshed
	}
	return findCondition(mca.Status.Conditions, typ)
}

// The times the agent writes in its credential conditions: "valid until
// <RFC 3339>" or "expires at <RFC 3339>", and "refreshed after <RFC 3339>".
var (
	expiresPattern = regexp.MustCompile(`(?:valid until|expires at) (\S+?Z)\b`)
	refreshPattern = regexp.MustCompile(`refreshed after (\S+?Z)\b`)
)

// messageTime reads the time pattern matches in c's message, shown as the
// time and how far from now it is; "" when there is none.
func messageTime(c *metav1.Condition, pattern *regexp.Regexp, now time.Time) string {
	if c == nil || c.Status != metav1.ConditionTrue {
		return ""
	}
	m := pattern.FindStringSubmatch(c.Message)
	if m == nil {
		return ""
	}
	at, err := time.Parse(time.RFC3339, m[1])
	if err != nil {
		return ""
	}
	if at.Before(now) {
		return m[1] + " (" + duration.HumanDuration(now.Sub(at)) + " ago)"
	}
	return m[1] + " (in " + duration.HumanDuration(at.Sub(now)) + ")"
}

// csrState describes the newest of csrs: its name and age, and its state:
// Issued, Approved (not issued yet), Denied or Failed with the reason and
// message, or Pending (with why, when a condition says); "" when there is
// none.
func csrState(csrs []certificatesv1.CertificateSigningRequest, now time.Time) string {
	if len(csrs) == 0 {
		return ""
	}
	csr := csrs[0]
	state := "Pending"
	var why []string
	switch st := certs.StateOf(&csr); {
	case st.Refusal != nil:
		state = string(st.Refusal.Type)
		why = append(why, strings.TrimSpace(st.Refusal.Reason+" "+st.Refusal.Message))
	case st.Approved && len(csr.Status.Certificate) > 0:
		state = "Issued"
	case st.Approved:
		state = "Approved"
	}
	out := fmt.Sprintf("%s %s (%s old)", csr.Name, state, duration.HumanDuration(now.Sub(csr.CreationTimestamp.Time)))
	if state == "Pending" {
		why = append(why, "waiting for the hub's approval: the add-on's ManagedClusterAddOn must exist and its registration name this subject")
	}
	if len(why) > 0 {
		out += ": " + strings.Join(why, "; ")
	}
	return out
}
