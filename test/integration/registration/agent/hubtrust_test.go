package agent_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusterinfo"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/agenttest"
)

// TestHubTrustIgnoresNamespaceEditors shows that an agent's trust in its hub
// follows only the CA bundle the hub's administrators publish
// (kube-public/kube-root-ca.crt), never the copy in its cluster namespace,
// which a user bound to the built-in edit role there can write. With the
// hub's controller manager stopped, so that nothing reverts either
// ConfigMap, such an editor adds a CA of its own to cluster1's copy, then
// the administrator adds a new CA to kube-public's: the agent comes to trust
// the administrator's CA, and no version of its hub or bootstrap kubeconfig
// Secret since before the editor's write ever trusted the editor's CA.
func TestHubTrustIgnoresNamespaceEditors(t *testing.T) {
	t.Parallel() // a fleet of its own
	ctx, f := agenttest.StartFleet(t, 6*time.Minute, agenttest.FleetOptions{Options: framework.Options{Clusters: []string{clusterName}}})
	hubC, spoke, hubCA := f.Hub, f.Env.Cluster(clusterName), f.CA
	f.Join(ctx, t, clusterName)
	mustAccept(ctx, t, f.Flags("hub"), clusterName)
	framework.Eventually(ctx, t, pollTimeout, clusterName+" Available", func(ctx context.Context) (bool, error) {
		return conditionTrue(ctx, hubC.Client(), clusterv1.ManagedClusterConditionAvailable)
	})
	framework.WaitAgentTrusts(ctx, t, spoke, hubCA, pollTimeout)

	t.Run("the agent's identity reads the hub's CA bundle in kube-public only", func(t *testing.T) {
		sec, err := hubSecret(ctx, spoke.Client())
		if err != nil {
			t.Fatal(err)
		}
		info, err := kubeconfig.FromSecret(sec.Data)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := info.RESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		agent, err := client.New(cfg, client.Options{})
		if err != nil {
			t.Fatal(err)
		}
		bundle := client.ObjectKey{Namespace: certs.HubCABundleNamespace, Name: certs.HubCABundleConfigMap}
		framework.Eventually(ctx, t, pollTimeout, "the agent reading "+bundle.String(), func(ctx context.Context) (bool, error) {
			return true, agent.Get(ctx, bundle, &corev1.ConfigMap{})
		})
		for what, err := range map[string]error{
			"get " + clusterName + "/" + certs.HubCABundleConfigMap: agent.Get(ctx, client.ObjectKey{Namespace: clusterName, Name: certs.HubCABundleConfigMap}, &corev1.ConfigMap{}),
			"list ConfigMaps of " + clusterName:                     agent.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(clusterName)),
			"get another ConfigMap of kube-public":                  agent.Get(ctx, client.ObjectKey{Namespace: certs.HubCABundleNamespace, Name: clusterinfo.Name}, &corev1.ConfigMap{}),
		} {
			if !apierrors.IsForbidden(err) {
				t.Errorf("the agent's identity may %s (err %v), want forbidden", what, err)
			}
		}
	})

	t.Run("a namespace editor's CA is never trusted", func(t *testing.T) {
		const editor = "mallory"
		err := hubC.Client().Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: clusterName, Name: "editor"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: editor}},
		})
		if err != nil {
			t.Fatal(err)
		}
		editorCfg, err := hubC.ConfigForUser(editor)
		if err != nil {
			t.Fatal(err)
		}
		asEditor, err := kubernetes.NewForConfig(editorCfg)
		if err != nil {
			t.Fatal(err)
		}
		framework.Eventually(ctx, t, pollTimeout, editor+" reading "+clusterName+"/"+certs.HubCABundleConfigMap, func(ctx context.Context) (bool, error) {
			_, err := asEditor.CoreV1().ConfigMaps(clusterName).Get(ctx, certs.HubCABundleConfigMap, metav1.GetOptions{})
			return err == nil, err
		})
		attackerCA, genuineCA := newCA(t, "attacker"), newCA(t, "hub-next")
		history := watchTrust(ctx, t, spoke)

		// Nothing reverts either ConfigMap from here on.
		if err := hubC.StopControllerManager(); err != nil {
			t.Fatal(err)
		}
		setBundle(ctx, t, asEditor, clusterName, slices.Concat(hubCA, attackerCA))
		setBundle(ctx, t, hubC.Clientset(), certs.HubCABundleNamespace, slices.Concat(hubCA, genuineCA))

		attacker, want := caIDs(t, attackerCA), certs.HubCAsClaimValue(slices.Concat(hubCA, genuineCA))
		framework.Eventually(ctx, t, pollTimeout, "the agent trusting the CA added to kube-public", func(ctx context.Context) (bool, error) {
			for _, name := range trustSecrets {
				got, err := trustOf(ctx, spoke, name)
				if err != nil {
					return false, err
				}
				if strings.Contains(got, attacker) {
					t.Fatalf("Secret %s trusts the CA a namespace editor wrote into %s/%s: %s", name, clusterName, certs.HubCABundleConfigMap, got)
				}
				if got != want {
					return false, fmt.Errorf("Secret %s trusts %s, want %s", name, got, want)
				}
			}
			return true, nil
		})
		for _, v := range history.upToNow(ctx, t) {
			if strings.Contains(v, attacker) {
				t.Errorf("a version of the agent's trust held the namespace editor's CA: %s", v)
			}
		}
	})

	t.Run("the published bundle restored: the agent drops the CA it no longer lists", func(t *testing.T) {
		// The controller manager, stopped above, writes both ConfigMaps back
		// from its --root-ca-file: the hub CA alone.
		if err := hubC.StartControllerManager(ctx); err != nil {
			t.Fatal(err)
		}
		want := certs.HubCAsClaimValue(hubCA)
		framework.Eventually(ctx, t, pollTimeout, "the controller manager restoring "+certs.HubCABundleNamespace+"/"+certs.HubCABundleConfigMap, func(ctx context.Context) (bool, error) {
			cm, err := hubC.Clientset().CoreV1().ConfigMaps(certs.HubCABundleNamespace).Get(ctx, certs.HubCABundleConfigMap, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if got := certs.HubCAsClaimValue([]byte(cm.Data[certs.HubCABundleKey])); got != want {
				return false, fmt.Errorf("the bundle lists %s, want %s", got, want)
			}
			return true, nil
		})
		framework.WaitAgentTrusts(ctx, t, spoke, hubCA, pollTimeout)
	})
}

// trustSecrets are the agent's Secrets whose kubeconfigs name the CAs it
// trusts for the hub.
var trustSecrets = []string{operatorv1.HubKubeConfigSecret, operatorv1.BootstrapHubKubeConfigSecret}

// trustOf returns the CAs Secret name of the agent on c trusts for the hub,
// as certs.HubCAsClaimValue lists them.
func trustOf(ctx context.Context, c *framework.Cluster, name string) (string, error) {
	sec := &corev1.Secret{}
	if err := c.Client().Get(ctx, client.ObjectKey{Namespace: agentNS, Name: name}, sec); err != nil {
		return "", err
	}
	return secretTrust(sec)
}

// secretTrust returns the CAs the kubeconfig of sec trusts.
func secretTrust(sec *corev1.Secret) (string, error) {
	info, err := kubeconfig.FromSecret(sec.Data)
	if err != nil {
		return "", fmt.Errorf("Secret %s: %w", sec.Name, err)
	}
	return certs.HubCAsClaimValue(info.CAData), nil
}

// trustHistory is every version of the agent's trust Secrets written since
// it started watching.
type trustHistory struct {
	c       *framework.Cluster
	w       watch.Interface
	started map[string]string
}

// watchTrust starts recording every version of the agent's trust Secrets on
// c from now on.
func watchTrust(ctx context.Context, t *testing.T, c *framework.Cluster) *trustHistory {
	t.Helper()
	list, err := c.Clientset().CoreV1().Secrets(agentNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := &trustHistory{c: c, started: map[string]string{}}
	for _, s := range list.Items {
		h.started[s.Name] = s.ResourceVersion
	}
	if h.w, err = c.Clientset().CoreV1().Secrets(agentNS).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.w.Stop)
	return h
}

// upToNow returns the trust of every version of the agent's trust Secrets
// written since watchTrust, up to and including their current versions.
func (h *trustHistory) upToNow(ctx context.Context, t *testing.T) []string {
	t.Helper()
	pending := map[string]string{}
	for _, name := range trustSecrets {
		sec := &corev1.Secret{}
		if err := h.c.Client().Get(ctx, client.ObjectKey{Namespace: agentNS, Name: name}, sec); err != nil {
			t.Fatal(err)
		}
		if sec.ResourceVersion != h.started[name] {
			pending[name] = sec.ResourceVersion
		}
	}
	var seen []string
	deadline := time.After(pollTimeout)
	for len(pending) > 0 {
		select {
		case ev, ok := <-h.w.ResultChan():
			if !ok {
				t.Fatalf("the watch of the agent's Secrets ended before their versions %v", pending)
			}
			sec, isSecret := ev.Object.(*corev1.Secret)
			if !isSecret {
				t.Fatalf("the watch of the agent's Secrets: %s %v", ev.Type, ev.Object)
			}
			if !slices.Contains(trustSecrets, sec.Name) || ev.Type == watch.Deleted {
				continue
			}
			got, err := secretTrust(sec)
			if err != nil {
				t.Fatal(err)
			}
			seen = append(seen, sec.Name+"@"+sec.ResourceVersion+": "+got)
			if pending[sec.Name] == sec.ResourceVersion {
				delete(pending, sec.Name)
			}
		case <-deadline:
			t.Fatalf("the watch of the agent's Secrets did not reach their versions %v", pending)
		}
	}
	return seen
}

// setBundle sets the hub's CA bundle in namespace to bundle, as cs.
func setBundle(ctx context.Context, t *testing.T, cs kubernetes.Interface, namespace string, bundle []byte) {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(namespace).Get(ctx, certs.HubCABundleConfigMap, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data[certs.HubCABundleKey] = string(bundle)
	if _, err := cs.CoreV1().ConfigMaps(namespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("write %s/%s: %v", namespace, certs.HubCABundleConfigMap, err)
	}
}

// newCA returns the PEM certificate of a new self-signed CA named name.
func newCA(t *testing.T, name string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: name}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
}

// caIDs returns the claim value of bundle (certs.HubCAsClaimValue).
func caIDs(t *testing.T, bundle []byte) string {
	t.Helper()
	v := certs.HubCAsClaimValue(bundle)
	if v == "" {
		t.Fatal("no CA in the bundle")
	}
	return v
}
