package hub

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/accept"
	hubcli "github.com/kubectl-ocm/kubectl-ocm/plugins/hub"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/root"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// TestCLI drives the hub verbs through the cobra commands against a real hub
// whose controller runs from a freshly built ocm-controller binary under the
// component runner: init (dry run, then for real with --wait), token, an
// agent's registration with the printed token, accept, get clusters, status
// and clean.
func TestCLI(t *testing.T) {
	t.Parallel() // an environment of its own
	ctx, env, _ := hubtest.StartRunner(t, 10*time.Minute, framework.Options{})
	hubCluster := env.Cluster("hub")
	admin := hubCluster.Client()
	kubectl := func(args ...string) (string, string, error) {
		streams, _, out, errOut := genericiooptions.NewTestIOStreams()
		cmd := root.NewCmdRoot(streams)
		cmd.SetArgs(append(args, "--kubeconfig", env.Kubeconfig(), "--context", "hub"))
		err := cmd.ExecuteContext(ctx)
		return out.String(), errOut.String(), err
	}
	must := func(args ...string) string {
		t.Helper()
		out, errOut, err := kubectl(args...)
		if err != nil {
			t.Fatalf("kubectl ocm %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
		}
		return out
	}

	out := must("hub", "init", "--dry-run", "-o", "yaml")
	for _, want := range []string{"kind: CustomResourceDefinition", "kind: Deployment", "name: cluster-manager", "kind: ClusterManager"} {
		if !strings.Contains(out, want) {
			t.Errorf("hub init --dry-run -o yaml lacks %q", want)
		}
	}
	if err := admin.Get(ctx, client.ObjectKey{Name: config.HubNamespace}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Fatalf("hub init --dry-run touched the cluster: namespace %s: %v", config.HubNamespace, err)
	}

	// clusteradm's --output-file and --output-join-command-file: the
	// manifests applied, as the dry run prints them, and a join script.
	dir := t.TempDir()
	manifests, script := filepath.Join(dir, "hub.yaml"), filepath.Join(dir, "join.sh")
	out = must("hub", "init", "--wait", "--timeout", "2m", "--output-file", manifests, "--output-join-command-file", script)
	if !strings.Contains(out, "kubectl ocm join --hub-token ") || !strings.Contains(out, "--hub-apiserver "+hubCluster.Server()) {
		t.Fatalf("hub init did not print the join command:\n%s", out)
	}
	// The join command pins the CA that signs the hub's serving certificate.
	hubCAs, err := certs.ParseCertificates(hubCluster.CAData())
	if err != nil {
		t.Fatal(err)
	}
	pin := certs.Pin(hubCAs[0])
	if !strings.Contains(out, "--hub-apiserver "+hubCluster.Server()+" --ca-cert-hash "+pin+" --cluster-name ") {
		t.Errorf("hub init's join command does not pin the hub CA %s:\n%s", pin, out)
	}
	// ... which anyone may read, as join does before it trusts the hub.
	anonymous, err := kubernetes.NewForConfig(rest.AnonymousClientConfig(hubCluster.RESTConfig()))
	if err != nil {
		t.Fatal(err)
	}
	if cm, err := anonymous.CoreV1().ConfigMaps("kube-public").Get(ctx, certs.HubCABundleConfigMap, metav1.GetOptions{}); err != nil || !strings.Contains(cm.Data[certs.HubCABundleKey], "BEGIN CERTIFICATE") {
		t.Errorf("an anonymous client cannot read the hub CA bundle kube-public/%s after hub init: %v", certs.HubCABundleConfigMap, err)
	}
	if _, err := anonymous.CoreV1().ConfigMaps("kube-public").Get(ctx, "other", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("an anonymous client reading another ConfigMap of kube-public: %v, want forbidden", err)
	}
	if data, err := os.ReadFile(manifests); err != nil || string(data) != must("hub", "init", "--dry-run", "-o", "yaml") {
		t.Errorf("--output-file: err = %v; the file is not what --dry-run -o yaml prints:\n%s", err, data)
	}
	fi, err := os.Stat(script)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("--output-join-command-file: %v, mode %v; want a script only its owner reads", err, fi)
	}
	data, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	scriptToken := ""
	if f := strings.Fields(string(data)); slices.Contains(f, "--hub-token") {
		scriptToken = f[slices.Index(f, "--hub-token")+1]
	}
	if !strings.Contains(string(data), "--hub-apiserver "+hubCluster.Server()+" --ca-cert-hash "+pin+` --cluster-name "$name" "$@"`) || scriptToken == "" {
		t.Errorf("--output-join-command-file wrote no join command for a cluster named by the first argument:\n%s", data)
	} else {
		expectTokenWorks(ctx, t, hubCluster, scriptToken, true, "the token of the join script")
	}
	// hub init applies the install as the one install field manager.
	installed := &operatorv1.ClusterManager{}
	if err := admin.Get(ctx, client.ObjectKey{Name: operatorv1.ClusterManagerName}, installed); err != nil {
		t.Fatal(err)
	}
	clitest.ExpectFieldManager(t, installed, "kubectl-ocm/Apply")
	framework.Eventually(ctx, t, pollTimeout, "ClusterManager Applied by the running controller", func(ctx context.Context) (bool, error) {
		cm := &operatorv1.ClusterManager{}
		if err := admin.Get(ctx, client.ObjectKey{Name: operatorv1.ClusterManagerName}, cm); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(cm.Status.Conditions, operatorv1.ConditionClusterManagerApplied), nil
	})

	var join hubcli.JoinInfo
	if err := json.Unmarshal([]byte(must("hub", "token", "--duration", "1h", "-o", "json")), &join); err != nil || join.HubToken == "" {
		t.Fatalf("hub token -o json: %v (%+v)", err, join)
	}
	if !slices.Equal(join.CACertHashes, []string{pin}) {
		t.Errorf("hub token -o json: caCertHashes %v, want [%s]", join.CACertHashes, pin)
	}
	if out := must("hub", "token", "--duration", "1h", "-o", "jsonpath={.caCertHashes[0]}"); out != pin {
		t.Errorf("hub token -o jsonpath={.caCertHashes[0]} printed %q, want %s", out, pin)
	}
	// The plain output holds the token once, inside the join command; the
	// bare token comes with -o jsonpath.
	if out := must("hub", "token", "--duration", "1h"); !strings.Contains(out, "kubectl ocm join --hub-token ") {
		t.Errorf("hub token printed no join command:\n%s", out)
	} else if tok := regexp.MustCompile(`--hub-token (\S+)`).FindStringSubmatch(out)[1]; strings.Count(out, tok) != 1 {
		t.Errorf("hub token printed its token %d times, want once (in the join command):\n%s", strings.Count(out, tok), out)
	}
	if out := must("hub", "token", "--duration", "1h", "-o", "jsonpath={.hubToken}"); strings.ContainsAny(out, " \n{}") || len(out) < 100 {
		t.Errorf("hub token -o jsonpath={.hubToken} printed %q, want the bare token", out)
	}
	// A token bound to c2 creates c2's bootstrap identity, which clean removes.
	if out := must("hub", "token", "--cluster-name", "c2", "-o", "yaml"); !strings.Contains(out, "clusterName: c2") {
		t.Errorf("hub token --cluster-name c2 -o yaml:\n%s", out)
	}
	boundBinding := client.ObjectKey{Name: "open-cluster-management:bootstrap:c2"}
	if err := admin.Get(ctx, boundBinding, &rbacv1.ClusterRoleBinding{}); err != nil {
		t.Errorf("hub token --cluster-name c2 created no binding: %v", err)
	}
	// The agent of c1 registers with the printed token.
	bootCfg := hubCluster.RESTConfig()
	bootCfg.CertData, bootCfg.KeyData = nil, nil
	bootCfg.BearerToken = join.HubToken
	boot := clientFor(t, bootCfg, nil)
	if err := boot.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "c1"}}); err != nil {
		t.Fatalf("register c1 with the bootstrap token: %v", err)
	}
	csrName := createCSR(ctx, t, boot, "c1", "c1")
	stray := createCSR(ctx, t, admin, "c1", "c1")

	out, errOut, err := kubectl("accept", "--clusters", "c1")
	if err != nil {
		t.Fatalf("accept: %v\n%s", err, errOut)
	}
	for _, want := range []string{"CSR " + csrName + " approved", "set hubAcceptsClient to true for managed cluster c1"} {
		if !strings.Contains(out, want) {
			t.Errorf("accept output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "CSR "+stray+" of cluster c1 skipped: it comes from unexpected requester") {
		t.Errorf("accept did not report the CSR from an unexpected requester:\n%s", errOut)
	}
	expectPending(ctx, t, admin, stray, "requested by the admin, not the bootstrap identity")
	waitCluster(ctx, t, admin, "c1", "accepted", hasCondition(
		clusterv1.ManagedClusterConditionHubAccepted, metav1.ConditionTrue, clusterv1.ReasonHubClusterAdminAccepted))
	// accept writes as its own field manager and records who accepted c1.
	c1 := &clusterv1.ManagedCluster{}
	if err := admin.Get(ctx, client.ObjectKey{Name: "c1"}, c1); err != nil {
		t.Fatal(err)
	}
	review, err := kubernetes.NewForConfigOrDie(hubCluster.RESTConfig()).AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if by, at := c1.Annotations[accept.AcceptedByAnnotation], c1.Annotations[accept.AcceptedAtAnnotation]; by != review.Status.UserInfo.Username || by == "" || at == "" {
		t.Errorf("ManagedCluster c1 records acceptance by %q at %q, want by %q", by, at, review.Status.UserInfo.Username)
	}
	clitest.ExpectFieldManager(t, c1, "kubectl-ocm-accept/Update")
	approved := &certificatesv1.CertificateSigningRequest{}
	if err := admin.Get(ctx, client.ObjectKey{Name: csrName}, approved); err != nil {
		t.Fatal(err)
	}
	clitest.ExpectFieldManager(t, approved, "kubectl-ocm-accept/Update/approval")

	// c1's agent reports it joined, as the registration agent does; accept
	// --wait on the accepted and joined cluster has no request to wait for
	// and returns at once, where it used to wait out its whole timeout.
	reportJoined(ctx, t, admin, "c1")
	out, errOut, err = kubectl("accept", "--clusters", "c1", "--wait", "--timeout", "2m")
	if err != nil || !strings.Contains(errOut, "Managed cluster c1 is already accepted: no certificate request to wait for") ||
		!strings.Contains(out, "Your managed cluster c1 has joined the Hub successfully.") {
		t.Errorf("accept --wait on the joined cluster c1: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}

	// Revoking: the tokens printed so far stop working at once, the next
	// ones work; c1, registered, is not affected.
	boundJoin := hubcli.JoinInfo{}
	if err := json.Unmarshal([]byte(must("hub", "token", "--cluster-name", "c2", "-o", "json")), &boundJoin); err != nil {
		t.Fatal(err)
	}
	if out := must("hub", "token", "revoke", "--dry-run=server"); !strings.Contains(out, "would be deleted (server dry run)") {
		t.Errorf("hub token revoke --dry-run=server:\n%s", out)
	}
	expectTokenWorks(ctx, t, hubCluster, join.HubToken, true, "the shared token after a dry run")
	if out := must("delete", "token"); !strings.Contains(out, "deleted and created anew") {
		t.Errorf("delete token (hub token revoke):\n%s", out)
	}
	expectTokenWorks(ctx, t, hubCluster, join.HubToken, false, "the shared token after revoke")
	expectTokenWorks(ctx, t, hubCluster, boundJoin.HubToken, true, "c2's token after the shared ones were revoked")
	must("hub", "token", "revoke", "--cluster-name", "c2")
	expectTokenWorks(ctx, t, hubCluster, boundJoin.HubToken, false, "c2's token after revoke --cluster-name c2")
	if err := json.Unmarshal([]byte(must("hub", "token", "-o", "json")), &join); err != nil {
		t.Fatal(err)
	}
	expectTokenWorks(ctx, t, hubCluster, join.HubToken, true, "a shared token issued after revoke")

	out = must("get", "clusters")
	if !strings.Contains(out, "NAME") || !strings.Contains(out, "HUB ACCEPTED") || !strings.Contains(out, "MANAGED CLUSTER URLS") || !strings.Contains(out, "c1") {
		t.Errorf("get clusters:\n%s", out)
	}
	if out := must("get", "clusters", "-o", "name"); strings.TrimSpace(out) != "managedcluster.cluster.open-cluster-management.io/c1" {
		t.Errorf("get clusters -o name: %q", out)
	}
	framework.Eventually(ctx, t, pollTimeout, "c1 in set default in get clusters -o wide", func(context.Context) (bool, error) {
		out := must("get", "clusters", "-o", "wide", "--clusterset", "default")
		return strings.Contains(out, "CLUSTERSET") && strings.Contains(out, "default"), nil
	})
	if out := must("hub", "status"); !strings.Contains(out, "Hub controller:  available") || !strings.Contains(out, "1 total, 1 accepted") {
		t.Errorf("hub status:\n%s", out)
	}

	_, _, err = kubectl("hub", "clean")
	assert.ErrorContains(t, err, "--force")
	out = must("hub", "clean", "--force", "--timeout", "2m")
	for _, want := range []string{"Deleted ManagedCluster c1", "Removed ClusterManager cluster-manager", "Removed Deployment open-cluster-management/cluster-manager"} {
		if !strings.Contains(out, want) {
			t.Errorf("hub clean --force output lacks %q:\n%s", want, out)
		}
	}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: config.HubNamespace, Name: "ocm-hub-controller"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("the hub controller Deployment after hub clean: %v, want NotFound", err)
	}
	if err := admin.Get(ctx, boundBinding, &rbacv1.ClusterRoleBinding{}); !apierrors.IsNotFound(err) {
		t.Errorf("c2's bootstrap binding after hub clean: %v, want NotFound", err)
	}
	framework.Eventually(ctx, t, pollTimeout, "hub namespace gone", func(ctx context.Context) (bool, error) {
		err := admin.Get(ctx, client.ObjectKey{Name: config.HubNamespace}, &corev1.Namespace{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
}

// expectTokenWorks checks whether the hub authenticates token: a request
// with it is answered (allowed or forbidden) rather than refused as
// Unauthorized. A revoked token may work a little longer, while the API
// server's authentication cache (10 s by default) holds it, so a token
// expected not to work is polled for.
func expectTokenWorks(ctx context.Context, t *testing.T, hubCluster *framework.Cluster, token string, works bool, what string) {
	t.Helper()
	cfg := hubCluster.RESTConfig()
	cfg.CertData, cfg.KeyData = nil, nil
	cfg.BearerToken = token
	c := clientFor(t, cfg, nil)
	authenticated := func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKey{Name: "c1"}, &clusterv1.ManagedCluster{})
		return !apierrors.IsUnauthorized(err), nil
	}
	if works {
		if ok, _ := authenticated(ctx); !ok {
			t.Errorf("%s: Unauthorized, want it to authenticate", what)
		}
		return
	}
	framework.Eventually(ctx, t, pollTimeout, what+" refused as Unauthorized", func(ctx context.Context) (bool, error) {
		ok, err := authenticated(ctx)
		return !ok, err
	})
}
