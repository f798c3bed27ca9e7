package placementcli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/root"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

const (
	// pollTimeout bounds every wait of the tests.
	pollTimeout = 30 * time.Second
	// pollInterval is how often waits look again.
	pollInterval = 100 * time.Millisecond
)

// setup starts a hub, installs the hub objects, and creates namespace apps
// and the ManagedClusters:
//
//	c1  env=prod region=eu
//	c2  env=prod region=us
//	c3  env=prod, tainted gpu=true:NoSelect
//	c4  env=dev
//	c5  env=prod (left out of set prod)
func setup(ctx context.Context, t *testing.T) (*framework.Environment, client.Client) {
	t.Helper()
	env := framework.StartForTest(t, "hub")
	c := env.Cluster("hub").Client()
	objs, err := config.HubObjects(config.HubValues{})
	if err != nil {
		t.Fatal(err)
	}
	if err := apply.Apply(ctx, c, objs, apply.Options{}); err != nil {
		t.Fatal(err)
	}
	mustCreate(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}})
	for name, labels := range map[string]map[string]string{
		"c1": {"env": "prod", "region": "eu"}, "c2": {"env": "prod", "region": "us"}, "c3": {"env": "prod"},
		"c4": {"env": "dev"}, "c5": {"env": "prod"},
	} {
		mc := &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}}
		if name == "c3" {
			mc.Spec.Taints = []clusterv1.Taint{{Key: "gpu", Value: "true", Effect: clusterv1.TaintEffectNoSelect, TimeAdded: metav1.Now()}}
		}
		mustCreate(ctx, t, c, mc)
	}
	return env, c
}

// mustCreate creates obj or fails t.
func mustCreate(ctx context.Context, t *testing.T, c client.Client, obj client.Object) {
	t.Helper()
	if err := c.Create(ctx, obj); err != nil {
		t.Fatalf("create %s: %v", obj.GetName(), err)
	}
}

// poll calls cond until it returns true, failing t after pollTimeout with
// the last error cond returned.
func poll(ctx context.Context, t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(ctx, pollInterval, pollTimeout, true, func(ctx context.Context) (bool, error) {
		done, err := cond(ctx)
		last = err
		return done, nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s: %v", what, last)
	}
}

// result is the output of one kubectl-ocm invocation.
type result struct {
	out, errOut string
	err         error
}

// cli runs kubectl-ocm commands as the hub admin.
type cli struct {
	kubeconfig string
}

// run runs `kubectl ocm ARGS --kubeconfig ... --context hub`, the kubeconfig
// flags first so that `__complete ARGS` keeps the word to complete last.
func (k cli) run(ctx context.Context, args ...string) result {
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	cmd := root.NewCmdRoot(streams)
	if len(args) > 0 && args[0] == "__complete" {
		cmd.SetArgs(append([]string{"__complete", "--kubeconfig", k.kubeconfig, "--context", "hub"}, args[1:]...))
	} else {
		cmd.SetArgs(append(args, "--kubeconfig", k.kubeconfig, "--context", "hub"))
	}
	err := cmd.ExecuteContext(ctx)
	return result{out: streams.Out.(*bytes.Buffer).String(), errOut: streams.ErrOut.(*bytes.Buffer).String(), err: err}
}

// expectOK fails t unless r succeeded and its output holds every want.
func expectOK(t *testing.T, r result, want ...string) {
	t.Helper()
	if r.err != nil {
		t.Fatalf("command failed: %v\nstderr: %s", r.err, r.errOut)
	}
	for _, w := range want {
		if !strings.Contains(r.out, w) {
			t.Errorf("output lacks %q:\n%s", w, r.out)
		}
	}
}

// expectErr fails t unless r failed with an error holding every want.
func expectErr(t *testing.T, r result, want ...string) {
	t.Helper()
	if r.err == nil {
		t.Fatalf("command succeeded; want an error containing %q\nstdout: %s", want, r.out)
	}
	for _, w := range want {
		if !strings.Contains(r.err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, r.err)
		}
	}
}

// row returns the fields of the first line of table whose first field is
// first, or nil.
func row(table, first string) []string {
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == first {
			return f
		}
	}
	return nil
}

// hasRow reports whether a line of table starts with the fields want.
func hasRow(table string, want ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) >= len(want) && strings.Join(f[:len(want)], " ") == strings.Join(want, " ") {
			return true
		}
	}
	return false
}
