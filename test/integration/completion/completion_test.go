package completion

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// TestCompletion installs the plugin with make, starts a hub with the
// ManagedClusters edge1 and edge2, and completes the words after
// `kubectl ocm` three ways: by running kubectl_complete-ocm as kubectl
// does, through kubectl's own completion of plugins, and in-process.
func TestCompletion(t *testing.T) {
	framework.SkipIfShort(t)
	bin := installPlugin(t)
	kubeBin, err := framework.KubeBinDir()
	if err != nil {
		t.Fatal(err)
	}
	kubectl := filepath.Join(kubeBin, "kubectl")
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("kubectl not found: %v; run 'make kube-bins'", err)
	}

	ctx, env := hubtest.Start(t, 10*time.Minute)
	c := env.Cluster("hub").Client()
	for _, name := range []string{"edge1", "edge2"} {
		if err := c.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatalf("create ManagedCluster %s: %v", name, err)
		}
	}

	// The three ways of completing args, the words after `kubectl ocm` (the
	// last one is the word being completed), against the hub.
	hubFlags := []string{"--kubeconfig", env.Kubeconfig(), "--context", "hub"}
	runners := []struct {
		name     string
		complete func(t *testing.T, args []string) string
	}{
		{"kubectl_complete-ocm", func(t *testing.T, args []string) string {
			return run(t, bin, filepath.Join(bin, "kubectl_complete-ocm"), append(slices.Clone(hubFlags), args...)...)
		}},
		{"kubectl", func(t *testing.T, args []string) string {
			return run(t, bin, kubectl, append([]string{"__complete", "ocm"}, append(slices.Clone(hubFlags), args...)...)...)
		}},
		{"in-process", func(t *testing.T, args []string) string {
			r := clitest.CLI{Kubeconfig: env.Kubeconfig()}.Run(ctx, append([]string{"__complete"}, args...)...)
			if r.Err != nil {
				t.Fatalf("__complete %q: %v\n%s", args, r.Err, r.ErrOut)
			}
			return r.Out
		}},
	}
	tests := []struct {
		name string
		args []string
		// want are the candidates, in order; with subset, some of them.
		want   []string
		subset bool
	}{
		{"verbs", []string{""}, []string{"accept", "clusterset", "get", "hub", "join", "placement", "unjoin", "version", "work"}, true},
		{"get", []string{"get", ""}, []string{"clusters", "klusterlet"}, false},
		{"accept --clusters", []string{"accept", "--clusters", ""}, []string{"edge1", "edge2"}, false},
		{"accept --clusters after a comma", []string{"accept", "--clusters", "edge1,"}, []string{"edge1,edge2"}, false},
		{"get clusters", []string{"get", "clusters", ""}, []string{"edge1", "edge2"}, false},
		{"get clusters after a name", []string{"get", "clusters", "edge1", ""}, []string{"edge2"}, false},
		{"get clusters by prefix", []string{"get", "clusters", "edge2"}, []string{"edge2"}, false},
	}
	for _, r := range runners {
		t.Run(r.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					out := r.complete(t, tt.args)
					got := candidates(out)
					if tt.subset {
						for _, w := range tt.want {
							if !slices.Contains(got, w) {
								t.Errorf("completing %q offers %q, lacking %q:\n%s", tt.args, got, w, out)
							}
						}
					} else if !slices.Equal(got, tt.want) {
						t.Errorf("completing %q offers %q, want %q:\n%s", tt.args, got, tt.want, out)
					}
				})
			}
		})
	}
}

// installPlugin runs `make install` into a temporary GOBIN, with the
// `make build` it runs first into a temporary bin directory, checks that
// each holds an executable kubectl-ocm and kubectl_complete-ocm, and
// returns the bin directory.
func installPlugin(t *testing.T) string {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	// make install runs make build first: one run checks both, build's
	// BIN and install's GOBIN.
	bin, gobin := t.TempDir(), t.TempDir()
	cmd := exec.Command("make", "-C", root, "install", "BIN="+bin)
	// Run outside any make that runs the tests, whose job server and
	// flags are not this make's.
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "MAKEFLAGS=") || strings.HasPrefix(kv, "MFLAGS=") || strings.HasPrefix(kv, "MAKELEVEL=") || strings.HasPrefix(kv, "GOBIN=")
	})
	cmd.Env = append(cmd.Env, "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	for _, target := range []struct{ name, dir string }{{"build", bin}, {"install", gobin}} {
		for _, name := range []string{"kubectl-ocm", "kubectl_complete-ocm"} {
			fi, err := os.Stat(filepath.Join(target.dir, name))
			if err != nil {
				t.Fatalf("make %s did not install %s: %v", target.name, name, err)
			}
			if fi.Mode().Perm()&0o111 == 0 {
				t.Errorf("make %s installed %s without the executable bit: %v", target.name, name, fi.Mode())
			}
		}
	}
	return bin
}

// run runs name with args as kubectl runs plugins: bin first on PATH, and
// a HOME of its own with no kubeconfig. It returns stdout.
func run(t *testing.T, bin, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "KUBECONFIG=")
	})
	cmd.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, stderr.String())
	}
	return string(out)
}

// candidates parses cobra's __complete output: one candidate a line, its
// description after a tab, up to the ":DIRECTIVE" line.
func candidates(out string) []string {
	var got []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, ":") {
			break
		}
		if name, _, _ := strings.Cut(line, "\t"); name != "" {
			got = append(got, name)
		}
	}
	return got
}
