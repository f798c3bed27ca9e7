package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/servingcert"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// TestTLSProfileOnNodes sets TLS 1.3 only on the shared fleet's
// ClusterManager and checks, with openssl as a client no one here wrote,
// that the hub controller's Pod refuses a TLS 1.2 handshake and completes a
// TLS 1.3 one, and that the hub's API server still reaches the conversion
// webhook and the hub tunnel. A suite the operator does not know is refused
// with a condition and rolls nothing out. The fleet gets its profile back.
func TestTLSProfileOnNodes(t *testing.T) {
	const tls13 = "VersionTLS13"
	f := sharedFleet(t)
	hubCluster := f.env.Cluster("hub")
	hub := hubCluster.Client()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatalf("openssl is not installed: make node-deps installs it")
	}
	setTLSProfile(t, hub, &operatorv1.TLSProfile{MinTLSVersion: tls13})
	t.Cleanup(func() { setTLSProfile(t, hub, nil) })
	port := portForward(t, f.env.Kubeconfig(), "deployment/"+config.HubControllerDeployment, strconv.Itoa(conversion.Port), "--context", "hub", "--namespace", config.HubNamespace)
	addr := "127.0.0.1:" + port
	// The TLS 1.3 handshake verifies the server as the hub's API server
	// does: the CA of the webhook's Secret, the Service's name.
	secret := &corev1.Secret{}
	require.NoError(t, hub.Get(t.Context(), client.ObjectKey{Namespace: config.HubNamespace, Name: conversion.SecretName}, secret))
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	require.NoError(t, os.WriteFile(caFile, secret.Data[servingcert.CABundleKey], 0o600))
	name := conversion.ServiceName + "." + config.HubNamespace + ".svc"
	verify := []string{"-CAfile", caFile, "-verify_hostname", name, "-servername", name, "-verify_return_error"}

	t.Run("TLS 1.2 is refused and TLS 1.3 answered", func(t *testing.T) {
		out, err := opensslHandshake(t.Context(), addr, "-tls1_2")
		require.Error(t, err, "a TLS 1.2 handshake succeeded:\n%s", out)
		assert.Contains(t, out, "protocol version", "the refusal is the server's protocol_version alert")
		t.Logf("$ openssl s_client -connect %s -tls1_2\n%s", addr, out)
		out, err = opensslHandshake(t.Context(), addr, append([]string{"-tls1_3"}, verify...)...)
		require.NoError(t, err, out)
		assert.Contains(t, out, "Protocol version: TLSv1.3")
		assert.Contains(t, out, "Verification: OK")
	})

	t.Run("the hub's API server still reaches the hub controller", func(t *testing.T) {
		framework.Eventually(t.Context(), t, time.Minute, "the hub serving "+hubtunnel.GroupVersion+" through the hub controller", func(ctx context.Context) (bool, error) {
			_, err := hubCluster.Clientset().Discovery().ServerResourcesForGroupVersion(hubtunnel.GroupVersion)
			return err == nil, nil
		})
	})

	t.Run("a suite the operator does not know is refused and changes nothing", func(t *testing.T) {
		before := f.instance(t, "hub", config.HubNamespace, config.HubControllerDeployment)
		editClusterManager(t, hub, func(cm *operatorv1.ClusterManager) {
			cm.Spec.TLSProfile.CipherSuites = []string{"TLS_NOT_A_SUITE"}
		})
		cm := &operatorv1.ClusterManager{}
		framework.Eventually(t.Context(), t, time.Minute, "the ClusterManager naming the unknown suite", func(ctx context.Context) (bool, error) {
			if err := hub.Get(ctx, client.ObjectKey{Name: operatorv1.ClusterManagerName}, cm); err != nil {
				return false, err
			}
			c := meta.FindStatusCondition(cm.Status.Conditions, operatorv1.ConditionClusterManagerApplied)
			return c != nil && c.Reason == "InvalidTLSProfile" && strings.Contains(c.Message, "TLS_NOT_A_SUITE"), nil
		})
		setTLSProfile(t, hub, &operatorv1.TLSProfile{MinTLSVersion: tls13})
		assert.Equal(t, before, f.instance(t, "hub", config.HubNamespace, config.HubControllerDeployment), "the hub controller was rolled out")
		out, err := opensslHandshake(t.Context(), addr, "-tls1_2")
		require.Error(t, err, "TLS 1.2 answered after the refused change:\n%s", out)
	})
}

// setTLSProfile sets the ClusterManager's spec.tlsProfile to p (nil: none)
// and waits until the hub controller runs with it: its Deployment carries
// the flags, is rolled out, and its Pods are available.
func setTLSProfile(t *testing.T, hub client.Client, p *operatorv1.TLSProfile) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	editClusterManager(t, hub, func(cm *operatorv1.ClusterManager) { cm.Spec.TLSProfile = p })
	cm := &operatorv1.ClusterManager{}
	require.NoError(t, hub.Get(ctx, client.ObjectKey{Name: operatorv1.ClusterManagerName}, cm))
	require.Equal(t, p, cm.Spec.TLSProfile, "the API server kept spec.tlsProfile only if the installed CRD has it")
	want := "--" + tlsprofile.MinVersionFlag + "="
	if p != nil {
		want += p.MinTLSVersion
	}
	seen := "nothing read yet"
	framework.Eventually(ctx, t, 3*time.Minute, "the hub controller rolled out with "+want, func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: config.HubNamespace, Name: config.HubControllerDeployment}, d); err != nil {
			return false, fmt.Errorf("%w; before: %s", err, seen)
		}
		args := d.Spec.Template.Spec.Containers[0].Args
		has := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, want) })
		if p == nil {
			has = !has
		}
		st := deploystatus.Of(d)
		if has && st.Done {
			return true, nil
		}
		seen = fmt.Sprintf("args %q, %s", args, st)
		return false, errors.New(seen)
	})
}

// opensslHandshake runs `openssl s_client` against addr with args, such as
// -tls1_2, and returns what it printed; the error is non-nil when the
// handshake failed.
func opensslHandshake(ctx context.Context, addr string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "openssl", append([]string{"s_client", "-connect", addr, "-brief"}, args...)...)
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	return string(out), err
}
