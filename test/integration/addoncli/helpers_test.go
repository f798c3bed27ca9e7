package addoncli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/clitest"
	"github.com/kubectl-ocm/kubectl-ocm/test/kit/hubtest"
)

// pollTimeout bounds every wait of the tests.
const pollTimeout = 30 * time.Second

// setup starts a hub, installs the hub objects and creates the accepted
// ManagedClusters cluster1 and cluster2 with their namespaces, and the not
// accepted pending without one.
func setup(t *testing.T) (context.Context, clitest.CLI, client.Client) {
	t.Helper()
	ctx, env := hubtest.Start(t, 10*time.Minute)
	c := env.Cluster("hub").Client()
	for _, name := range []string{"cluster1", "cluster2"} {
		kit.MustCreate(ctx, t, c, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true}})
		kit.MustCreate(ctx, t, c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	kit.MustCreate(ctx, t, c, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: "pending"}})
	return ctx, clitest.CLI{Kubeconfig: env.Kubeconfig()}, c
}

// writeFiles writes files (path relative to a new directory: content) and
// returns the directory.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, content := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(content), Mode: 0o600}
	}
	dir := filepath.Join(t.TempDir(), "files")
	if err := os.CopyFS(dir, fsys); err != nil {
		t.Fatal(err)
	}
	return dir
}

// snapshot describes every add-on object of the hub with its resource
// version, so that a command that must change nothing can be checked.
func snapshot(ctx context.Context, t *testing.T, c client.Client) string {
	t.Helper()
	var lines []string
	lists := []client.ObjectList{&addonv1alpha1.ClusterManagementAddOnList{}, &addonv1alpha1.AddOnTemplateList{}, &addonv1alpha1.ManagedClusterAddOnList{}}
	for _, list := range lists {
		if err := c.List(ctx, list); err != nil {
			t.Fatalf("list %T: %v", list, err)
		}
		switch l := list.(type) {
		case *addonv1alpha1.ClusterManagementAddOnList:
			for _, o := range l.Items {
				lines = append(lines, "cma "+o.Name+" "+o.ResourceVersion)
			}
		case *addonv1alpha1.AddOnTemplateList:
			for _, o := range l.Items {
				lines = append(lines, "template "+o.Name+" "+o.ResourceVersion)
			}
		case *addonv1alpha1.ManagedClusterAddOnList:
			for _, o := range l.Items {
				lines = append(lines, "mca "+o.Namespace+"/"+o.Name+" "+o.ResourceVersion)
			}
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// expectUnchanged runs each failing command and checks that it failed with
// its want and left every add-on object as it was.
func expectUnchanged(ctx context.Context, t *testing.T, k clitest.CLI, c client.Client, cases []failing) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(ctx, t, c)
			clitest.ExpectErr(t, k.Run(ctx, tc.args...), tc.want...)
			if after := snapshot(ctx, t, c); after != before {
				t.Errorf("the command changed add-on objects:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// failing is a command that must fail with an error holding want.
type failing struct {
	name string
	args []string
	want []string
}

// runFollowing runs a command while reading its stderr line by line, calling
// onLine with each (as the command writes it), and returns its result and
// the lines. The command's progress thus drives what the test does next.
func runFollowing(ctx context.Context, k clitest.CLI, onLine func(line string), args ...string) (clitest.Result, []string) {
	pr, pw := io.Pipe()
	var out bytes.Buffer
	done := make(chan clitest.Result, 1)
	go func() {
		r := k.RunWith(ctx, genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: pw}, args...)
		_ = pw.Close()
		done <- r
	}()
	var lines []string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		onLine(sc.Text())
	}
	r := <-done
	r.Out, r.ErrOut = out.String(), strings.Join(lines, "\n")
	return r, lines
}

// getMCA reads ManagedClusterAddOn name of cluster.
func getMCA(ctx context.Context, t *testing.T, c client.Client, cluster, name string) *addonv1alpha1.ManagedClusterAddOn {
	t.Helper()
	mca := &addonv1alpha1.ManagedClusterAddOn{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: name}, mca); err != nil {
		t.Fatalf("get ManagedClusterAddOn %s/%s: %v", cluster, name, err)
	}
	return mca
}

// updateMCA changes ManagedClusterAddOn name of cluster with change, its
// status when status is set, as the add-on manager or an agent would.
func updateMCA(ctx context.Context, t *testing.T, c client.Client, cluster, name string, status bool, change func(*addonv1alpha1.ManagedClusterAddOn)) {
	t.Helper()
	mca := getMCA(ctx, t, c, cluster, name)
	change(mca)
	var err error
	if status {
		err = c.Status().Update(ctx, mca)
	} else {
		err = c.Update(ctx, mca)
	}
	if err != nil {
		t.Fatalf("update ManagedClusterAddOn %s/%s: %v", cluster, name, err)
	}
}

// condition returns a condition of type typ with status and reason.
func condition(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: metav1.Now()}
}

// expectRows fails t unless table has a row starting with each of rows
// (fields separated by single spaces).
func expectRows(t *testing.T, table string, rows ...string) {
	t.Helper()
	for _, row := range rows {
		if !clitest.HasRow(table, strings.Fields(row)...) {
			t.Errorf("no row %q in:\n%s", row, table)
		}
	}
}

// gone reports whether obj no longer exists.
func gone(c client.Client, obj client.Object) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if client.IgnoreNotFound(err) != nil {
			return false, fmt.Errorf("get %s: %w", obj.GetName(), err)
		}
		return err != nil, nil
	}
}
