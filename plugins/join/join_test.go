package join

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/kubeconfig"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// validOptions returns options that pass Complete and Validate.
func validOptions() *Options {
	o := NewOptions(genericclioptions.NewConfigFlags(false), genericiooptions.NewTestIOStreamsDiscard())
	o.HubToken, o.HubAPIServer, o.ClusterName = "token", "https://hub.example.com:6443", "cluster1"
	o.CACertHashes = []string{testPin}
	return o
}

// testPin is a well-formed CA pin.
const testPin = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestValidate checks the flags as the command does, through Complete and
// Validate.
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		return path
	}
	caFile, proxyCA, notPEM := file("ca.crt", "CA"), file("proxy-ca.pem", "-----BEGIN CERTIFICATE-----\n"), file("not-pem", "not a certificate")
	tests := []struct {
		name            string
		change          func(*Options)
		wantErrContains string
	}{
		{name: "valid", change: func(*Options) {}},
		{name: "no token", change: func(o *Options) { o.HubToken = "" }, wantErrContains: "--hub-token is required: run `kubectl ocm hub token`"},
		{name: "no server", change: func(o *Options) { o.HubAPIServer = "" }, wantErrContains: "--hub-apiserver is required"},
		{name: "http server", change: func(o *Options) { o.HubAPIServer = "http://hub:6443" }, wantErrContains: "is not an https URL"},
		{name: "no cluster name", change: func(o *Options) { o.ClusterName = "" }, wantErrContains: "--cluster-name is required"},
		{name: "bad cluster name", change: func(o *Options) { o.ClusterName = "Cluster_1" }, wantErrContains: "not a DNS-1123 label"},
		{name: "reserved cluster name", change: func(o *Options) { o.ClusterName = "managed-clusters" }, wantErrContains: "is reserved"},
		{name: "hosted", change: func(o *Options) { o.Mode, o.ManagedClusterKubeconfig = ModeHosted, "managed.kubeconfig" }},
		{name: "hosted without kubeconfig", change: func(o *Options) { o.Mode = ModeHosted }, wantErrContains: "--mode hosted needs --managed-cluster-kubeconfig"},
		{name: "kubeconfig without hosted", change: func(o *Options) { o.ManagedClusterKubeconfig = "managed.kubeconfig" }, wantErrContains: "only applies with --mode hosted"},
		{name: "hosted, name too long", change: func(o *Options) {
			o.Mode, o.ManagedClusterKubeconfig, o.ClusterName = ModeHosted, "managed.kubeconfig", strings.Repeat("c", 53)
		}, wantErrContains: "too long for --mode hosted"},
		{name: "hosted, longest name", change: func(o *Options) {
			o.Mode, o.ManagedClusterKubeconfig, o.ClusterName = ModeHosted, "managed.kubeconfig", strings.Repeat("c", 52)
		}},
		{name: "unknown mode", change: func(o *Options) { o.Mode = "x" }, wantErrContains: "not one of default, hosted"},
		{name: "report hosting cluster", change: func(o *Options) { o.ReportHostingCluster = true }},
		{name: "hosted, report hosting cluster", change: func(o *Options) {
			o.Mode, o.ManagedClusterKubeconfig, o.ReportHostingCluster, o.ManagementClusterName = ModeHosted, "managed.kubeconfig", true, "hosting1"
		}},
		{name: "hosted, report without the hosting cluster's name", change: func(o *Options) {
			o.Mode, o.ManagedClusterKubeconfig, o.ReportHostingCluster = ModeHosted, "managed.kubeconfig", true
		}, wantErrContains: "--report-hosting-cluster with --mode hosted needs --management-cluster-name"},
		{name: "management cluster without hosted", change: func(o *Options) { o.ManagementClusterName = "hosting1" }, wantErrContains: "--management-cluster-name only applies with --mode hosted"},
		{name: "hosted on itself", change: func(o *Options) {
			o.Mode, o.ManagedClusterKubeconfig, o.ManagementClusterName = ModeHosted, "managed.kubeconfig", o.ClusterName
		}, wantErrContains: "in hosted mode the agent runs on another cluster"},
		{name: "bad management cluster name", change: func(o *Options) {
			o.Mode, o.ManagedClusterKubeconfig, o.ManagementClusterName = ModeHosted, "managed.kubeconfig", "Hosting_1"
		}, wantErrContains: "--management-cluster-name: "},
		{name: "short certificate", change: func(o *Options) { o.ClientCertExpirationSeconds = 600 }, wantErrContains: "minimum of 3600"},
		{name: "client dry run as YAML", change: func(o *Options) { o.DryRun, o.PrintFlags.OutputFormat = cli.DryRunClient, ptr.To("yaml") }},
		{name: "server dry run by name", change: func(o *Options) { o.DryRun, o.PrintFlags.OutputFormat = cli.DryRunServer, ptr.To("name") }},
		{name: "output without dry-run", change: func(o *Options) { o.PrintFlags.OutputFormat = ptr.To("yaml") }, wantErrContains: "only applies with --dry-run"},
		{name: "bad output", change: func(o *Options) { o.DryRun, o.PrintFlags.OutputFormat = cli.DryRunClient, ptr.To("wide") }, wantErrContains: `--output "wide" is not supported`},
		{name: "bad dry-run", change: func(o *Options) { o.DryRun = "true" }, wantErrContains: "use none, client or server"},
		{name: "wait and dry-run", change: func(o *Options) { o.DryRun, o.Wait = cli.DryRunServer, true }, wantErrContains: "exclude --dry-run"},
		{name: "wait-accepted and dry-run", change: func(o *Options) { o.DryRun, o.WaitAccepted = cli.DryRunClient, true }, wantErrContains: "exclude --dry-run"},
		{name: "external URL", change: func(o *Options) { o.ExternalServerURLs = []string{"ftp://x"} }, wantErrContains: "--external-server-urls"},
		{name: "token driver", change: func(o *Options) { o.AddonKubeClientRegistrationAuth, o.AddonTokenExpirationSeconds = "token", 3600 }},
		{name: "unknown add-on driver", change: func(o *Options) { o.AddonKubeClientRegistrationAuth = "x509" }, wantErrContains: "not one of csr, token"},
		{name: "token registration driver", change: func(o *Options) { o.RegistrationAuth = "token" }},
		{name: "unknown registration driver", change: func(o *Options) { o.RegistrationAuth = "awsirsa" }, wantErrContains: `--registration-auth "awsirsa" is not one of csr, token`},
		{name: "token lifetime with csr", change: func(o *Options) { o.AddonTokenExpirationSeconds = 3600 }, wantErrContains: "only applies with --addon-kubeclient-registration-auth token"},
		{name: "short token", change: func(o *Options) { o.AddonKubeClientRegistrationAuth, o.AddonTokenExpirationSeconds = "token", 60 }, wantErrContains: "TokenRequest minimum of 600"},
		{name: "image", change: func(o *Options) { o.Image = "example.com/ocm-controller:v1" }},
		{name: "image registry", change: func(o *Options) { o.ImageRegistry = "registry.example.com/mirror" }},
		{name: "invalid image", change: func(o *Options) { o.Image = "example.com/OCM:v1" }, wantErrContains: `--image "example.com/OCM:v1" is not a valid image reference`},
		{name: "invalid image registry", change: func(o *Options) { o.ImageRegistry = "quay.io/org:v1" }, wantErrContains: `--image-registry "quay.io/org:v1"`},
		{name: "proxy", change: func(o *Options) { o.ProxyURL = "http://proxy.example.com:3128" }},
		{name: "https proxy with its CA", change: func(o *Options) {
			o.ProxyURL, o.ProxyCAFile = "https://proxy.example.com:3129", proxyCA
		}},
		{name: "socks proxy", change: func(o *Options) { o.ProxyURL = "socks5://proxy:1080" }, wantErrContains: "use an http:// or https:// URL"},
		{name: "proxy without host", change: func(o *Options) { o.ProxyURL = "proxy:3128" }, wantErrContains: "is not a URL such as http://proxy.example.com:3128"},
		{name: "proxy CA with an http proxy", change: func(o *Options) {
			o.ProxyURL, o.ProxyCAFile = "http://proxy:3128", proxyCA
		}, wantErrContains: "--proxy-ca-file only applies with an https --proxy-url"},
		{name: "proxy CA that is no PEM", change: func(o *Options) {
			o.ProxyURL, o.ProxyCAFile = "https://proxy:3129", notPEM
		}, wantErrContains: "holds no PEM certificate"},
		{name: "no way to verify the hub", change: func(o *Options) { o.CACertHashes = nil }, wantErrContains: "join verifies the hub before it sends the token: pass --ca-cert-hash"},
		{name: "CA file", change: func(o *Options) { o.CACertHashes, o.CAFile = nil, caFile }},
		{name: "CA file and pin", change: func(o *Options) { o.CAFile = caFile }},
		{name: "several pins", change: func(o *Options) { o.CACertHashes = []string{testPin, strings.ToUpper(testPin)} }},
		{name: "bad pin", change: func(o *Options) { o.CACertHashes = []string{"0123"} }, wantErrContains: `--ca-cert-hash: "0123" is not a CA pin`},
		{name: "md5 pin", change: func(o *Options) { o.CACertHashes = []string{"md5:0123"} }, wantErrContains: "only sha256 is supported"},
		{name: "insecure", change: func(o *Options) { o.CACertHashes, o.InsecureSkipCAVerification = nil, true }},
		{name: "insecure and a pin", change: func(o *Options) { o.InsecureSkipCAVerification = true }, wantErrContains: "--insecure-skip-ca-verification contradicts"},
		{name: "network policy", change: func(o *Options) { o.NetworkPolicy = true }},
		{name: "network policy monitoring namespace", change: func(o *Options) { o.NetworkPolicyMonitoringNamespace = "monitoring" }},
		{name: "bad monitoring namespace", change: func(o *Options) { o.NetworkPolicyMonitoringNamespace = "Monitoring" },
			wantErrContains: `--network-policy-monitoring-namespace "Monitoring" is not a namespace name`},
		{name: "negative timeout", change: func(o *Options) { o.Timeout = -time.Second }, wantErrContains: "--timeout -1s must be positive"},
		{name: "TLS profile", change: func(o *Options) {
			o.TLSMinVersion, o.TLSCipherSuites = "TLSv1.3", []string{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"}
		}},
		{name: "unknown TLS version", change: func(o *Options) { o.TLSMinVersion = "1.3" }, wantErrContains: `--tls-min-version: "1.3" is not a TLS version`},
		{name: "TLS version below 1.2", change: func(o *Options) { o.TLSMinVersion = "VersionTLS11" }, wantErrContains: "spec.tlsProfile takes VersionTLS12 or VersionTLS13"},
		{name: "unknown cipher suite", change: func(o *Options) { o.TLSCipherSuites = []string{"TLS_NO_SUCH_SUITE"} }, wantErrContains: `--tls-cipher-suites: unknown cipher suite "TLS_NO_SUCH_SUITE"`},
		{name: "insecure cipher suite", change: func(o *Options) { o.TLSCipherSuites = []string{"TLS_RSA_WITH_RC4_128_SHA"} }, wantErrContains: "insecure cipher suite"},
		{name: "workers and leader election", change: func(o *Options) {
			o.ManifestWorkWorkers, o.AppliedWorkWorkers = 3, 4
			o.LeaderElection.LeaseDuration, o.LeaderElection.RenewDeadline, o.LeaderElection.RetryPeriod = 6*time.Second, 4*time.Second, time.Second
		}},
		{name: "no workers given", change: func(o *Options) {
			o.changed = append(o.changed, "manifestwork-agent-workers")
		}, wantErrContains: "--manifestwork-agent-workers 0 must be at least 1"},
		{name: "negative workers", change: func(o *Options) { o.AppliedWorkWorkers = -1 }, wantErrContains: "--appliedmanifestwork-finalize-controller-workers -1 must be at least 1"},
		{name: "renew deadline beyond the lease", change: func(o *Options) {
			o.LeaderElection.LeaseDuration, o.LeaderElection.RenewDeadline = 5*time.Second, 6*time.Second
		}, wantErrContains: "--leader-elect-lease-duration 5s must be longer than --leader-elect-renew-deadline 6s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := validOptions()
			tt.change(o)
			err := cli.CompleteValidate(o, nil, nil)
			if tt.wantErrContains == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			require.ErrorContains(t, err, tt.wantErrContains)
			if strings.Count(err.Error(), "\n") != 0 {
				t.Errorf("error spans several lines: %q", err)
			}
		})
	}
}

// cluster builds a ManagedCluster with the given acceptance and conditions.
func cluster(accepted bool, trueConds ...string) *clusterv1.ManagedCluster {
	mc := &clusterv1.ManagedCluster{Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: accepted}}
	for _, c := range trueConds {
		meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: c, Status: metav1.ConditionTrue, Reason: "R"})
	}
	return mc
}

func TestClusterNameConflict(t *testing.T) {
	joined := []string{clusterv1.ManagedClusterConditionJoined, clusterv1.ManagedClusterConditionAvailable}
	tests := []struct {
		name         string
		mc           *clusterv1.ManagedCluster
		localCluster string
		force        bool
		wantConflict bool
	}{
		{name: "not accepted", mc: cluster(false, joined...)},
		{name: "accepted, never joined", mc: cluster(true)},
		{name: "joined but unavailable", mc: cluster(true, clusterv1.ManagedClusterConditionJoined)},
		{name: "joined and available", mc: cluster(true, joined...), wantConflict: true},
		{name: "joined and available, it is this cluster", mc: cluster(true, joined...), localCluster: "cluster1"},
		{name: "joined and available, forced", mc: cluster(true, joined...), force: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := clusterNameConflict(tt.mc, "cluster1", tt.localCluster, tt.force)
			if (err != nil) != tt.wantConflict {
				t.Fatalf("err = %v, want conflict %v", err, tt.wantConflict)
			}
			if err != nil {
				assert.ErrorContains(t, err, "kubectl delete managedcluster cluster1", "the error names the fix")
			}
		})
	}
}

func TestKlusterletState(t *testing.T) {
	cond := func(typ string, status metav1.ConditionStatus, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg}
	}
	running := cond(operatorv1.ConditionKlusterletAvailable, metav1.ConditionTrue, "KlusterletAvailable", "Deployment available")
	tests := []struct {
		name       string
		conds      []metav1.Condition
		wantStep   string
		wantDetail string
		wantDone   bool
		// wantRegistered: the hub has the registration, where --wait ends.
		wantRegistered bool
	}{
		{name: "nothing yet", wantStep: "installing"},
		{name: "agent not running", conds: []metav1.Condition{cond(operatorv1.ConditionKlusterletAvailable, metav1.ConditionFalse, "NoAvailablePods", "ImageNotMapped")},
			wantStep: "agent starting", wantDetail: "ImageNotMapped"},
		{name: "agent runs, no report yet", conds: []metav1.Condition{running},
			wantStep: "registering"},
		{name: "CSR pending", conds: []metav1.Condition{running, cond(operatorv1.ConditionHubConnectionDegraded, metav1.ConditionTrue, "CSRPending", "waiting")},
			wantStep: "CSR pending", wantDetail: "kubectl ocm accept --clusters cluster1", wantRegistered: true},
		{name: "certificate issued, not accepted yet", conds: []metav1.Condition{running, cond(operatorv1.ConditionHubConnectionDegraded, metav1.ConditionTrue, "HubAcceptancePending", "waiting for acceptance")},
			wantStep: "certificate issued", wantDetail: "waiting for acceptance", wantRegistered: true},
		{name: "bootstrap token rejected", conds: []metav1.Condition{running, cond(operatorv1.ConditionHubConnectionDegraded, metav1.ConditionTrue, "BootstrapUnauthorized", "token expired")},
			wantStep: "BootstrapUnauthorized", wantDetail: "token expired"},
		{name: "available", conds: []metav1.Condition{running, cond(operatorv1.ConditionHubConnectionDegraded, metav1.ConditionFalse, "HubConnectionFunctional", "joined")},
			wantStep: "available", wantDone: true, wantRegistered: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := klusterletState(tt.conds, "cluster1", "klusterlet")
			if s.step != tt.wantStep || s.done != tt.wantDone || s.registered != tt.wantRegistered || !strings.Contains(s.detail, tt.wantDetail) {
				t.Errorf("klusterletState = %+v, want step %q done %v registered %v detail containing %q", s, tt.wantStep, tt.wantDone, tt.wantRegistered, tt.wantDetail)
			}
		})
	}
}

// TestObjectsThroughAProxy checks the bootstrap kubeconfig join writes
// with --proxy-url and --proxy-ca-file: the proxy as the hub cluster's
// proxy-url, and the proxy's CA after the hub's in its CA bundle.
func TestObjectsThroughAProxy(t *testing.T) {
	o := validOptions()
	o.ProxyURL, o.ProxyCAFile, o.proxyCA = "https://proxy.example.com:3129", "proxy-ca.pem", []byte("PROXY CA\n")
	objs, _, err := o.objects("https://hub.example.com:6443", []byte("HUB CA"))
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if obj.GetKind() != "Secret" || obj.GetName() != "bootstrap-hub-kubeconfig" {
			continue
		}
		data, _, _ := unstructured.NestedString(obj.Object, "stringData", kubeconfig.KubeconfigKey)
		if data == "" {
			enc, _, _ := unstructured.NestedString(obj.Object, "data", kubeconfig.KubeconfigKey)
			raw, err := base64.StdEncoding.DecodeString(enc)
			if err != nil {
				t.Fatal(err)
			}
			data = string(raw)
		}
		info, err := kubeconfig.FromSecret(map[string][]byte{kubeconfig.KubeconfigKey: []byte(data)})
		if err != nil {
			t.Fatal(err)
		}
		if info.ProxyURL != o.ProxyURL || string(info.CAData) != "HUB CA\nPROXY CA\n" || info.Token != "token" {
			t.Errorf("bootstrap kubeconfig: proxy %q, CA %q, token %q; want the proxy, both CAs and the token", info.ProxyURL, info.CAData, info.Token)
		}
		return
	}
	t.Fatal("join writes no Secret bootstrap-hub-kubeconfig")
}

func TestObjects(t *testing.T) {
	o := validOptions()
	o.Singleton, o.ClientCertExpirationSeconds, o.Image = true, 3600, "example.com/ocm-controller:v1"
	o.AddonKubeClientRegistrationAuth, o.AddonTokenExpirationSeconds = "token", 7200
	o.RegistrationAuth = "token"
	objs, managed, err := o.objects("https://hub.example.com:6443", []byte("CA"))
	if err != nil {
		t.Fatal(err)
	}
	if len(managed) != 0 {
		t.Errorf("default mode returned %d objects for a separate managed cluster", len(managed))
	}
	find := func(kind, name string) *unstructured.Unstructured {
		for _, obj := range objs {
			if obj.GetKind() == kind && obj.GetName() == name {
				return obj
			}
		}
		t.Fatalf("no %s %s among the objects", kind, name)
		return nil
	}
	// What a GitOps repository holds: the operator, the agent's namespace,
	// the bootstrap Secret and the Klusterlet; the operator renders the rest.
	var got []string
	for _, obj := range objs {
		got = append(got, obj.GetKind()+" "+obj.GetName())
	}
	want := []string{"CustomResourceDefinition " + config.KlusterletsCRDName, "Namespace open-cluster-management", "ServiceAccount klusterlet",
		"ClusterRole open-cluster-management:klusterlet", "ClusterRoleBinding open-cluster-management:klusterlet", "Deployment klusterlet",
		"Namespace open-cluster-management-agent", "Secret bootstrap-hub-kubeconfig", "Klusterlet klusterlet"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("join writes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	dep := find("Deployment", "klusterlet")
	if dep.GetLabels()[apply.PartOfLabelKey] != apply.PartOfLabelValue {
		t.Error("the operator Deployment lacks the part-of label")
	}
	ctrs, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	ctr := ctrs[0].(map[string]any)
	if args := strings.Join(toStrings(ctr["args"]), " "); ctr["image"] != o.Image || !strings.HasPrefix(args, "operator klusterlet") {
		t.Errorf("operator container image %v args %q", ctr["image"], args)
	}
	if env := fmt.Sprint(ctr["env"]); !strings.Contains(env, "POD_NAMESPACE") || !strings.Contains(env, "metadata.namespace") {
		t.Errorf("operator container lacks the POD_NAMESPACE fieldRef: %v", ctr["env"])
	}
	k := find("Klusterlet", "klusterlet")
	if mode, _, _ := unstructured.NestedString(k.Object, "spec", "deployOption", "mode"); mode != "Singleton" {
		t.Errorf("Klusterlet mode %q, want Singleton", mode)
	}
	driver, _, _ := unstructured.NestedMap(k.Object, "spec", "registrationConfiguration", "addOnKubeClientRegistrationDriver")
	if fmt.Sprint(driver) != "map[authType:token token:map[expirationSeconds:7200]]" {
		t.Errorf("Klusterlet addOnKubeClientRegistrationDriver %v, want authType token with expirationSeconds 7200", driver)
	}
	if auth, _, _ := unstructured.NestedString(k.Object, "spec", "registrationConfiguration", "registrationDriver", "authType"); auth != "token" {
		t.Errorf("Klusterlet registrationDriver.authType %q, want token", auth)
	}
	secret := find("Secret", "bootstrap-hub-kubeconfig")
	if kc, _, _ := unstructured.NestedString(secret.Object, "data", "kubeconfig"); kc == "" {
		t.Error("the bootstrap Secret has no kubeconfig")
	}
	for field, want := range map[string]any{"clusterName": "cluster1", "imagePullSpec": o.Image} {
		if got, _, _ := unstructured.NestedFieldNoCopy(k.Object, "spec", field); got != want {
			t.Errorf("Klusterlet spec.%s = %v, want %v", field, got, want)
		}
	}
	if got, _, _ := unstructured.NestedFieldNoCopy(k.Object, "spec", "registrationConfiguration", "clientCertExpirationSeconds"); fmt.Sprint(got) != "3600" {
		t.Errorf("Klusterlet clientCertExpirationSeconds = %v, want 3600", got)
	}
}

// TestObjectsNetworkPolicy checks the Klusterlet's
// spec.networkPolicyConfiguration that --network-policy and
// --network-policy-monitoring-namespace write, in both modes, and that join
// itself writes no NetworkPolicy (the operator renders them).
func TestObjectsNetworkPolicy(t *testing.T) {
	tests := []struct {
		name      string
		enabled   bool
		namespace string
		hosted    bool
		want      string // the field as fmt prints it; empty: absent
	}{
		{name: "unset"},
		{name: "--network-policy", enabled: true, want: "map[]"},
		{name: "--network-policy-monitoring-namespace", namespace: "monitoring", want: "map[monitoringNamespace:monitoring]"},
		{name: "hosted", hosted: true, namespace: "monitoring", want: "map[monitoringNamespace:monitoring]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := validOptions()
			o.NetworkPolicy, o.NetworkPolicyMonitoringNamespace = tt.enabled, tt.namespace
			if tt.hosted {
				o.Mode, o.ManagedClusterKubeconfig = ModeHosted, "managed.kubeconfig"
			}
			if err := cli.CompleteValidate(o, nil, nil); err != nil {
				t.Fatal(err)
			}
			objs, _, err := o.objects("https://hub.example.com:6443", []byte("CA"))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, obj := range objs {
				switch obj.GetKind() {
				case "NetworkPolicy":
					t.Errorf("join writes NetworkPolicy %s, which the operator renders", obj.GetName())
				case "Klusterlet":
					if np, found, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "networkPolicyConfiguration"); found {
						got = fmt.Sprint(np)
					}
				}
			}
			if got != tt.want {
				t.Errorf("Klusterlet spec.networkPolicyConfiguration %q, want %q", got, tt.want)
			}
		})
	}
}

// TestObjectsHostingReport checks the Klusterlet's
// spec.deployOption that --report-hosting-cluster and
// --management-cluster-name write, in both modes.
func TestObjectsHostingReport(t *testing.T) {
	tests := []struct {
		name    string
		report  bool
		hosting string // --management-cluster-name, with --mode hosted
		want    string // spec.deployOption as fmt prints it
	}{
		{name: "unset", want: "map[mode:Default]"},
		{name: "default mode", report: true, want: "map[mode:Default reportHostingCluster:Enable]"},
		{name: "hosted", report: true, hosting: "hosting1", want: "map[hosted:map[managementClusterName:hosting1] mode:Hosted reportHostingCluster:Enable]"},
		{name: "hosted, the name alone", hosting: "hosting1", want: "map[hosted:map[managementClusterName:hosting1] mode:Hosted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := validOptions()
			o.ReportHostingCluster = tt.report
			if tt.hosting != "" {
				o.Mode, o.ManagedClusterKubeconfig, o.ManagementClusterName = ModeHosted, "managed.kubeconfig", tt.hosting
			}
			require.NoError(t, cli.CompleteValidate(o, nil, nil))
			objs, _, err := o.objects("https://hub.example.com:6443", []byte("CA"))
			require.NoError(t, err)
			got := ""
			for _, obj := range objs {
				if obj.GetKind() == "Klusterlet" {
					opt, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "deployOption")
					got = fmt.Sprint(opt)
				}
			}
			assert.Equal(t, tt.want, got, "Klusterlet spec.deployOption")
		})
	}
}

func toStrings(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, x := range l {
			out = append(out, x.(string))
		}
	}
	return out
}

func TestDryRunFlag(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{args: nil, want: cli.DryRunNone},
		{args: []string{"--dry-run"}, want: cli.DryRunClient},
		{args: []string{"--dry-run=server"}, want: cli.DryRunServer},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := NewCmdJoin(genericclioptions.NewConfigFlags(false), genericiooptions.NewTestIOStreamsDiscard())
			if err := cmd.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			if got := cmd.Flags().Lookup("dry-run").Value.String(); got != tt.want {
				t.Errorf("--dry-run = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPrintObjects(t *testing.T) {
	tests := []struct {
		name   string
		dryRun string
		output string
		want   []string
	}{
		{name: "client, no -o", dryRun: cli.DryRunClient, want: []string{
			"namespace/open-cluster-management-agent applied (client dry run)\n",
			"deployment.apps/klusterlet applied (client dry run)\n",
		}},
		{name: "server, no -o", dryRun: cli.DryRunServer, want: []string{"klusterlet.operator.open-cluster-management.io/klusterlet applied (server dry run)\n"}},
		{name: "-o name", dryRun: cli.DryRunClient, output: "name", want: []string{"namespace/open-cluster-management-agent\n"}},
		{name: "-o yaml", dryRun: cli.DryRunClient, output: "yaml", want: []string{"kind: Namespace\n", "\n---\n", "kind: Klusterlet\n"}},
		{name: "-o json", dryRun: cli.DryRunServer, output: "json", want: []string{`"kind": "List"`, `"kind": "Klusterlet"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			streams, _, out, _ := genericiooptions.NewTestIOStreams()
			o := validOptions()
			o.IOStreams, o.DryRun = streams, tt.dryRun
			if tt.output != "" {
				o.PrintFlags.OutputFormat = ptr.To(tt.output)
			}
			objs, _, err := o.objects("https://hub.example.com:6443", []byte("CA"))
			if err != nil {
				t.Fatal(err)
			}
			if err := o.printObjects(objs); err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			klusterlet := strings.LastIndex(out.String(), "lusterlet")
			if i := strings.Index(out.String(), "amespace"); i < 0 || i > klusterlet {
				t.Errorf("objects are not printed in install order:\n%s", out)
			}
		})
	}
}
