package agent_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	clusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework/runner"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
)

// suite is the shared state of the ordered subtests.
type suite struct {
	hub, spoke *framework.Cluster
	hubC       client.Client
	spokeC     client.Client
	runner     *runner.Runner
}

// TestAgentRegistration runs the agent through its life: bootstrap, a
// restart while its request is pending, acceptance, lease and status,
// recovery from a lost or corrupted credential, and certificate rotation.
func TestAgentRegistration(t *testing.T) {
	t.Parallel() // a fleet of its own
	ctx, f := agenttest.StartFleet(t, 10*time.Minute, agenttest.FleetOptions{Options: framework.Options{Clusters: []string{clusterName}}})
	s := &suite{hub: f.Hub, spoke: f.Env.Cluster(clusterName), runner: f.Runner}
	s.hubC, s.spokeC = s.hub.Client(), s.spoke.Client()
	t.Cleanup(func() {
		if t.Failed() {
			dumpCSRs(t, s.hub)
			for _, c := range []string{"hub", clusterName} {
				for _, d := range []string{config.HubNamespace + "/ocm-hub-controller", agentNS + "/klusterlet-agent"} {
					parts := strings.SplitN(d, "/", 2)
					if data, err := os.ReadFile(s.runner.LogPath(c, parts[0], parts[1])); err == nil {
						t.Logf("log of %s on %s:\n%s", d, c, tail(string(data), 80))
					}
				}
			}
		}
	})

	bootstrap, err := kubeconfig.ForToken(s.hub.Server(), s.hub.CAData(), f.Token)
	if err != nil {
		t.Fatal(err)
	}
	agentObjs, err := config.AgentObjects(config.AgentValues{ClusterName: clusterName, BootstrapKubeconfig: bootstrap})
	if err != nil {
		t.Fatal(err)
	}
	applyAll(ctx, t, s.spokeC, agentObjs)

	steps := []struct {
		name string
		run  func(context.Context, *testing.T, *suite)
	}{
		{"bootstrap creates the cluster and one CSR", testBootstrap},
		{"restart reuses the key and the pending CSR", testRestartReusesCSR},
		{"accept: joined, lease renewed, available", testAccept},
		{"status: version, capacity, claims", testStatus},
		{"managed namespaces: created, adopted, released", testManagedNamespaces},
		{"hub credential deleted: bootstrap again", testSecretDeleted},
		{"hub credential corrupted: bootstrap again", testSecretCorrupted},
		{"certificate rotation keeps the cluster available", testRotation},
	}
	for _, step := range steps {
		if !t.Run(step.name, func(t *testing.T) { step.run(ctx, t, s) }) {
			return
		}
	}
}

func testBootstrap(ctx context.Context, t *testing.T, s *suite) {
	framework.Eventually(ctx, t, pollTimeout, "ManagedCluster "+clusterName+" on the hub", func(ctx context.Context) (bool, error) {
		_, err := managedCluster(ctx, s.hubC)
		return err == nil, client.IgnoreNotFound(err)
	})
	framework.Eventually(ctx, t, pollTimeout, "one pending CSR", func(ctx context.Context) (bool, error) {
		all, err := csrsOf(ctx, s.hubC)
		return len(all) == 1 && len(all[0].Status.Conditions) == 0, err
	})
	all, _ := csrsOf(ctx, s.hubC)
	csr := all[0]
	if !strings.HasPrefix(csr.Name, clusterName+"-") || csr.Spec.SignerName != "kubernetes.io/kube-apiserver-client" {
		t.Errorf("CSR %s has signer %s; want generateName %s- and the kube-apiserver-client signer", csr.Name, csr.Spec.SignerName, clusterName)
	}
	if want := "system:serviceaccount:open-cluster-management:agent-registration-bootstrap"; csr.Spec.Username != want {
		t.Errorf("CSR requested by %s, want the bootstrap identity %s", csr.Spec.Username, want)
	}
	req, err := certs.ParseCSR(csr.Spec.Request)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(req.Subject.CommonName, "system:open-cluster-management:"+clusterName+":") ||
		!slices.Contains(req.Subject.Organization, "system:open-cluster-management:managed-clusters") {
		t.Errorf("CSR subject %v does not name the agent identity of %s", req.Subject, clusterName)
	}
	// The message names the request's key, which `kubectl ocm accept`
	// shows the hub admin for each request.
	key, err := certs.KeyPin(req.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, pollTimeout, "Klusterlet HubConnectionDegraded CSRPending naming the accept command and the request's key", func(ctx context.Context) (bool, error) {
		c, err := klusterletCondition(ctx, s.spokeC, operatorv1.ConditionHubConnectionDegraded)
		return c != nil && c.Reason == "CSRPending" && strings.Contains(c.Message, "kubectl ocm accept --clusters "+clusterName) &&
			strings.Contains(c.Message, csr.Name+" (key "+key+")"), err
	})
}

func testRestartReusesCSR(ctx context.Context, t *testing.T, s *suite) {
	before, err := csrsOf(ctx, s.hubC)
	if err != nil || len(before) != 1 {
		t.Fatalf("want one CSR before the restart, got %d (%v)", len(before), err)
	}
	scaleAgent(ctx, t, s, 0)
	// Clear the agent's conditions so that their return proves the new
	// process has looked at its pending request.
	k := &operatorv1.Klusterlet{}
	if err := s.spokeC.Get(ctx, types.NamespacedName{Name: operatorv1.KlusterletName}, k); err != nil {
		t.Fatal(err)
	}
	k.Status.Conditions = nil
	if err := s.spokeC.Status().Update(ctx, k); err != nil {
		t.Fatal(err)
	}
	scaleAgent(ctx, t, s, 1)
	framework.Eventually(ctx, t, pollTimeout, "the restarted agent reporting its pending CSR", func(ctx context.Context) (bool, error) {
		c, err := klusterletCondition(ctx, s.spokeC, operatorv1.ConditionHubConnectionDegraded)
		return c != nil && c.Reason == "CSRPending", err
	})
	after, err := csrsOf(ctx, s.hubC)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 1 || after[0].Name != before[0].Name {
		t.Errorf("after the restart the hub has CSRs %v, want only %s", names(after), before[0].Name)
	}
}

// scaleAgent scales the agent Deployment and waits for the runner to follow.
func scaleAgent(ctx context.Context, t *testing.T, s *suite, replicas int32) {
	t.Helper()
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas))
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: agentNS, Name: "klusterlet-agent"}}
	if err := s.spokeC.Patch(ctx, dep, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, pollTimeout, fmt.Sprintf("the agent process count to be %d", replicas), func(context.Context) (bool, error) {
		info, ok := s.runner.Process(clusterName, agentNS, "klusterlet-agent")
		running := ok && info.Pid != 0
		return running == (replicas > 0), nil
	})
}

func testAccept(ctx context.Context, t *testing.T, s *suite) {
	approveNextCSR(ctx, t, s.hub)
	mc, err := managedCluster(ctx, s.hubC)
	if err != nil {
		t.Fatal(err)
	}
	base := mc.DeepCopy()
	mc.Spec.HubAcceptsClient = true
	mc.Spec.LeaseDurationSeconds = 8
	// A patch: the hub controller writes the ManagedCluster concurrently.
	if err := s.hubC.Patch(ctx, mc, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, pollTimeout, "Secret hub-kubeconfig-secret with OCM's keys", func(ctx context.Context) (bool, error) {
		sec, err := hubSecret(ctx, s.spokeC)
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, k := range []string{"kubeconfig", "tls.crt", "tls.key", "cluster-name", "agent-name"} {
			if len(sec.Data[k]) == 0 {
				return false, fmt.Errorf("key %s missing", k)
			}
		}
		return string(sec.Data["cluster-name"]) == clusterName, nil
	})
	for _, typ := range []string{clusterv1.ManagedClusterConditionJoined, clusterv1.ManagedClusterConditionAvailable} {
		framework.Eventually(ctx, t, pollTimeout, "ManagedCluster condition "+typ, func(ctx context.Context) (bool, error) {
			return conditionTrue(ctx, s.hubC, typ)
		})
	}
	var first *metav1.MicroTime
	framework.Eventually(ctx, t, pollTimeout, "two lease renewals", func(ctx context.Context) (bool, error) {
		l := &coordinationv1.Lease{}
		if err := s.hubC.Get(ctx, types.NamespacedName{Namespace: clusterName, Name: clusterv1.LeaseName}, l); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		if l.Spec.RenewTime == nil {
			return false, nil
		}
		if first == nil {
			first = l.Spec.RenewTime.DeepCopy()
			return false, nil
		}
		return l.Spec.RenewTime.After(first.Time), nil
	})
	// The agent writes only HubConnectionDegraded; Available is the
	// Klusterlet operator's, from the agent Deployment.
	framework.Eventually(ctx, t, pollTimeout, "Klusterlet HubConnectionDegraded False", func(ctx context.Context) (bool, error) {
		d, err := klusterletCondition(ctx, s.spokeC, operatorv1.ConditionHubConnectionDegraded)
		return d != nil && d.Status == metav1.ConditionFalse, err
	})
}

func testStatus(ctx context.Context, t *testing.T, s *suite) {
	for i, n := range []struct {
		cpu, mem      string
		unschedulable bool
	}{{"4", "8Gi", false}, {"2", "4Gi", true}} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i)}, Spec: corev1.NodeSpec{Unschedulable: n.unschedulable}}
		if err := s.spokeC.Create(ctx, node); err != nil {
			t.Fatal(err)
		}
		rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n.cpu), corev1.ResourceMemory: resource.MustParse(n.mem)}
		// The controller manager's node controllers write new Nodes too.
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := s.spokeC.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
				return err
			}
			node.Status.Capacity, node.Status.Allocatable = rl, rl
			return s.spokeC.Status().Update(ctx, node)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	k := &operatorv1.Klusterlet{}
	if err := s.spokeC.Get(ctx, types.NamespacedName{Name: operatorv1.KlusterletName}, k); err != nil {
		t.Fatal(err)
	}
	// A patch, not an update: the agent writes the Klusterlet's status
	// concurrently, which would make an update conflict.
	base := k.DeepCopy()
	k.Spec.RegistrationConfiguration = &operatorv1.RegistrationConfiguration{
		ClusterClaimConfiguration: &operatorv1.ClusterClaimConfiguration{MaxCustomClusterClaims: 2, ReservedClusterClaimSuffixes: []string{".example.com"}},
	}
	if err := s.spokeC.Patch(ctx, k, client.MergeFrom(base)); err != nil {
		t.Fatal(err)
	}
	claims := map[string]bool{"id.k8s.io": false, "zone": false, "app": false, "region": false, "secret-thing": true, "platform.example.com": false}
	for name, spokeOnly := range claims {
		c := &clusterv1alpha1.ClusterClaim{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1alpha1.ClusterClaimSpec{Value: "v-" + name}}
		if spokeOnly {
			c.Labels = map[string]string{clusterv1alpha1.ClusterClaimSpokeOnlyLabel: ""}
		}
		if err := s.spokeC.Create(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	// The agent's own version claim is reserved: custom claims do not push
	// it out, nor the CAs of its certificate and of the hub. Nor do they push out a
	// claim with a reserved suffix.
	wantClaims := []string{version.AgentVersionClaim, certs.ClientIssuerClaim, certs.HubCAsClaim, "id.k8s.io", "platform.example.com", "app", "region"}
	framework.Eventually(ctx, t, pollTimeout, "version, capacity, allocatable and claims on the ManagedCluster", func(ctx context.Context) (bool, error) {
		mc, err := managedCluster(ctx, s.hubC)
		if err != nil {
			return false, err
		}
		var got []string
		for _, c := range mc.Status.ClusterClaims {
			got = append(got, c.Name)
		}
		cpu, alloc := mc.Status.Capacity[clusterv1.ResourceCPU], mc.Status.Allocatable[clusterv1.ResourceCPU]
		mem := mc.Status.Capacity[clusterv1.ResourceMemory]
		if mc.Status.Version.Kubernetes == "" || cpu.Cmp(resource.MustParse("6")) != 0 || alloc.Cmp(resource.MustParse("4")) != 0 ||
			mem.Cmp(resource.MustParse("12Gi")) != 0 || !slices.Equal(got, wantClaims) || version.AgentVersion(mc) != version.Version {
			return false, fmt.Errorf("version %q, cpu %s/%s, memory %s, claims %v, agent version %q; want 6/4 CPUs, 12Gi, claims %v, agent version %s",
				mc.Status.Version.Kubernetes, cpu.String(), alloc.String(), mem.String(), got, version.AgentVersion(mc), wantClaims, version.Version)
		}
		return true, nil
	}) // The agent says on the hub that it left claims out.
	framework.Eventually(ctx, t, pollTimeout, "event CustomClusterClaimsTruncated about the cluster in its namespace on the hub", func(ctx context.Context) (bool, error) {
		list := &eventsv1.EventList{}
		if err := s.hubC.List(ctx, list, client.InNamespace(clusterName)); err != nil {
			return false, err
		}
		for _, ev := range list.Items {
			if ev.Reason == "CustomClusterClaimsTruncated" && ev.Regarding.Kind == "ManagedCluster" && ev.Regarding.Name == clusterName {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d events, none CustomClusterClaimsTruncated", len(list.Items))
	})
}

func testSecretDeleted(ctx context.Context, t *testing.T, s *suite) {
	sec, err := hubSecret(ctx, s.spokeC)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.spokeC.Delete(ctx, sec); err != nil {
		t.Fatal(err)
	}
	recoverCredential(ctx, t, s, string(sec.Data["tls.crt"]))
}

func testSecretCorrupted(ctx context.Context, t *testing.T, s *suite) {
	sec, err := hubSecret(ctx, s.spokeC)
	if err != nil {
		t.Fatal(err)
	}
	old := string(sec.Data["tls.crt"])
	secBase := sec.DeepCopy()
	sec.Data["tls.crt"] = []byte("garbage")
	if err := s.spokeC.Patch(ctx, sec, client.MergeFrom(secBase)); err != nil {
		t.Fatal(err)
	}
	recoverCredential(ctx, t, s, old)
}

// recoverCredential approves the agent's new bootstrap CSR and waits for a new
// hub credential (not oldCert) and a joined, available cluster.
func recoverCredential(ctx context.Context, t *testing.T, s *suite, oldCert string) {
	t.Helper()
	approveNextCSR(ctx, t, s.hub)
	framework.Eventually(ctx, t, pollTimeout, "a new hub credential", func(ctx context.Context) (bool, error) {
		sec, err := hubSecret(ctx, s.spokeC)
		if err != nil {
			return false, client.IgnoreNotFound(err)
		}
		_, err = certutil.ParseCertsPEM(sec.Data["tls.crt"])
		return err == nil && string(sec.Data["tls.crt"]) != oldCert, nil
	})
	framework.Eventually(ctx, t, pollTimeout, "Klusterlet HubConnectionDegraded False", func(ctx context.Context) (bool, error) {
		d, err := klusterletCondition(ctx, s.spokeC, operatorv1.ConditionHubConnectionDegraded)
		return d != nil && d.Status == metav1.ConditionFalse, err
	})
	for _, typ := range []string{clusterv1.ManagedClusterConditionJoined, clusterv1.ManagedClusterConditionAvailable} {
		framework.Eventually(ctx, t, pollTimeout, "ManagedCluster condition "+typ, func(ctx context.Context) (bool, error) {
			return conditionTrue(ctx, s.hubC, typ)
		})
	}
}

func testRotation(ctx context.Context, t *testing.T, s *suite) {
	sec, err := hubSecret(ctx, s.spokeC)
	if err != nil {
		t.Fatal(err)
	}
	agentID := string(sec.Data[kubeconfig.AgentNameKey])
	key, keyPEM, err := certs.NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	subject := certs.AgentSubject(clusterName, agentID)
	now := time.Now()
	// 60 s of life, 10 s gone: rotation is due 45 to 48 s after now.
	certPEM := issueClientCert(t, s.hub, key.Public(), subject.CommonName, subject.Organization, now.Add(-10*time.Second), now.Add(50*time.Second))
	hub := &kubeconfig.Info{Server: s.hub.Server(), CAData: s.hub.CAData()}
	if sec.Data, err = kubeconfig.HubCredentialData(hub, clusterName, agentID, certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	if err := s.spokeC.Update(ctx, sec); err != nil {
		t.Fatal(err)
	}
	csrsBefore, err := csrsOf(ctx, s.hubC)
	if err != nil {
		t.Fatal(err)
	}
	var rotatedTo string
	// The hub controller (run by the component runner) must approve the
	// renewal: it is requested by the agent's own identity for its cluster.
	framework.Eventually(ctx, t, pollTimeout, "a rotated certificate while the cluster stays available", func(ctx context.Context) (bool, error) {
		mc, err := managedCluster(ctx, s.hubC)
		if err != nil {
			return false, err
		}
		if c := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable); c == nil || c.Status != metav1.ConditionTrue {
			t.Fatalf("the cluster became unavailable during rotation: %+v", c)
		}
		cur, err := hubSecret(ctx, s.spokeC)
		if err != nil {
			return false, err
		}
		if string(cur.Data["tls.crt"]) == string(certPEM) {
			return false, nil
		}
		rotatedTo = string(cur.Data["tls.crt"])
		rot := meta.FindStatusCondition(mc.Status.Conditions, clusterv1.ManagedClusterConditionCertificateRotated)
		return rot != nil && rot.Status == metav1.ConditionTrue && rot.Reason == clusterv1.ReasonClientCertificateUpdated, nil
	})
	leaf, err := certutil.ParseCertsPEM([]byte(rotatedTo))
	if err != nil {
		t.Fatal(err)
	}
	if !certs.SubjectEqual(leaf[0].Subject, subject) || !leaf[0].NotAfter.After(now.Add(time.Hour)) {
		t.Errorf("rotated certificate for %v until %s; want the same identity %v and a long lifetime", leaf[0].Subject, leaf[0].NotAfter, subject)
	}
	after, err := csrsOf(ctx, s.hubC)
	if err != nil {
		t.Fatal(err)
	}
	for _, csr := range after {
		if slices.ContainsFunc(csrsBefore, func(b certificatesv1.CertificateSigningRequest) bool { return b.Name == csr.Name }) {
			continue
		}
		if csr.Spec.Username != subject.CommonName {
			t.Errorf("renewal CSR %s requested by %s, want the agent's own identity %s", csr.Name, csr.Spec.Username, subject.CommonName)
		}
		if reason := approvalReason(csr); reason != hubAutoApprovedReason {
			t.Errorf("renewal CSR %s approved with reason %q, want the hub controller's %q", csr.Name, reason, hubAutoApprovedReason)
		}
	}
	// The agent read its renewal through its cluster's own ClusterRole,
	// which the hub binds only while the cluster has requests of its own
	// (docs/design/authorization.md): the API server's cleaner deletes
	// them an hour after they are issued, and the binding goes with them.
	binding := client.ObjectKey{Name: "open-cluster-management:managedcluster:" + clusterName}
	if err := s.hubC.Get(ctx, binding, &rbacv1.ClusterRoleBinding{}); err != nil {
		t.Errorf("ClusterRoleBinding %s while the cluster has requests of its own: %v", binding.Name, err)
	}
	if err := s.hubC.DeleteAllOf(ctx, &certificatesv1.CertificateSigningRequest{}, client.MatchingLabels{clusterv1.ClusterNameLabelKey: clusterName}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(ctx, t, pollTimeout, "ClusterRoleBinding "+binding.Name+" gone with the requests", func(ctx context.Context) (bool, error) {
		err := s.hubC.Get(ctx, binding, &rbacv1.ClusterRoleBinding{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

func names(csrs []certificatesv1.CertificateSigningRequest) []string {
	out := make([]string, 0, len(csrs))
	for _, c := range csrs {
		out = append(out, c.Name)
	}
	return out
}

func tail(s string, lines int) string {
	l := strings.Split(s, "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

// hubAutoApprovedReason is the reason the hub controller approves renewals with.
const hubAutoApprovedReason = "AutoApprovedByHubCSRApprovingController"

// approvalReason returns the reason of csr's Approved condition, or "".
func approvalReason(csr certificatesv1.CertificateSigningRequest) string {
	for _, c := range csr.Status.Conditions {
		if c.Type == certificatesv1.CertificateApproved {
			return c.Reason
		}
	}
	return ""
}
