package hub

import (
	"bytes"
	"context"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	certutil "k8s.io/client-go/util/cert"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// TestInitValidate checks the flags of init as the command does, through
// Complete and Validate.
func TestInitValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*InitOptions)
		wantErr string
	}{
		{"defaults", func(*InitOptions) {}, ""},
		{"dry run yaml", func(o *InitOptions) { o.DryRun, o.Output = "client", "yaml" }, ""},
		{"server dry run", func(o *InitOptions) { o.DryRun = "server" }, ""},
		{"server dry run with output", func(o *InitOptions) { o.DryRun, o.Output = "server", "yaml" }, "--output"},
		{"unknown dry run", func(o *InitOptions) { o.DryRun = "true" }, "--dry-run"},
		{"bad cluster name", func(o *InitOptions) { o.ClusterName = "Bad_Name" }, "--cluster-name"},
		{"join info as yaml", func(o *InitOptions) { o.Output = "yaml" }, ""},
		{"table without dry run", func(o *InitOptions) { o.Output = "wide" }, "--output"},
		{"table with dry run", func(o *InitOptions) { o.DryRun, o.Output = "client", "wide" }, "--output"},
		{"wait with dry run", func(o *InitOptions) { o.DryRun, o.Wait = "client", true }, "--wait"},
		{"manifests file with dry run", func(o *InitOptions) { o.DryRun, o.OutputFile = "server", "hub.yaml" }, ""},
		{"join command file", func(o *InitOptions) { o.OutputJoinCommandFile = "join.sh" }, ""},
		{"join command file with dry run", func(o *InitOptions) { o.DryRun, o.OutputJoinCommandFile = "client", "join.sh" }, "--output-join-command-file cannot be combined with --dry-run"},
		{"short token", func(o *InitOptions) { o.TokenDuration = time.Minute }, "--duration"},
		{"image", func(o *InitOptions) { o.Image = "example.com/ocm-controller:v1" }, ""},
		{"image registry", func(o *InitOptions) { o.ImageRegistry = "registry.example.com/mirror" }, ""},
		{"invalid image", func(o *InitOptions) { o.Image = "example.com/OCM:v1" }, "--image"},
		{"invalid image registry", func(o *InitOptions) { o.ImageRegistry = "quay.io/org:v1" }, "--image-registry"},
		{"TLS profile", func(o *InitOptions) {
			o.TLSMinVersion, o.TLSCipherSuites = "VersionTLS12", []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}
		}, ""},
		{"unknown TLS version", func(o *InitOptions) { o.TLSMinVersion = "TLS13" }, `--tls-min-version: "TLS13" is not a TLS version`},
		{"TLS version below 1.2", func(o *InitOptions) { o.TLSMinVersion = "TLSv1.0" }, "spec.tlsProfile takes VersionTLS12 or VersionTLS13"},
		{"unknown cipher suite", func(o *InitOptions) { o.TLSCipherSuites = []string{"TLS_NO_SUCH_SUITE"} }, `--tls-cipher-suites: unknown cipher suite "TLS_NO_SUCH_SUITE"`},
		{"short leader election", func(o *InitOptions) {
			o.LeaderElection.LeaseDuration, o.LeaderElection.RenewDeadline, o.LeaderElection.RetryPeriod = 6*time.Second, 4*time.Second, time.Second
		}, ""},
		{"retry period within the renew deadline's jitter", func(o *InitOptions) {
			o.LeaderElection.RenewDeadline, o.LeaderElection.RetryPeriod = 4*time.Second, 4*time.Second
		}, "--leader-elect-renew-deadline 4s must be longer than 1.2 times --leader-elect-retry-period 4s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewInitOptions(nil, genericiooptions.NewTestIOStreamsDiscard())
			o.Timeout, o.TokenDuration = time.Minute, time.Hour
			tt.mutate(o)
			err := cli.CompleteValidate(o, nil, nil)
			if tt.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

// TestInitImage checks which image init deploys: the image of its own
// version in --image-registry, unless --image names one.
func TestInitImage(t *testing.T) {
	tag := version.ImageTag(version.Version)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"default", nil, config.DefaultImageRegistry + "/ocm-controller:" + tag},
		{"registry", []string{"--image-registry", "registry.example.com/mirror"}, "registry.example.com/mirror/ocm-controller:" + tag},
		{"image wins", []string{"--image-registry", "registry.example.com/mirror", "--image", "example.com/ocm-controller:v1"}, "example.com/ocm-controller:v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			flags := genericclioptions.NewConfigFlags(false)
			nowhere := "/nonexistent/kubeconfig"
			flags.KubeConfig = &nowhere
			cmd := NewCmdHub(flags, streams)
			cmd.SetArgs(append([]string{"init", "--dry-run", "-o", "yaml"}, tt.args...))
			if err := cmd.ExecuteContext(context.Background()); err != nil {
				t.Fatalf("hub init --dry-run: %v", err)
			}
			if got := strings.Count(out.String(), "image: "+tt.want+"\n"); got != 1 {
				t.Errorf("image %s appears %d times in the manifests, want once", tt.want, got)
			}
			if strings.Contains(out.String(), ":latest") {
				t.Error("the manifests name a latest tag")
			}
		})
	}
}

// TestInitDryRun checks that `hub init --dry-run -o yaml` prints the
// ClusterManager operator and the ClusterManager, every
// object labeled part-of kubectl-ocm, without any cluster: the
// kubeconfig points nowhere.
func TestInitDryRun(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	flags := genericclioptions.NewConfigFlags(false)
	nowhere := "/nonexistent/kubeconfig"
	flags.KubeConfig = &nowhere
	cmd := NewCmdHub(flags, streams)
	cmd.SetArgs([]string{"init", "--dry-run", "-o", "yaml", "--image", "example.com/ocm-controller:v1", "--auto-approved-csr-identities", "system:bootstrap:abc"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("hub init --dry-run: %v", err)
	}
	want, err := config.HubOperatorObjects(config.HubOperatorValues{})
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out.String(), "\n---\n")
	if len(docs) != len(want) {
		t.Fatalf("printed %d documents, want %d", len(docs), len(want))
	}
	for _, doc := range docs {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name   string            `json:"name"`
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("decode printed document: %v", err)
		}
		if obj.Kind != "CustomResourceDefinition" && obj.Metadata.Labels[apply.PartOfLabelKey] != apply.PartOfLabelValue {
			t.Errorf("%s %s lacks label %s=%s", obj.Kind, obj.Metadata.Name, apply.PartOfLabelKey, apply.PartOfLabelValue)
		}
	}
	for _, s := range []string{"image: example.com/ocm-controller:v1", "- system:bootstrap:abc", "name: POD_NAMESPACE"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("dry run output lacks %q", s)
		}
	}
}

// TestInitOutputFile checks that --output-file writes what --dry-run=client
// -o yaml prints, with the cluster's bootstrap identity for --cluster-name,
// while stdout keeps its own format.
func TestInitOutputFile(t *testing.T) {
	run := func(args ...string) string {
		t.Helper()
		streams, _, out, _ := genericiooptions.NewTestIOStreams()
		flags := genericclioptions.NewConfigFlags(false)
		nowhere := "/nonexistent/kubeconfig"
		flags.KubeConfig = &nowhere
		cmd := NewCmdHub(flags, streams)
		cmd.SetArgs(append([]string{"init", "--dry-run", "--cluster-name", "cluster1"}, args...))
		if err := cmd.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("hub init %v: %v", args, err)
		}
		return out.String()
	}
	path := filepath.Join(t.TempDir(), "hub.yaml")
	lines := run("--output-file", path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := run("-o", "yaml"); string(data) != want {
		t.Errorf("--output-file wrote\n%s\nwant what -o yaml prints:\n%s", data, want)
	}
	if !strings.Contains(string(data), "name: "+identity.ClusterBootstrapServiceAccount("cluster1")) {
		t.Errorf("--output-file lacks the bootstrap ServiceAccount of cluster1")
	}
	if !strings.Contains(lines, "ClusterManager cluster-manager (dry run)") {
		t.Errorf("stdout with --output-file is not the dry run's summary:\n%s", lines)
	}
}

// TestJoinScript runs the scripts --output-join-command-file writes with a
// kubectl that prints its arguments.
func TestJoinScript(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte("#!/bin/sh\necho \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	expires := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	shared := JoinInfo{HubToken: "tok.en", HubAPIServer: "https://hub:6443", ExpirationTimestamp: expires}
	bound := shared
	bound.ClusterName = "cluster1"
	pinned := shared
	pinned.CACertHashes = []string{"sha256:" + strings.Repeat("ab", 32), "sha256:" + strings.Repeat("cd", 32)}
	tests := []struct {
		name    string
		join    JoinInfo
		args    []string
		want    string
		wantErr string
	}{
		{"shared", shared, []string{"cluster2", "--context", "c2", "--wait"},
			"ocm join --hub-token tok.en --hub-apiserver https://hub:6443 --cluster-name cluster2 --context c2 --wait\n", ""},
		{"shared without a name", shared, nil, "", "usage: sh"},
		{"pinned", pinned, []string{"cluster2"},
			"ocm join --hub-token tok.en --hub-apiserver https://hub:6443 --ca-cert-hash sha256:" + strings.Repeat("ab", 32) + " --ca-cert-hash sha256:" + strings.Repeat("cd", 32) + " --cluster-name cluster2\n", ""},
		{"bound", bound, []string{"--context", "c1"},
			"ocm join --hub-token tok.en --hub-apiserver https://hub:6443 --cluster-name cluster1 --context c1\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := joinScript(tt.join)
			if !strings.Contains(script, "expires at 2026-01-02T03:04:05Z") {
				t.Errorf("script does not say when the token expires:\n%s", script)
			}
			path := filepath.Join(dir, tt.name+".sh")
			if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr strings.Builder
			cmd := exec.Command("sh", append([]string{path}, tt.args...)...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(stderr.String(), tt.wantErr) {
					t.Errorf("err = %v, stderr %q; want a failure saying %q", err, stderr.String(), tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("sh %s: %v\n%s", path, err, stderr.String())
			}
			if stdout.String() != tt.want {
				t.Errorf("kubectl ran with %q, want %q", stdout.String(), tt.want)
			}
		})
	}
}

func TestTokenAndCleanValidate(t *testing.T) {
	tests := []struct {
		name    string
		o       interface{ Validate() error }
		wantErr string
	}{
		{"token", &TokenOptions{Duration: time.Hour, DryRun: "none"}, ""},
		{"token client dry run", &TokenOptions{Duration: time.Hour, DryRun: "client"}, ""},
		{"token server dry run", &TokenOptions{Duration: time.Hour, DryRun: "server", ClusterName: "c1"}, ""},
		{"token unknown dry run", &TokenOptions{Duration: time.Hour, DryRun: "yes"}, "--dry-run yes is not supported"},
		{"token dry run and output", &TokenOptions{Duration: time.Hour, DryRun: "client", Output: "json"}, "--output and --dry-run exclude each other"},
		{"clean", &CleanOptions{Timeout: time.Minute, DryRun: "none"}, ""},
		{"clean server dry run", &CleanOptions{Timeout: time.Minute, DryRun: "server"}, ""},
		{"clean unknown dry run", &CleanOptions{Timeout: time.Minute, DryRun: "true"}, "--dry-run true is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.o.Validate()
			if tt.wantErr == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

// TestTokenClientDryRun checks that `hub token --dry-run` says what it would
// create and whose token it would issue without any cluster: the
// kubeconfig points nowhere.
func TestTokenClientDryRun(t *testing.T) {
	streams, _, out, _ := genericiooptions.NewTestIOStreams()
	flags := genericclioptions.NewConfigFlags(false)
	nowhere := "/nonexistent/kubeconfig"
	flags.KubeConfig = &nowhere
	cmd := NewCmdHub(flags, streams)
	cmd.SetArgs([]string{"token", "--cluster-name", "cluster1", "--dry-run", "--duration", "1h"})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("hub token --dry-run: %v", err)
	}
	for _, want := range []string{
		"ServiceAccount open-cluster-management-cluster-bootstrap/agent-registration-bootstrap-cluster1 applied (dry run)",
		"A token of ServiceAccount open-cluster-management-cluster-bootstrap/agent-registration-bootstrap-cluster1, valid for 1h0m0s, would be issued (dry run).",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out.String(), "--hub-token") {
		t.Errorf("a dry run printed a join command:\n%s", out)
	}
}

func TestCheckCATrust(t *testing.T) {
	ca := func(name string) *x509.Certificate {
		key, _, err := certs.NewPrivateKey()
		if err != nil {
			t.Fatal(err)
		}
		c, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: name}, key)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	old, next := ca("old"), ca("next")
	cluster := func(name, claim string) clusterv1.ManagedCluster {
		mc := clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if claim != "" {
			mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: certs.HubCAsClaim, Value: claim}}
		}
		return mc
	}
	both := certs.HubCAID(old) + "," + certs.HubCAID(next)
	r := checkCATrust([]*x509.Certificate{old, next}, []clusterv1.ManagedCluster{cluster("c1", both), cluster("c2", certs.HubCAID(old)), cluster("c3", "")})
	if r.Ready || len(r.Clusters) != 3 {
		t.Fatalf("report %+v: want 3 clusters, not ready", r)
	}
	if len(r.Clusters[0].Missing) != 0 || !r.Clusters[0].Reported {
		t.Errorf("c1 trusts both: %+v", r.Clusters[0])
	}
	if len(r.Clusters[1].Missing) != 1 || r.Clusters[1].Missing[0] != certs.HubCAID(next) {
		t.Errorf("c2 misses the new CA: %+v", r.Clusters[1])
	}
	if r.Clusters[2].Reported || len(r.Clusters[2].Missing) != 2 {
		t.Errorf("c3 reports nothing: %+v", r.Clusters[2])
	}
	var out bytes.Buffer
	printCATrust(&out, r, "test")
	if !strings.Contains(out.String(), "c2") || !strings.Contains(out.String(), "not reported") {
		t.Errorf("table:\n%s", out.String())
	}
	if r := checkCATrust([]*x509.Certificate{old}, []clusterv1.ManagedCluster{cluster("c1", both)}); !r.Ready {
		t.Errorf("every cluster trusts the old CA: %+v", r)
	}
	err := (&RotateCAOptions{}).Validate()
	assert.ErrorContains(t, err, "--check", "rotate-ca without --check or --signing-ca-file")
	assert.ErrorContains(t, err, "--signing-ca-file", "rotate-ca without --check or --signing-ca-file")
	if err := (&RotateCAOptions{Check: true, CAFile: "a", SigningCAFile: "b"}).Validate(); err == nil {
		t.Error("rotate-ca with both --ca-file and --signing-ca-file: no error")
	}

	// The signing CA: clusters name the key of their certificate's CA.
	withIssuer := func(name, issuer string) clusterv1.ManagedCluster {
		mc := clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: certs.ClientIssuerClaim, Value: issuer}}
		return mc
	}
	newID, oldID := certs.KeyID(next.SubjectKeyId), certs.KeyID(old.SubjectKeyId)
	if newID == "" || newID == oldID {
		t.Fatalf("key IDs %q and %q: want two", newID, oldID)
	}
	r = checkSigning([]*x509.Certificate{next}, []clusterv1.ManagedCluster{withIssuer("c1", newID), withIssuer("c2", oldID), cluster("c3", ""), cluster("c4", "")}, map[string]bool{"c3": true})
	if r.Ready {
		t.Errorf("c2 holds a certificate of the old CA and c4 reports nothing, yet ready: %+v", r)
	}
	want := []bool{true, false, true, false}
	for i, c := range r.Clusters {
		if c.Ready != want[i] {
			t.Errorf("cluster %s ready %t, want %t: %+v", c.Name, c.Ready, want[i], c)
		}
	}
	if r.Clusters[2].Credential != "token" {
		t.Errorf("c3 has the token driver: %+v", r.Clusters[2])
	}
	out.Reset()
	printCATrust(&out, r, "new.crt")
	for _, s := range []string{"CERTIFICATE CA", oldID, "token", "not reported"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("signing table lacks %q:\n%s", s, out.String())
		}
	}
	if r := checkSigning([]*x509.Certificate{next}, []clusterv1.ManagedCluster{withIssuer("c1", newID)}, nil); !r.Ready {
		t.Errorf("every cluster holds a certificate of the new CA: %+v", r)
	}
}
