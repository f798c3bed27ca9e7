package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	proxyagent "github.com/kubectl-ocm/kubectl-ocm/controllers/proxy/agent"
	multiclusterv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/multicluster/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// TestHubTunnel reaches cluster1 through the hub on the shared fleet, whose
// hub controller, hub tunnel and agents run as Pods: alice, a hub user with
// managedclusters/proxy on cluster1 and edit in one namespace of cluster1
// (bound there to ocm:hub:alice), writes a kubeconfig with `kubectl ocm
// proxy kubeconfig` and uses real kubectl through it: get, logs, exec (with
// stdin) and port-forward work, another namespace is refused by cluster1.
// Then a consumer that knows only a ClusterProfile and KEP-5339's provider
// file (the exec plugin `kubectl ocm credentials`) lists the Pods too. The
// tunnel comes back after the agent's, the hub tunnel's and the hub
// controller's Pods are killed.
func TestHubTunnel(t *testing.T) {
	f := sharedFleet(t)
	ctx := t.Context()
	hubCluster, c1 := f.env.Cluster("hub"), f.env.Cluster("cluster1")
	hub, managed := hubCluster.Client(), c1.Client()
	const ns, pod = "tunnel-e2e", "talker"

	require.NoError(t, managed.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	t.Cleanup(func() {
		_ = managed.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	require.NoError(t, managed.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](0), Containers: []corev1.Container{{
			Name: "talker", Image: "docker.io/library/busybox:latest",
			Command: []string{"sh", "-c", `mkdir /www; echo tunnel-ok > /www/index.html; (i=0; while true; do echo "line $i"; i=$((i+1)); sleep 1; done) & exec httpd -f -p 8080 -h /www`},
		}}},
	}))
	require.NoError(t, managed.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hub-alice"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: hubtunnel.MappedUser("alice")}},
	}))
	grantHubProxy(ctx, t, hub, "alice", "cluster1")
	framework.Eventually(t.Context(), t, 2*time.Minute, "Pod "+pod+" running on cluster1", func(ctx context.Context) (bool, error) {
		p := &corev1.Pod{}
		err := managed.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod}, p)
		return err == nil && p.Status.Phase == corev1.PodRunning, client.IgnoreNotFound(err)
	})

	dir := t.TempDir()
	aliceHub := filepath.Join(dir, "alice-hub.kubeconfig")
	cfg, err := hubCluster.ConfigForUser("alice", "devs")
	require.NoError(t, err)
	require.NoError(t, framework.WriteKubeconfig(aliceHub, "hub", cfg))
	via := filepath.Join(dir, "cluster1-via-hub.kubeconfig")
	var out string
	framework.Eventually(t.Context(), t, 2*time.Minute, "kubectl ocm proxy kubeconfig cluster1 to report that cluster1 answers", func(ctx context.Context) (bool, error) {
		out, err = runWith(ctx, aliceHub, bins.kubectlOCM, "proxy", "kubeconfig", "cluster1", "--namespace", ns, "--output-file", via)
		if err != nil || !strings.Contains(out, "cluster1 answers through the hub") {
			return false, fmt.Errorf("%v: %s", err, out)
		}
		return true, nil
	})
	t.Logf("$ kubectl ocm proxy kubeconfig cluster1 --namespace %s --output-file %s\n%s", ns, via, out)
	kubectl := kubectlWith(t, via)

	t.Run("get, logs, exec and port-forward through the hub", func(t *testing.T) {
		assert.Contains(t, kubectl("get", "pods"), pod)
		framework.Eventually(t.Context(), t, time.Minute, "the Pod's log through the hub", func(ctx context.Context) (bool, error) {
			out, err := runWith(ctx, via, kubectlBin(t), "logs", pod, "--tail", "2")
			return err == nil && strings.Contains(out, "line "), nil
		})
		assert.Equal(t, "tunnel-ok\n", kubectl("exec", pod, "--", "cat", "/www/index.html"))
		out, err := runWithInput(ctx, via, "from stdin\n", kubectlBin(t), "exec", "-i", pod, "--", "cat")
		require.NoError(t, err, out)
		assert.Equal(t, "from stdin\n", out)
		assert.Equal(t, "tunnel-ok\n", portForwardGet(t, via, pod))

		out, err = runWith(ctx, via, kubectlBin(t), "get", "pods", "-n", "kube-system")
		require.Error(t, err)
		assert.Contains(t, out, `User "ocm:hub:alice" cannot list resource "pods"`)
	})

	t.Run("a consumer built from a ClusterProfile alone", func(t *testing.T) {
		const profiles = "tunnel-profiles"
		require.NoError(t, hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: profiles}}))
		t.Cleanup(func() {
			_ = hub.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: profiles}})
		})
		f.ocm(t, "clusterset", "bind", "default", "--namespace", profiles, "--context", "hub")
		profile := &multiclusterv1alpha1.ClusterProfile{}
		framework.Eventually(t.Context(), t, time.Minute, "ClusterProfile cluster1 with the hub tunnel's access provider", func(ctx context.Context) (bool, error) {
			err := hub.Get(ctx, client.ObjectKey{Namespace: profiles, Name: "cluster1"}, profile)
			return err == nil && accessProvider(profile, hubtunnel.AccessProviderName) != nil, client.IgnoreNotFound(err)
		})
		// What a consumer has: the profile as JSON, and its provider file
		// mapping the provider's name to an exec plugin (KEP-5339). Its
		// identity on the hub is alice's, in a hub kubeconfig whose server
		// is the hub as the profile names it (the kubernetes Service): the
		// plugin hands a credential only to its own hub.
		raw, err := json.Marshal(profile)
		require.NoError(t, err)
		provider := accessProvider(profile, hubtunnel.AccessProviderName)
		profileHub, err := url.Parse(provider.Cluster.Server)
		require.NoError(t, err)
		aliceProfileHub := filepath.Join(dir, "alice-profile-hub.kubeconfig")
		aliceCfg := rest.CopyConfig(cfg)
		aliceCfg.Host, aliceCfg.CAData = profileHub.Scheme+"://"+profileHub.Host, provider.Cluster.CertificateAuthorityData
		require.NoError(t, framework.WriteKubeconfig(aliceProfileHub, "hub", aliceCfg))
		consume := func(t *testing.T, hubKubeconfig string) (string, error) {
			providers := fmt.Sprintf(`{"providers":[{"name":%q,"execConfig":{"apiVersion":%q,"command":%q,"args":["credentials"],"env":[{"name":"KUBECONFIG","value":%q}],"provideClusterInfo":true,"interactiveMode":"Never"}}]}`,
				hubtunnel.AccessProviderName, hubtunnel.ExecAPIVersion, bins.kubectlOCM, hubKubeconfig)
			consumer := filepath.Join(t.TempDir(), "consumer.kubeconfig")
			require.NoError(t, consumerKubeconfig(raw, []byte(providers), consumer))
			return runWith(ctx, consumer, kubectlBin(t), "get", "pods", "-n", ns, "-o", "name")
		}
		out, err := consume(t, aliceProfileHub)
		require.NoError(t, err, out)
		assert.Equal(t, "pod/"+pod+"\n", out)
		if hubURL, err := url.Parse(hubCluster.Server()); err == nil && hubURL.Host != profileHub.Host {
			// alice's own hub kubeconfig names the hub by another address:
			// the plugin cannot tell it is the same hub, and refuses.
			out, err = consume(t, aliceHub)
			require.Error(t, err, out)
			assert.Contains(t, out, "refusing to hand the credential for hub "+hubURL.Scheme+"://"+hubURL.Host)
			assert.Contains(t, out, "it is not that hub")
		}
	})

	t.Run("a compromised cluster's 64 MiB tunnel message leaves the hub tunnel up", func(t *testing.T) {
		// The attacker holds cluster1's agent credential, as anyone who
		// controls cluster1 does.
		sec := &corev1.Secret{}
		require.NoError(t, managed.Get(ctx, client.ObjectKey{Namespace: config.AgentNamespace, Name: operatorv1.HubKubeConfigSecret}, sec))
		stolen := &rest.Config{Host: hubCluster.Server(), TLSClientConfig: rest.TLSClientConfig{
			CertData: sec.Data[kubeconfig.TLSCertKey], KeyData: sec.Data[kubeconfig.TLSKeyKey], CAData: hubCluster.CAData(),
		}}
		attachURL, err := proxyagent.AttachURL(hubCluster.Server(), "cluster1")
		require.NoError(t, err)
		before := f.instance(t, "hub", config.HubNamespace, config.HubTunnelDeployment)
		conn, err := framework.AttachTunnelAs(ctx, stolen, attachURL)
		require.NoError(t, err)
		defer func() { _ = conn.Close() }()
		sent, err := framework.SendHugeTunnelMessage(conn, 64<<20)
		require.Error(t, err, "the hub tunnel read the whole 64 MiB message")
		t.Logf("the hub tunnel closed the attacker's tunnel after %.1f MiB of a 64 MiB message", float64(sent)/(1<<20))
		// cluster1's own agent attaches again, and nothing restarted.
		framework.Eventually(t.Context(), t, 3*time.Minute, "cluster1 answering through the hub after the attack", func(ctx context.Context) (bool, error) {
			_, err := runWith(ctx, via, kubectlBin(t), "get", "pod", pod, "-o", "name")
			return err == nil, nil
		})
		after := f.instance(t, "hub", config.HubNamespace, config.HubTunnelDeployment)
		assert.Equal(t, before, after, "the hub tunnel restarted during the attack")
	})

	t.Run("the tunnel comes back after the agent, the hub tunnel and the hub controller restart", func(t *testing.T) {
		for _, target := range []struct{ cluster, namespace, name string }{
			{"cluster1", config.AgentNamespace, config.AgentDeployment},
			{"hub", config.HubNamespace, config.HubTunnelDeployment},
			{"hub", config.HubNamespace, config.HubControllerDeployment},
		} {
			killed := f.kill(t, target.cluster, target.namespace, target.name)
			start := time.Now()
			framework.Eventually(t.Context(), t, 3*time.Minute, "cluster1 answering through the hub after "+target.name+" was killed", func(ctx context.Context) (bool, error) {
				_, err := runWith(ctx, via, kubectlBin(t), "get", "pod", pod, "-o", "name")
				return err == nil, nil
			})
			t.Logf("%s killed: cluster1 answered through the hub again after %s", target.name, time.Since(start).Round(100*time.Millisecond))
			f.readyAgain(t, target.cluster, target.namespace, target.name, killed)
		}
	})
}

// grantHubProxy lets user use managedclusters/proxy of cluster on the hub.
func grantHubProxy(ctx context.Context, t *testing.T, hub client.Client, user, cluster string) {
	t.Helper()
	name := "tunnel-e2e-" + user
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{hubtunnel.Group}, Resources: []string{hubtunnel.Resource + "/" + hubtunnel.ProxySubresource},
			ResourceNames: []string{cluster}, Verbs: []string{"get", "create", "update", "patch", "delete"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	require.NoError(t, hub.Create(ctx, role))
	require.NoError(t, hub.Create(ctx, binding))
	t.Cleanup(func() {
		_ = hub.Delete(context.Background(), binding)
		_ = hub.Delete(context.Background(), role)
	})
}

// accessProvider returns the profile's access provider name, nil without one.
func accessProvider(p *multiclusterv1alpha1.ClusterProfile, name string) *multiclusterv1alpha1.AccessProvider {
	for i := range p.Status.AccessProviders {
		if p.Status.AccessProviders[i].Name == name {
			return &p.Status.AccessProviders[i]
		}
	}
	return nil
}

// consumerKubeconfig writes to path the kubeconfig a ClusterProfile consumer
// builds from only the profile's JSON and a KEP-5339 provider file: the
// first access provider the file names gives the cluster entry (server, CA,
// extensions), the file's execConfig the user. It reads the JSON with
// generic maps, as a consumer that does not share this project's types.
func consumerKubeconfig(profileJSON, providersJSON []byte, path string) error {
	var profile struct {
		Status struct {
			AccessProviders []struct {
				Name    string          `json:"name"`
				Cluster json.RawMessage `json:"cluster"`
			} `json:"accessProviders"`
		} `json:"status"`
	}
	if err := json.Unmarshal(profileJSON, &profile); err != nil {
		return err
	}
	var file struct {
		Providers []struct {
			Name       string          `json:"name"`
			ExecConfig json.RawMessage `json:"execConfig"`
		} `json:"providers"`
	}
	if err := json.Unmarshal(providersJSON, &file); err != nil {
		return err
	}
	for _, p := range file.Providers {
		for _, a := range profile.Status.AccessProviders {
			if a.Name != p.Name {
				continue
			}
			// A kubeconfig's cluster entry has the access provider's
			// field names; the exec configuration is a user's "exec".
			kubeconfig := fmt.Sprintf(`{"apiVersion":"v1","kind":"Config","clusters":[{"name":"c","cluster":%s}],"users":[{"name":"u","user":{"exec":%s}}],"contexts":[{"name":"c","context":{"cluster":"c","user":"u"}}],"current-context":"c"}`,
				a.Cluster, p.ExecConfig)
			cfg, err := clientcmd.Load([]byte(kubeconfig))
			if err != nil {
				return fmt.Errorf("the kubeconfig built from access provider %s: %w", a.Name, err)
			}
			return clientcmd.WriteToFile(*cfg, path)
		}
	}
	return fmt.Errorf("no access provider of the profile is in the provider file")
}

func kubectlBin(t *testing.T) string {
	t.Helper()
	dir, err := framework.KubeBinDir()
	require.NoError(t, err)
	return filepath.Join(dir, "kubectl")
}

// kubectlWith returns a function running real kubectl with kubeconfig,
// failing t when it fails.
func kubectlWith(t *testing.T, kubeconfig string) func(args ...string) string {
	return func(args ...string) string {
		t.Helper()
		out, err := runWith(t.Context(), kubeconfig, kubectlBin(t), args...)
		t.Logf("$ kubectl %s\n%s", strings.Join(args, " "), out)
		require.NoError(t, err, out)
		return out
	}
}

// runWith runs bin args with KUBECONFIG=kubeconfig and returns its output
// (stdout then stderr).
func runWith(ctx context.Context, kubeconfig, bin string, args ...string) (string, error) {
	return runWithInput(ctx, kubeconfig, "", bin, args...)
}

func runWithInput(ctx context.Context, kubeconfig, input, bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdin = strings.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String() + stderr.String(), err
}

// portForwardGet runs `kubectl port-forward pod :8080` with kubeconfig and
// returns the body of GET / through the forwarded port.
func portForwardGet(t *testing.T, kubeconfig, pod string) string {
	t.Helper()
	port := portForward(t, kubeconfig, "pod/"+pod, "8080")
	resp, err := http.Get("http://127.0.0.1:" + port + "/")
	require.NoError(t, err)
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

// portForward runs `kubectl port-forward target :remotePort` (with
// kubectlArgs before it, such as --context) with kubeconfig until the test
// ends, and returns the local port.
func portForward(t *testing.T, kubeconfig, target, remotePort string, kubectlArgs ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	args := append(append([]string{}, kubectlArgs...), "port-forward", target, ":"+remotePort)
	cmd := exec.CommandContext(ctx, kubectlBin(t), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	// Read only after Wait, which ends the copying into it.
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	lines := make(chan string)
	go func() {
		defer close(lines)
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			lines <- scanner.Text()
		}
	}()
	forwarding := regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+)`)
	deadline := time.After(time.Minute)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				_ = cmd.Wait()
				t.Fatalf("kubectl port-forward %s ended before it printed a local port: %s", target, stderr.String())
			}
			if m := forwarding.FindStringSubmatch(line); m != nil {
				go func() {
					for range lines {
					}
				}()
				return m[1]
			}
		case <-deadline:
			cancel()
			_ = cmd.Wait()
			t.Fatalf("kubectl port-forward %s printed no local port within a minute: %s", target, stderr.String())
		}
	}
}
