package addondeploy

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
)

// setHelloReady writes the status of the hello agent Deployment on cluster1
// as its controller would with ready replicas ready.
func (s *suite) setHelloReady(t *testing.T, ready int32) {
	t.Helper()
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "hello-agents", Name: "hello-agent"}}
	s.update(t, s.spokeC, d, true, func() {
		d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, UpdatedReplicas: 1,
			ReadyReplicas: ready, AvailableReplicas: ready}
	})
}

// otherAddon creates an add-on without template whose agent reports
// Available True, as a Lease-mode agent does; self makes its
// ClusterManagementAddOn self-managed.
func (s *suite) otherAddon(t *testing.T, name string, self bool) {
	t.Helper()
	cma := newCMA(name)
	if self {
		cma.Annotations = map[string]string{addonv1alpha1.AddonLifecycleAnnotationKey: addonv1alpha1.AddonLifecycleSelfManageAnnotationValue}
	}
	s.create(t, s.hubC, cma)
	s.create(t, s.hubC, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: name}})
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: name}}
	s.update(t, s.hubC, mca, true, func() {
		meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionAvailable,
			Status: metav1.ConditionTrue, Reason: addonv1alpha1.AddonAvailableReasonLeaseUpdated, Message: "lease renewed"})
	})
}

// waitLabel waits until cluster1's feature label of addon has value (""
// for no label).
func (s *suite) waitLabel(t *testing.T, addon, value string) {
	t.Helper()
	key := clusterv1.AddOnFeatureLabelKeyPrefix + addon
	s.poll(t, "label "+key+"="+value, func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := s.hubC.Get(ctx, client.ObjectKey{Name: clusterName}, mc); err != nil {
			return false, err
		}
		got, ok := mc.Labels[key]
		return got == value && ok == (value != ""), nil
	})
}

func (s *suite) testHealth(t *testing.T) {
	s.waitCondition(t, "hello", addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionUnknown, addonv1alpha1.AddonAvailableReasonNoProbeResult)
	s.waitLabel(t, "hello", clusterv1.AddOnFeatureLabelValueUnreachable)

	s.setHelloReady(t, 1)
	mca := s.waitCondition(t, "hello", addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionTrue, addonv1alpha1.AddonAvailableReasonProbeAvailable)
	if c := meta.FindStatusCondition(mca.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable); c.Message != "hello add-on is available." {
		t.Errorf("Available message %q", c.Message)
	}
	s.waitLabel(t, "hello", clusterv1.AddOnFeatureLabelValueAvailable)

	s.setHelloReady(t, 0)
	s.waitCondition(t, "hello", addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionFalse, addonv1alpha1.AddonAvailableReasonProbeUnavailable)
	s.waitLabel(t, "hello", clusterv1.AddOnFeatureLabelValueUnhealthy)
	s.setHelloReady(t, 1)
	s.waitCondition(t, "hello", addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionTrue, addonv1alpha1.AddonAvailableReasonProbeAvailable)

	s.otherAddon(t, "leased", false)
	s.otherAddon(t, "selfish", true)
	s.waitLabel(t, "leased", clusterv1.AddOnFeatureLabelValueAvailable)

	// The cluster's agent stops renewing its lease: every add-on turns
	// Unknown within the cluster's lease period.
	s.setClusterAvailable(t, metav1.ConditionUnknown, clusterv1.ReasonManagedClusterLeaseUpdateStopped, "Registration agent stopped updating its lease.")
	lease := time.Duration(clusterv1.DefaultLeaseDurationSeconds) * time.Second
	for _, addon := range []string{"hello", "leased", "selfish", "big"} {
		framework.Eventually(s.ctx, t, lease, addon+" Available Unknown with its cluster", func(ctx context.Context) (bool, error) {
			m, err := s.mca(ctx, addon)
			if err != nil {
				return false, err
			}
			c := meta.FindStatusCondition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable)
			return c != nil && c.Status == metav1.ConditionUnknown && c.Reason == clusterv1.ReasonManagedClusterLeaseUpdateStopped, nil
		})
		s.waitLabel(t, addon, clusterv1.AddOnFeatureLabelValueUnreachable)
	}

	// The cluster comes back: the hub probes its template add-on again and
	// leaves the Lease-mode one to its agent.
	s.setClusterAvailable(t, metav1.ConditionTrue, clusterv1.ReasonManagedClusterAvailable, "Managed cluster is available")
	s.waitCondition(t, "hello", addonv1alpha1.ManagedClusterAddOnConditionAvailable, metav1.ConditionTrue, addonv1alpha1.AddonAvailableReasonProbeAvailable)
	s.stays(t, 2*time.Second, "leased Available Unknown until its agent reports", func(ctx context.Context) (bool, error) {
		m, err := s.mca(ctx, "leased")
		return err == nil && meta.FindStatusCondition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnConditionAvailable).Status == metav1.ConditionUnknown, err
	})

	s.testPrinterColumns(t)

	kit.Must(t, "delete add-on leased", s.hubC.Delete(s.ctx, &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "leased"}}))
	s.waitLabel(t, "leased", "")
}

// testPrinterColumns checks that `kubectl get mca` shows the add-ons'
// conditions in its AVAILABLE, DEGRADED and PROGRESSING columns.
func (s *suite) testPrinterColumns(t *testing.T) {
	t.Helper()
	mca := &addonv1alpha1.ManagedClusterAddOn{ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "hello"}}
	s.update(t, s.hubC, mca, true, func() { // as the rollout controller reports a finished rollout
		meta.SetStatusCondition(&mca.Status.Conditions, metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnConditionProgressing,
			Status: metav1.ConditionFalse, Reason: addonv1alpha1.ProgressingReasonCompleted, Message: "completed"})
	})
	bin, err := framework.KubeBinDir()
	kit.Must(t, "find kubectl", err)
	out, err := exec.CommandContext(s.ctx, filepath.Join(bin, "kubectl"), "--kubeconfig", s.env.Kubeconfig(), "--context", "hub",
		"get", "mca", "-n", clusterName).CombinedOutput()
	kit.Must(t, "kubectl get mca: "+string(out), err)
	rows := table(string(out))
	want := map[string]map[string]string{
		"hello":  {"AVAILABLE": "True", "DEGRADED": "", "PROGRESSING": "False"},
		"leased": {"AVAILABLE": "Unknown", "DEGRADED": "", "PROGRESSING": ""},
		"big":    {"AVAILABLE": "True", "DEGRADED": "", "PROGRESSING": ""},
	}
	for name, cols := range want {
		for col, value := range cols {
			if got, ok := rows[name][col]; !ok || (got != value && (value != "" || got != "<none>")) {
				t.Errorf("kubectl get mca: %s %s = %q, want %q\n%s", name, col, got, value, out)
			}
		}
	}
}

// table parses kubectl's table output into rows by NAME, each a map from
// column header to cell, cells cut at the header's positions (an empty cell
// is blank).
func table(out string) map[string]map[string]string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	header := lines[0]
	var starts []int
	for i := range header {
		if header[i] != ' ' && (i == 0 || header[i-1] == ' ') {
			starts = append(starts, i)
		}
	}
	cell := func(line string, c int) string {
		from, to := starts[c], len(line)
		if c+1 < len(starts) {
			to = min(starts[c+1], len(line))
		}
		if from >= len(line) {
			return ""
		}
		return strings.TrimSpace(line[from:to])
	}
	rows := map[string]map[string]string{}
	for _, line := range lines[1:] {
		row := map[string]string{}
		for c := range starts {
			row[cell(header, c)] = cell(line, c)
		}
		rows[row["NAME"]] = row
	}
	return rows
}
