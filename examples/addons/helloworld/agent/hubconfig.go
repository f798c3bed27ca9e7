package main

import (
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// loadHubConfig reads the hub kubeconfig at path: the key kubeconfig of the
// add-on's hub-credential Secret, mounted as a directory.
//
// The add-on's registration renews the certificate before it expires and
// rewrites the Secret, whose tls.crt and tls.key keys hold the certificate and
// key. When the kubeconfig authenticates with a client certificate and those
// files sit beside it, the client reads them from the files instead, which
// client-go reloads when they change: the agent keeps working across renewals
// without a restart.
func loadHubConfig(path, addonName string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("read the hub kubeconfig %s: %w; it is the Secret %s-hub-kubeconfig of the install namespace, "+
			"written once the hub approves the add-on's registration", path, err, addonName)
	}
	cfg.UserAgent = "helloworld-addon"
	if len(cfg.CertData) == 0 && cfg.CertFile == "" {
		return cfg, nil
	}
	dir := filepath.Dir(path)
	cert, key := filepath.Join(dir, corev1.TLSCertKey), filepath.Join(dir, corev1.TLSPrivateKeyKey)
	if isFile(cert) && isFile(key) {
		cfg.CertData, cfg.KeyData = nil, nil
		cfg.CertFile, cfg.KeyFile = cert, key
	}
	return cfg, nil
}

// isFile reports whether path names a regular file (following symlinks, as
// kubelet's Secret volumes use them).
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
