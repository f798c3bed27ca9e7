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
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/accept"
	hubcli "github.com/kubectl-ocm/kubectl-ocm/plugins/hub"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/root"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// TestCLI drives the hub verbs through the cobra commands against a real hub
// whose controller runs from a freshly built ocm-controller binary under the
// component runner: init (dry run, then for real with --wait), token, an
// agent's registration with the printed token, accept, get clusters, status
// and clean, each a step over one hub.
func TestCLI(t *testing.T) {
	t.Parallel() // an environment of its own
	ctx, env, _ := hubtest.StartRunner(t, 10*time.Minute, framework.Options{})
	fx := &cliFixture{ctx: ctx, hub: env.Cluster("hub"), admin: env.Cluster("hub").Client(), kubeconfig: env.Kubeconfig(), dir: t.TempDir()}
	kit.RunSteps(t,
		kit.Step{Name: "hub init --dry-run prints the install and changes nothing", Run: fx.dryRun},
		kit.Step{Name: "hub init --wait installs the hub and prints a join command that pins its CA", Run: fx.initWait},
		kit.Step{Name: "hub init writes the manifests and a join script", Run: fx.outputFiles},
		kit.Step{Name: "hub init applies as the install field manager and the controller applies the ClusterManager", Run: fx.installedAs},
		kit.Step{Name: "hub token prints the join information and binds a token to one cluster", Run: fx.token},
		kit.Step{Name: "accept approves the CSR of the bootstrap identity only and records who accepted", Run: fx.accept},
		kit.Step{Name: "accept --wait on a joined cluster returns at once", Run: fx.acceptJoined},
		kit.Step{Name: "hub token revoke stops the tokens printed so far", Run: fx.revoke},
		kit.Step{Name: "get clusters and hub status show c1", Run: fx.getClusters},
		kit.Step{Name: "hub clean removes the hub", Run: fx.clean},
	)
}

// cliFixture is what the steps of TestCLI share: the hub and its admin,
// and what earlier steps made that later ones use.
type cliFixture struct {
	ctx        context.Context
	hub        *framework.Cluster
	admin      client.Client
	kubeconfig string
	// dir holds the files of hub init, which later steps read.
	dir string
	// manifests and script are the files of hub init's --output-file and
	// --output-join-command-file, and pin the hub CA's pin its join command
	// names.
	manifests, script, pin string
	// join is what hub token printed; boundAccount the ServiceAccount of
	// the bootstrap identity bound to c2.
	join         hubcli.JoinInfo
	boundAccount client.ObjectKey
}

// kubectl runs kubectl ocm args on the hub and returns its output.
func (fx *cliFixture) kubectl(args ...string) (string, string, error) {
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	cmd := root.NewCmdRoot(streams)
	cmd.SetArgs(append(args, "--kubeconfig", fx.kubeconfig, "--context", "hub"))
	err := cmd.ExecuteContext(fx.ctx)
	return out.String(), errOut.String(), err
}

// must runs kubectl ocm args on the hub, failing t when it fails, and
// returns its standard output.
func (fx *cliFixture) must(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := fx.kubectl(args...)
	if err != nil {
		t.Fatalf("kubectl ocm %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// dryRun checks that hub init --dry-run prints the install and changes nothing.
func (fx *cliFixture) dryRun(t *testing.T) {
	ctx, admin := fx.ctx, fx.admin
	out := fx.must(t, "hub", "init", "--dry-run", "-o", "yaml")
	for _, want := range []string{"kind: CustomResourceDefinition", "kind: Deployment", "name: cluster-manager", "kind: ClusterManager"} {
		if !strings.Contains(out, want) {
			t.Errorf("hub init --dry-run -o yaml lacks %q", want)
		}
	}
	if err := admin.Get(ctx, client.ObjectKey{Name: config.HubNamespace}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Fatalf("hub init --dry-run touched the cluster: namespace %s: %v", config.HubNamespace, err)
	}
}

// initWait checks that hub init --wait installs the hub and prints a join
// command that pins its CA.
func (fx *cliFixture) initWait(t *testing.T) {
	ctx, hubCluster := fx.ctx, fx.hub
	// clusteradm's --output-file and --output-join-command-file: the
	// manifests applied, as the dry run prints them, and a join script.
	manifests, script := filepath.Join(fx.dir, "hub.yaml"), filepath.Join(fx.dir, "join.sh")
	out := fx.must(t, "hub", "init", "--wait", "--timeout", "2m", "--output-file", manifests, "--output-join-command-file", script)
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
	fx.manifests, fx.script, fx.pin = manifests, script, pin
}

// outputFiles checks that hub init writes the manifests and a join script.
func (fx *cliFixture) outputFiles(t *testing.T) {
	ctx, hubCluster, manifests, script, pin := fx.ctx, fx.hub, fx.manifests, fx.script, fx.pin
	if data, err := os.ReadFile(manifests); err != nil || string(data) != fx.must(t, "hub", "init", "--dry-run", "-o", "yaml") {
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
}

// installedAs checks that hub init applies as the install field manager and
// the controller applies the ClusterManager.
func (fx *cliFixture) installedAs(t *testing.T) {
	ctx, admin := fx.ctx, fx.admin
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
}

// token checks that hub token prints the join information and binds a token to
// one cluster.
func (fx *cliFixture) token(t *testing.T) {
	ctx, admin, pin := fx.ctx, fx.admin, fx.pin
	var join hubcli.JoinInfo
	if err := json.Unmarshal([]byte(fx.must(t, "hub", "token", "--duration", "1h", "-o", "json")), &join); err != nil || join.HubToken == "" {
		t.Fatalf("hub token -o json: %v (%+v)", err, join)
	}
	if !slices.Equal(join.CACertHashes, []string{pin}) {
		t.Errorf("hub token -o json: caCertHashes %v, want [%s]", join.CACertHashes, pin)
	}
	if out := fx.must(t, "hub", "token", "--duration", "1h", "-o", "jsonpath={.caCertHashes[0]}"); out != pin {
		t.Errorf("hub token -o jsonpath={.caCertHashes[0]} printed %q, want %s", out, pin)
	}
	// The plain output holds the token once, inside the join command; the
	// bare token comes with -o jsonpath.
	if out := fx.must(t, "hub", "token", "--duration", "1h"); !strings.Contains(out, "kubectl ocm join --hub-token ") {
		t.Errorf("hub token printed no join command:\n%s", out)
	} else if tok := regexp.MustCompile(`--hub-token (\S+)`).FindStringSubmatch(out)[1]; strings.Count(out, tok) != 1 {
		t.Errorf("hub token printed its token %d times, want once (in the join command):\n%s", strings.Count(out, tok), out)
	}
	if out := fx.must(t, "hub", "token", "--duration", "1h", "-o", "jsonpath={.hubToken}"); strings.ContainsAny(out, " \n{}") || len(out) < 100 {
		t.Errorf("hub token -o jsonpath={.hubToken} printed %q, want the bare token", out)
	}
	// A token bound to c2 creates c2's bootstrap identity, which clean removes.
	if out := fx.must(t, "hub", "token", "--cluster-name", "c2", "-o", "yaml"); !strings.Contains(out, "clusterName: c2") {
		t.Errorf("hub token --cluster-name c2 -o yaml:\n%s", out)
	}
	// Its ServiceAccount holds the bootstrap role through its namespace's
	// group: no binding of its own.
	boundAccount := client.ObjectKey{Namespace: identity.ClusterBootstrapNamespace, Name: identity.ClusterBootstrapServiceAccount("c2")}
	if err := admin.Get(ctx, boundAccount, &corev1.ServiceAccount{}); err != nil {
		t.Errorf("hub token --cluster-name c2 created no ServiceAccount: %v", err)
	}
	if err := admin.Get(ctx, client.ObjectKey{Name: "open-cluster-management:bootstrap:c2"}, &rbacv1.ClusterRoleBinding{}); !apierrors.IsNotFound(err) {
		t.Errorf("hub token --cluster-name c2 bound the bootstrap role per cluster, as earlier releases did: %v, want NotFound", err)
	}
	fx.join, fx.boundAccount = join, boundAccount
}

// accept checks that accept approves the CSR of the bootstrap identity only
// and records who accepted.
func (fx *cliFixture) accept(t *testing.T) {
	ctx, admin, hubCluster, join := fx.ctx, fx.admin, fx.hub, fx.join
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

	out, errOut, err := fx.kubectl("accept", "--clusters", "c1")
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
}

// acceptJoined checks that accept --wait on a joined cluster returns at once.
func (fx *cliFixture) acceptJoined(t *testing.T) {
	ctx, admin := fx.ctx, fx.admin
	// c1's agent reports it joined, as the registration agent does; accept
	// --wait on the accepted and joined cluster has no request to wait for
	// and returns at once, where it used to wait out its whole timeout.
	reportJoined(ctx, t, admin, "c1")
	out, errOut, err := fx.kubectl("accept", "--clusters", "c1", "--wait", "--timeout", "2m")
	if err != nil || !strings.Contains(errOut, "Managed cluster c1 is already accepted: no certificate request to wait for") ||
		!strings.Contains(out, "Your managed cluster c1 has joined the Hub successfully.") {
		t.Errorf("accept --wait on the joined cluster c1: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
}

// revoke checks that hub token revoke stops the tokens printed so far.
func (fx *cliFixture) revoke(t *testing.T) {
	ctx, hubCluster, join := fx.ctx, fx.hub, fx.join
	// Revoking: the tokens printed so far stop working at once, the next
	// ones work; c1, registered, is not affected.
	boundJoin := hubcli.JoinInfo{}
	if err := json.Unmarshal([]byte(fx.must(t, "hub", "token", "--cluster-name", "c2", "-o", "json")), &boundJoin); err != nil {
		t.Fatal(err)
	}
	if out := fx.must(t, "hub", "token", "revoke", "--dry-run=server"); !strings.Contains(out, "would be deleted (server dry run)") {
		t.Errorf("hub token revoke --dry-run=server:\n%s", out)
	}
	expectTokenWorks(ctx, t, hubCluster, join.HubToken, true, "the shared token after a dry run")
	if out := fx.must(t, "delete", "token"); !strings.Contains(out, "deleted and created anew") {
		t.Errorf("delete token (hub token revoke):\n%s", out)
	}
	expectTokenWorks(ctx, t, hubCluster, join.HubToken, false, "the shared token after revoke")
	expectTokenWorks(ctx, t, hubCluster, boundJoin.HubToken, true, "c2's token after the shared ones were revoked")
	fx.must(t, "hub", "token", "revoke", "--cluster-name", "c2")
	expectTokenWorks(ctx, t, hubCluster, boundJoin.HubToken, false, "c2's token after revoke --cluster-name c2")
	if err := json.Unmarshal([]byte(fx.must(t, "hub", "token", "-o", "json")), &join); err != nil {
		t.Fatal(err)
	}
	expectTokenWorks(ctx, t, hubCluster, join.HubToken, true, "a shared token issued after revoke")
}

// getClusters checks that get clusters and hub status show c1.
func (fx *cliFixture) getClusters(t *testing.T) {
	ctx := fx.ctx
	out := fx.must(t, "get", "clusters")
	if !strings.Contains(out, "NAME") || !strings.Contains(out, "HUB ACCEPTED") || !strings.Contains(out, "MANAGED CLUSTER URLS") || !strings.Contains(out, "c1") {
		t.Errorf("get clusters:\n%s", out)
	}
	if out := fx.must(t, "get", "clusters", "-o", "name"); strings.TrimSpace(out) != "managedcluster.cluster.open-cluster-management.io/c1" {
		t.Errorf("get clusters -o name: %q", out)
	}
	framework.Eventually(ctx, t, pollTimeout, "c1 in set default in get clusters -o wide", func(context.Context) (bool, error) {
		out := fx.must(t, "get", "clusters", "-o", "wide", "--clusterset", "default")
		return strings.Contains(out, "CLUSTERSET") && strings.Contains(out, "default"), nil
	})
	if out := fx.must(t, "hub", "status"); !strings.Contains(out, "Hub controller:  available") || !strings.Contains(out, "1 total, 1 accepted") {
		t.Errorf("hub status:\n%s", out)
	}
}

// clean checks that hub clean removes the hub.
func (fx *cliFixture) clean(t *testing.T) {
	ctx, admin, boundAccount := fx.ctx, fx.admin, fx.boundAccount
	_, _, err := fx.kubectl("hub", "clean")
	assert.ErrorContains(t, err, "--force")
	out := fx.must(t, "hub", "clean", "--force", "--timeout", "2m")
	for _, want := range []string{"Deleted ManagedCluster c1", "Removed ClusterManager cluster-manager", "Removed Deployment open-cluster-management/cluster-manager"} {
		if !strings.Contains(out, want) {
			t.Errorf("hub clean --force output lacks %q:\n%s", want, out)
		}
	}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: config.HubNamespace, Name: "ocm-hub-controller"}, &appsv1.Deployment{}); !apierrors.IsNotFound(err) {
		t.Errorf("the hub controller Deployment after hub clean: %v, want NotFound", err)
	}
	framework.Eventually(ctx, t, pollTimeout, "hub namespace gone", func(ctx context.Context) (bool, error) {
		err := admin.Get(ctx, client.ObjectKey{Name: config.HubNamespace}, &corev1.Namespace{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	// c2's bootstrap identity goes with its namespace.
	framework.Eventually(ctx, t, pollTimeout, "c2's bootstrap ServiceAccount gone", func(ctx context.Context) (bool, error) {
		err := admin.Get(ctx, boundAccount, &corev1.ServiceAccount{})
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
