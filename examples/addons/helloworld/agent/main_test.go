package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestParseFlags(t *testing.T) {
	valid := []string{"--cluster-name=cluster1", "--namespace=addon-ns", "--hub-kubeconfig=/managed/hub-kubeconfig/kubeconfig"}
	tests := []struct {
		name      string
		args      []string
		want      options
		wantError string
	}{
		{
			name: "defaults",
			args: valid,
			want: options{addonName: "helloworld", clusterName: "cluster1", namespace: "addon-ns", hubKubeconfig: "/managed/hub-kubeconfig/kubeconfig", leaseDuration: time.Minute},
		},
		{
			name: "another add-on",
			args: append([]string{"--addon-name=hellomanager"}, valid...),
			want: options{addonName: "hellomanager", clusterName: "cluster1", namespace: "addon-ns", hubKubeconfig: "/managed/hub-kubeconfig/kubeconfig", leaseDuration: time.Minute},
		},
		{
			name: "lease duration",
			args: append([]string{"--lease-duration=4s"}, valid...),
			want: options{addonName: "helloworld", clusterName: "cluster1", namespace: "addon-ns", hubKubeconfig: "/managed/hub-kubeconfig/kubeconfig", leaseDuration: 4 * time.Second},
		},
		{name: "nothing", wantError: "--cluster-name is required"},
		{name: "no hub kubeconfig", args: valid[:2], wantError: "--hub-kubeconfig is required"},
		{name: "bad namespace", args: append([]string{"--namespace=Not_A_Name"}, valid[0], valid[2]), wantError: `--namespace "Not_A_Name" is not a namespace name`},
		{name: "short lease", args: append([]string{"--lease-duration=500ms"}, valid...), wantError: "--lease-duration 500ms is shorter than one second"},
		{name: "empty add-on name", args: append([]string{"--addon-name="}, valid...), wantError: "--addon-name is required"},
		{name: "stray argument", args: append(valid, "extra"), wantError: `unexpected arguments ["extra"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args)
			if tt.wantError != "" {
				require.ErrorContains(t, err, tt.wantError)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, *got)
		})
	}
}

func TestLoadHubConfig(t *testing.T) {
	writeKubeconfig := func(t *testing.T, auth *clientcmdapi.AuthInfo, files ...string) string {
		t.Helper()
		dir := t.TempDir()
		kc := clientcmdapi.NewConfig()
		kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443"}
		kc.AuthInfos["agent"] = auth
		kc.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: "agent"}
		kc.CurrentContext = "hub"
		path := filepath.Join(dir, "kubeconfig")
		require.NoError(t, clientcmd.WriteToFile(*kc, path))
		for _, f := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("pem"), 0o600))
		}
		return path
	}
	certAuth := func() *clientcmdapi.AuthInfo {
		return &clientcmdapi.AuthInfo{ClientCertificateData: []byte("cert"), ClientKeyData: []byte("key")}
	}
	tests := []struct {
		name         string
		auth         *clientcmdapi.AuthInfo
		files        []string
		wantCertFile bool
		wantToken    string
	}{
		{name: "certificate files beside the kubeconfig are read from there", auth: certAuth(), files: []string{"tls.crt", "tls.key"}, wantCertFile: true},
		{name: "embedded certificate without files", auth: certAuth()},
		{name: "only one of the files", auth: certAuth(), files: []string{"tls.crt"}},
		{name: "token credentials are kept", auth: &clientcmdapi.AuthInfo{Token: "t"}, files: []string{"tls.crt", "tls.key"}, wantToken: "t"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeKubeconfig(t, tt.auth, tt.files...)
			cfg, err := loadHubConfig(path, defaultAddonName)
			require.NoError(t, err)
			assert.Equal(t, "https://127.0.0.1:6443", cfg.Host)
			assert.Equal(t, tt.wantToken, cfg.BearerToken)
			if tt.wantCertFile {
				assert.Equal(t, filepath.Join(filepath.Dir(path), "tls.crt"), cfg.CertFile)
				assert.Equal(t, filepath.Join(filepath.Dir(path), "tls.key"), cfg.KeyFile)
				assert.Empty(t, cfg.CertData)
				assert.Empty(t, cfg.KeyData)
			} else {
				assert.Empty(t, cfg.CertFile)
			}
		})
	}

	_, err := loadHubConfig(filepath.Join(t.TempDir(), "missing"), defaultAddonName)
	require.ErrorContains(t, err, "helloworld-hub-kubeconfig")
}
