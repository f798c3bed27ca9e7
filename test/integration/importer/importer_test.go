// Package importer_test tests the cluster importer (`ocm-controller
// importer`) as it ships: its Deployment, ServiceAccount, roles and
// admission policy rendered with the ClusterImporter gate, run by the
// component runner next to the hub controller and the imported cluster's
// Klusterlet operator and agent.
package importer_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusterinfo"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusternamespace"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	imp "github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/accept"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/importcmd"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
)

const pollTimeout = 2 * time.Minute

// TestImport imports cluster1 from the hub with an import Secret: a
// Secret that reaches the hub itself, one with a wrong token, one for a
// server nothing serves and one for a link-local address each end in a
// named condition and install nothing; then a Secret with cluster1's
// credential installs the Klusterlet, is deleted, and cluster1 becomes
// Available once accepted, with no command run on it.
func TestImport(t *testing.T) {
	fx := startImport(t)
	fx.refusedSecrets(t)
	t.Run("an import configuration the importer cannot apply installs nothing", fx.unusableConfig)
	t.Run("kubectl ocm import with the cluster's credential and values imports it", fx.importWithCLI)
	t.Run("a cluster whose agent registers under another name is not taken", fx.otherName)
	t.Run("a namespace editor cannot write an import Secret", fx.editorCannotWrite)
	t.Run("the importer's identity reaches no further", fx.importerIdentity)
}

// importFixture is what the steps of TestImport and
// TestImportFromClusterAPI share: a fleet whose hub runs the cluster
// importer and publishes its address, and cluster1, which the steps import.
type importFixture struct {
	ctx   context.Context
	f     *agenttest.Fleet
	hub   client.Client
	spoke *framework.Cluster
}

// startImport starts the fleet of TestImport, with the namespace and the
// accepted ManagedCluster of cluster1 on the hub.
func startImport(t *testing.T) *importFixture {
	ctx, f := agenttest.StartFleet(t, 8*time.Minute, agenttest.FleetOptions{
		Options: framework.Options{Clusters: []string{"cluster1"}},
		Hub: config.HubValues{Importer: &config.ImporterValues{
			Renderers: []string{config.ImportRendererAuto, config.ImportRendererFromConfigSecret}}},
		// The clusters' API servers listen on loopback here.
		RunnerArgs: map[string][]string{"ocm-importer": {"--allow-loopback-import"}},
	})
	hub, spoke := f.Hub.Client(), f.Env.Cluster("cluster1")
	info, err := clusterinfo.New(f.Hub.Server(), f.CA)
	if err != nil {
		t.Fatal(err)
	}
	if err := hub.Create(ctx, info); err != nil {
		t.Fatal(err)
	}
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}},
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster1"}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}},
	} {
		if err := hub.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return &importFixture{ctx: ctx, f: f, hub: hub, spoke: spoke}
}

// refusedSecrets checks, a step each, that import Secrets that reach the
// hub itself, hold a wrong token, name a server nothing serves or a
// link-local one, or run a command each end in a named condition and
// install nothing.
func (fx *importFixture) refusedSecrets(t *testing.T) {
	ctx, hub, spoke, f := fx.ctx, fx.hub, fx.spoke, fx.f
	for _, tc := range []struct {
		name         string
		data         map[string][]byte
		reason, says string
	}{
		{"the hub itself", kubeconfigData(t, f.Hub.RESTConfig()), imp.ReasonKubeConfigGetFailed, "reaches the hub itself"},
		{"a wrong token", map[string][]byte{imp.ServerKey: []byte(spoke.Server()), imp.TokenKey: []byte("not-a-token"), imp.CAKey: spoke.CAData()},
			imp.ReasonImportFailed, "401 Unauthorized"},
		{"a server nothing serves", map[string][]byte{imp.ServerKey: []byte(fmt.Sprintf("https://127.0.0.1:%d", closedPort(t))), imp.TokenKey: []byte("t")},
			imp.ReasonImportFailed, "connection refused"},
		{"a link-local server", map[string][]byte{imp.ServerKey: []byte("https://169.254.169.254:6443"), imp.TokenKey: []byte("t")},
			imp.ReasonImportFailed, "link-local"},
		{"an exec credential", execKubeconfig(t, spoke.Server()), imp.ReasonKubeConfigGetFailed, "uses exec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kit.WriteImportSecret(ctx, t, hub, "cluster1", tc.data)
			kit.WaitImportCondition(ctx, t, hub, "cluster1", metav1.ConditionFalse, tc.reason, tc.says)
			for c, namespaces := range map[*framework.Cluster][]string{
				f.Hub: {operatorv1.DefaultAgentNamespace},
				spoke: {operatorv1.DefaultAgentNamespace, operatorv1.OperatorNamespace},
			} {
				for _, ns := range namespaces {
					err := c.Client().Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
					if !apierrors.IsNotFound(err) {
						t.Errorf("namespace %s exists on %s (err %v): the import installed something", ns, c.Name, err)
					}
				}
			}
		})
	}
}

// unusableConfig checks that an import configuration the importer cannot apply
// installs nothing.
func (fx *importFixture) unusableConfig(t *testing.T) {
	ctx, hub, spoke := fx.ctx, fx.hub, fx.spoke
	if err := hub.Create(ctx, imp.NewConfigSecret("cluster1", []byte("klusterlet: {mode: Hosted}\n"))); err != nil {
		t.Fatal(err)
	}
	kit.WriteImportSecret(ctx, t, hub, "cluster1", kubeconfigData(t, spoke.RESTConfig()))
	kit.WaitImportCondition(ctx, t, hub, "cluster1", metav1.ConditionFalse, imp.ReasonConfigRendererFailed,
		`Secret cluster1/cluster-import-config key values.yaml: klusterlet.mode "Hosted"`)
	for _, ns := range []string{operatorv1.DefaultAgentNamespace, operatorv1.OperatorNamespace} {
		if err := spoke.Client().Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
			t.Errorf("namespace %s exists on cluster1 (err %v): the import installed something", ns, err)
		}
	}
	// render-auto comes first, but the import failed before it needed
	// a token: no bootstrap identity was made.
	err := hub.Get(ctx, client.ObjectKey{Namespace: identity.ClusterBootstrapNamespace, Name: identity.ClusterBootstrapServiceAccount("cluster1")}, &corev1.ServiceAccount{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("a bootstrap identity of cluster1 exists (err %v)", err)
	}
}

// importWithCLI checks that kubectl ocm import with the cluster's credential
// and values imports it.
func (fx *importFixture) importWithCLI(t *testing.T) {
	ctx, hub, spoke, f := fx.ctx, fx.hub, fx.spoke, fx.f
	if err := hub.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "cluster1", Name: imp.SecretName}}); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "cluster1.kubeconfig")
	if err := os.WriteFile(file, kit.ImportKubeconfig(t, spoke.RESTConfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	values := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(values, []byte("klusterlet:\n  externalServerURLs: [{url: \"https://cluster1.example.com:6443\"}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := runImport(ctx, t, f, "cluster1", "--managed-cluster-kubeconfig", file, "--values-file", values, "--accept", "--wait", "--timeout", "2m")
	for _, want := range []string{"Wrote the import Secret cluster1/" + imp.SecretName, "Imported cluster cluster1: Installed the Klusterlet"} {
		if !strings.Contains(out, want) {
			t.Errorf("import printed no %q:\n%s", want, out)
		}
	}
	kit.WaitImportCondition(ctx, t, hub, "cluster1", metav1.ConditionTrue, imp.ReasonImportSucceed, "Installed the Klusterlet")
	framework.Eventually(ctx, t, pollTimeout, "the import Secret deleted", func(ctx context.Context) (bool, error) {
		err := hub.Get(ctx, client.ObjectKey{Namespace: "cluster1", Name: imp.SecretName}, &corev1.Secret{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("the Secret is still there (err %v)", err)
	})
	framework.Eventually(ctx, t, pollTimeout, "cluster1 Available", func(ctx context.Context) (bool, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := hub.Get(ctx, client.ObjectKey{Name: "cluster1"}, mc); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionAvailable), nil
	})
	// The agent registered with the bootstrap identity of cluster1.
	sa := &corev1.ServiceAccount{}
	if err := hub.Get(ctx, client.ObjectKey{Namespace: identity.ClusterBootstrapNamespace, Name: identity.ClusterBootstrapServiceAccount("cluster1")}, sa); err != nil {
		t.Errorf("the bootstrap identity of cluster1: %v", err)
	}
	// The values of the import configuration reached the Klusterlet.
	k := &operatorv1.Klusterlet{}
	if err := spoke.Client().Get(ctx, client.ObjectKey{Name: operatorv1.KlusterletName}, k); err != nil {
		t.Fatal(err)
	}
	if len(k.Spec.ExternalServerURLs) != 1 || k.Spec.ExternalServerURLs[0].URL != "https://cluster1.example.com:6443" {
		t.Errorf("the Klusterlet's externalServerURLs are %+v, not the values'", k.Spec.ExternalServerURLs)
	}
}

// otherName checks that a cluster whose agent registers under another name is
// not taken.
func (fx *importFixture) otherName(t *testing.T) {
	ctx, hub, spoke := fx.ctx, fx.hub, fx.spoke
	// cluster1 runs its Klusterlet now: importing the same cluster as
	// cluster7 would turn cluster1's agent into cluster7's.
	for _, obj := range []client.Object{
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster7"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster7"}},
	} {
		if err := hub.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	kit.WriteImportSecret(ctx, t, hub, "cluster7", kubeconfigData(t, spoke.RESTConfig()))
	kit.WaitImportCondition(ctx, t, hub, "cluster7", metav1.ConditionFalse, imp.ReasonImportFailed, "already runs a Klusterlet registering as cluster1")
	k := &operatorv1.Klusterlet{}
	if err := spoke.Client().Get(ctx, client.ObjectKey{Name: operatorv1.KlusterletName}, k); err != nil || k.Spec.ClusterName != "cluster1" {
		t.Errorf("cluster1's Klusterlet registers as %q (err %v), want cluster1", k.Spec.ClusterName, err)
	}
	if err := hub.Delete(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "cluster7"}}); err != nil {
		t.Fatal(err)
	}
}

// editorCannotWrite checks that a namespace editor cannot write an import
// Secret.
func (fx *importFixture) editorCannotWrite(t *testing.T) {
	ctx, hub, spoke, f := fx.ctx, fx.hub, fx.spoke, fx.f
	// mallory may edit the namespaces of cluster1 and of cluster2, which
	// has no ManagedCluster: writing an import Secret in either is
	// refused, since it would hand a bootstrap token of that cluster to
	// a cluster of mallory's choosing.
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cluster2"}}); err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"cluster1", "cluster2"} {
		if err := hub.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "editor"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "mallory"}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := f.Hub.ConfigForUser("mallory")
	if err != nil {
		t.Fatal(err)
	}
	mallory, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"cluster1", "cluster2"} {
		// The import configuration chooses the hub address, images and
		// token the importer installs: as much a hub administrator's.
		for _, sec := range []*corev1.Secret{imp.NewSecret(ns, kit.ImportKubeconfig(t, spoke.RESTConfig()), false), imp.NewConfigSecret(ns, []byte("images: {registry: evil.example.com}"))} {
			framework.Eventually(ctx, t, pollTimeout, "mallory's Secret "+ns+"/"+sec.Name+" refused at admission", func(ctx context.Context) (bool, error) {
				err := mallory.Create(ctx, sec.DeepCopy())
				if apierrors.IsAlreadyExists(err) {
					// The import configuration of cluster1 exists:
					// changing it is refused too.
					err = mallory.Update(ctx, sec.DeepCopy())
				}
				switch {
				case err == nil:
					t.Fatalf("mallory wrote Secret %s/%s", ns, sec.Name)
				case apierrors.IsForbidden(err) && kit.ErrorSays(err, "needs the right to update ManagedCluster "+ns):
					return true, nil
				}
				return false, err
			})
		}
	}
	err = hub.Get(ctx, client.ObjectKey{Namespace: identity.ClusterBootstrapNamespace, Name: identity.ClusterBootstrapServiceAccount("cluster2")}, &corev1.ServiceAccount{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("a bootstrap identity of cluster2 exists (err %v)", err)
	}
}

// importerIdentity checks that the importer's identity reaches no further.
func (fx *importFixture) importerIdentity(t *testing.T) {
	ctx, hub, f := fx.ctx, fx.hub, fx.f
	cfg, err := f.Hub.ConfigForServiceAccount(ctx, config.HubNamespace, "ocm-importer", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cfg)
	// The operator's identity, as `hub init` creates it, next to the
	// bootstrap ServiceAccounts.
	operator := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: config.OperatorNamespace, Name: "cluster-manager"}}
	if err := hub.Create(ctx, operator); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}
	for what, err := range map[string]error{
		"a token of the operator's ServiceAccount": func() error {
			_, err := cs.CoreV1().ServiceAccounts(config.OperatorNamespace).CreateToken(ctx, "cluster-manager", tr, metav1.CreateOptions{})
			return err
		}(),
		"a token of the shared bootstrap ServiceAccount": func() error {
			_, err := cs.CoreV1().ServiceAccounts(config.OperatorNamespace).CreateToken(ctx, identity.BootstrapServiceAccount, tr, metav1.CreateOptions{})
			return err
		}(),
		// Every ServiceAccount of the cluster-bound namespace holds the
		// bootstrap role; the importer may make and issue tokens of the
		// cluster-bound ones only.
		"a token of the cluster-bound namespace's default ServiceAccount": func() error {
			_, err := cs.CoreV1().ServiceAccounts(identity.ClusterBootstrapNamespace).CreateToken(ctx, "default", tr, metav1.CreateOptions{})
			return err
		}(),
		"a ServiceAccount of the cluster-bound namespace not named after a cluster": func() error {
			_, err := cs.CoreV1().ServiceAccounts(identity.ClusterBootstrapNamespace).Create(ctx,
				&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "evil"}}, metav1.CreateOptions{})
			return err
		}(),
		"a cluster-bound bootstrap ServiceAccount in the operator's namespace, as earlier releases made": func() error {
			_, err := cs.CoreV1().ServiceAccounts(config.OperatorNamespace).Create(ctx,
				&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: identity.ClusterBootstrapServiceAccount("evil")}}, metav1.CreateOptions{})
			return err
		}(),
		"a binding of cluster-admin": func() error {
			_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management:bootstrap:evil"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: identity.ClusterBootstrapNamespace, Name: identity.ClusterBootstrapServiceAccount("evil")}},
			}, metav1.CreateOptions{})
			return err
		}(),
		"a binding of the bootstrap role to another ServiceAccount": func() error {
			_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "open-cluster-management:bootstrap:evil"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "open-cluster-management:bootstrap"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: "default", Name: "default"}},
			}, metav1.CreateOptions{})
			return err
		}(),
		"a Secret other than an import Secret": func() error {
			_, err := cs.CoreV1().Secrets(config.OperatorNamespace).List(ctx, metav1.ListOptions{})
			return err
		}(),
		// It adopts namespaces by annotating them, nothing more.
		"a Pod Security label on kube-system": func() error {
			_, err := cs.CoreV1().Namespaces().Patch(ctx, "kube-system", types.MergePatchType,
				[]byte(`{"metadata":{"labels":{"pod-security.kubernetes.io/enforce":"restricted"}}}`), metav1.PatchOptions{})
			return err
		}(),
		"another annotation on kube-system": func() error {
			_, err := cs.CoreV1().Namespaces().Patch(ctx, "kube-system", types.MergePatchType,
				[]byte(`{"metadata":{"annotations":{"`+clusternamespace.OwnerAnnotation+`":"x"}}}`), metav1.PatchOptions{})
			return err
		}(),
	} {
		if !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
			t.Errorf("the importer's identity may get %s (err %v), want it refused", what, err)
		}
	}
}

// kubeconfigData returns import Secret data with a kubeconfig of cfg.
func kubeconfigData(t *testing.T, cfg *rest.Config) map[string][]byte {
	t.Helper()
	return map[string][]byte{imp.KubeconfigKey: kit.ImportKubeconfig(t, cfg)}
}

// execKubeconfig returns import Secret data with a kubeconfig for server
// whose user runs a command.
func execKubeconfig(t *testing.T, server string) map[string][]byte {
	t.Helper()
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: ["-c", "id"]}}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, server)
	return map[string][]byte{imp.KubeconfigKey: []byte(kc)}
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// runImport runs `kubectl ocm import cluster args...` on the hub, failing
// t when it fails, and returns what it printed.
func runImport(ctx context.Context, t *testing.T, f *agenttest.Fleet, cluster string, args ...string) string {
	t.Helper()
	streams, _, out, errOut := genericiooptions.NewTestIOStreams()
	cmd := importcmd.NewCmdImport(f.Flags("hub"), streams, accept.Clusters(f.Flags("hub"), streams))
	cmd.SetArgs(append([]string{cluster}, args...))
	cmd.SetContext(ctx)
	if err := cmd.ExecuteContext(ctx); err != nil {
		t.Fatalf("import %s: %v\n%s%s", cluster, err, out, errOut)
	}
	return out.String() + errOut.String()
}
