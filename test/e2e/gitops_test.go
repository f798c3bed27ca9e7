package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// testGitOps installs the hub and cluster1's agent from the manifests that
// `--dry-run=client` prints, applied with plain kubectl as docs/install.md#gitops says
// (the hub's as a JSON List with server-side apply, cluster1's as YAML with
// client-side apply), and
// cluster2's agent with `kubectl ocm join`. Both clusters must join, become
// Available and apply a ManifestWork; the agent objects of both clusters must
// be the same but for the cluster name; and `join` and `hub init` run over
// what kubectl applied must change none of its objects nor restart a process.
func testGitOps(t *testing.T) {
	parallel(t)
	f := startFleet(t, "hub", "cluster1", "cluster2")
	hub := f.env.Cluster("hub").Client()

	hubJSON := f.ocmStdout(t, "hub", "init", "--dry-run=client", "-o", "json")
	f.kubectlApply(t, "hub", hubJSON, "--server-side")
	waitDeploymentAvailable(t, hub, config.HubNamespace, "ocm-hub-controller")

	tokenOut := f.ocm(t, "hub", "token", "--context", "hub")
	token, apiserver := joinArgs(t, tokenOut)
	pins := pinFlags(t, tokenOut)
	joinFlags := func(cluster string) []string {
		return append([]string{"join", "--hub-token", token, "--hub-apiserver", apiserver, "--cluster-name", cluster, "--context", cluster}, pins...)
	}
	agentYAML := f.ocmStdout(t, append(joinFlags("cluster1"), "--dry-run=client", "-o", "yaml")...)
	f.kubectlApply(t, "cluster1", agentYAML)
	f.ocm(t, joinFlags("cluster2")...)
	f.ocm(t, "accept", "--clusters", "cluster1,cluster2", "--context", "hub", "--wait")

	for _, c := range []string{"cluster1", "cluster2"} {
		waitDeploymentAvailable(t, f.env.Cluster(c).Client(), config.AgentNamespace, "klusterlet-agent")
		f.agent(t, c)
		waitJoinedAvailable(t, hub, c)
		applyWork(t, hub, f.env.Cluster(c).Client(), c)
	}

	t.Run("the agent objects of both clusters are the same but for the cluster name", func(t *testing.T) {
		objs := decodeManifests(t, agentYAML)
		gitops := liveObjects(t, f.env.Cluster("cluster1").Client(), objs)
		verb := liveObjects(t, f.env.Cluster("cluster2").Client(), objs)
		for key, want := range gitops {
			want = strings.ReplaceAll(want, "cluster1", "cluster2")
			assert.JSONEq(t, want, verb[key], "%s installed by kubectl apply (cluster1) and by kubectl ocm join (cluster2)", key)
		}
	})

	t.Run("join over the GitOps agent changes nothing", func(t *testing.T) {
		f.unchangedBy(t, "cluster1", config.AgentNamespace, "klusterlet-agent", decodeManifests(t, agentYAML), func() {
			f.ocm(t, append(joinFlags("cluster1"), "--dry-run=server")...)
			f.ocm(t, append(joinFlags("cluster1"), "--wait-accepted")...)
		})
	})

	t.Run("hub init over the GitOps hub changes nothing", func(t *testing.T) {
		f.unchangedBy(t, "hub", config.HubNamespace, "ocm-hub-controller", decodeManifests(t, hubJSON), func() {
			f.ocm(t, "hub", "init", "--context", "hub", "--dry-run=server")
			f.ocm(t, "hub", "init", "--context", "hub", "--wait")
		})
	})
}

// unchangedBy checks that run, which installs objs again on the named
// cluster, changes none of them and does not restart Deployment
// namespace/name.
func (f *fleet) unchangedBy(t *testing.T, cluster, namespace, name string, objs []*unstructured.Unstructured, run func()) {
	t.Helper()
	c := f.env.Cluster(cluster).Client()
	before := liveObjects(t, c, objs)
	running := f.instance(t, cluster, namespace, name)
	run()
	after := liveObjects(t, c, objs)
	for key := range before {
		assert.JSONEq(t, before[key], after[key], "%s on %s", key, cluster)
	}
	again := f.instance(t, cluster, namespace, name)
	assert.Equal(t, running.id, again.id, "Deployment %s/%s on %s was restarted", namespace, name, cluster)
	// A restart before run (at the first install, under a loaded machine)
	// is not run's doing; one during run is.
	if again.restarts != running.restarts {
		t.Errorf("Deployment %s/%s on %s restarted during the install (%d restarts before, %d after): %s",
			namespace, name, cluster, running.restarts, again.restarts, f.whyRestarted(t, cluster+"/"+namespace+"/"+name))
	}
	if running.restarts != 0 {
		t.Logf("Deployment %s/%s on %s had restarted %d times before the install: %s",
			namespace, name, cluster, running.restarts, f.whyRestarted(t, cluster+"/"+namespace+"/"+name))
	}
}

// ocmStdout runs `kubectl ocm args...` like ocm but returns its standard
// output alone, the manifests of a dry run.
func (f *fleet) ocmStdout(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins.kubectlOCM, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+f.env.Kubeconfig())
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	t.Logf("$ kubectl ocm %s > manifests (%d bytes)\n%s", strings.Join(args, " "), out.Len(), errOut.String())
	require.NoError(t, err, "kubectl ocm %s", strings.Join(args, " "))
	return out.String()
}

// kubectlApply applies manifests to the named cluster with kubectl, the way
// docs/install.md#gitops does: kubectl resolves the kind of every object
// before applying any, so on a cluster without the product's CRDs the first
// apply reports the custom resources as unknown; once the CRDs are
// Established a second apply creates them.
func (f *fleet) kubectlApply(t *testing.T, cluster, manifests string, args ...string) {
	t.Helper()
	applyArgs := append([]string{"apply", "-f", "-"}, args...)
	out, err := f.kubectl(t, cluster, manifests, applyArgs...)
	if err == nil {
		return
	}
	require.Contains(t, out, "no matches for kind", "kubectl apply failed for another reason than a CRD it creates")
	require.NotContains(t, out, "Error from server", "kubectl apply")
	out, err = f.kubectl(t, cluster, "", "wait", "--for=condition=Established", "crd", "-l", apply.PartOfLabelKey+"="+apply.PartOfLabelValue, "--timeout=60s")
	require.NoError(t, err, "kubectl wait: %s", out)
	out, err = f.kubectl(t, cluster, manifests, applyArgs...)
	require.NoError(t, err, "second kubectl apply: %s", out)
}

// kubectl runs the test environment's kubectl against the named cluster with
// stdin as its input and returns its combined output.
func (f *fleet) kubectl(t *testing.T, cluster, stdin string, args ...string) (string, error) {
	t.Helper()
	dir, err := framework.KubeBinDir()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	args = append([]string{"--kubeconfig", f.env.Kubeconfig(), "--context", cluster}, args...)
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "kubectl"), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("$ kubectl %s\n%s", strings.Join(args[2:], " "), out.String())
	return out.String(), err
}

// waitDeploymentAvailable waits until Deployment namespace/name is
// Available.
func waitDeploymentAvailable(t *testing.T, c client.Client, namespace, name string) {
	t.Helper()
	waitDeploymentImage(t, c, namespace, name, "")
}

// applyWork creates a ManifestWork holding a ConfigMap for cluster and waits
// until it is Applied and the ConfigMap exists on the managed cluster.
func applyWork(t *testing.T, hub, managed client.Client, cluster string) {
	t.Helper()
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "gitops"},
		Data:       map[string]string{"installed-by": cluster},
	}
	raw, err := json.Marshal(cm)
	require.NoError(t, err)
	mw := &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Namespace: cluster, Name: "gitops"},
		Spec:       workv1.ManifestWorkSpec{Workload: workv1.ManifestsTemplate{Manifests: []workv1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
	}
	require.NoError(t, hub.Create(t.Context(), mw))
	framework.Eventually(t.Context(), t, time.Minute, "ManifestWork "+cluster+"/gitops Applied", func(ctx context.Context) (bool, error) {
		if err := hub.Get(ctx, client.ObjectKeyFromObject(mw), mw); err != nil {
			return false, err
		}
		return meta.IsStatusConditionTrue(mw.Status.Conditions, workv1.WorkApplied), nil
	})
	got := &corev1.ConfigMap{}
	require.NoError(t, managed.Get(t.Context(), client.ObjectKeyFromObject(cm), got), "the work's ConfigMap on %s", cluster)
	assert.Equal(t, cluster, got.Data["installed-by"])
}

// decodeManifests decodes the manifests of a dry run: YAML documents, or a
// JSON v1 List whose items it returns.
func decodeManifests(t *testing.T, manifests string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := config.DecodeDocuments([]byte(manifests))
	require.NoError(t, err)
	if len(objs) != 1 || !objs[0].IsList() {
		return objs
	}
	list, err := objs[0].ToList()
	require.NoError(t, err)
	out := make([]*unstructured.Unstructured, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	return out
}

// liveObjects reads each of objs from the cluster and returns them as JSON,
// keyed by kind, namespace and name, without what the API server or the
// apply method records (status, managed fields, versions, UIDs, timestamps,
// kubectl's last-applied annotation).
func liveObjects(t *testing.T, c client.Client, objs []*unstructured.Unstructured) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, obj := range objs {
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(obj.GroupVersionKind())
		require.NoError(t, c.Get(t.Context(), client.ObjectKeyFromObject(obj), live), "read %s %s", obj.GetKind(), obj.GetName())
		unstructured.RemoveNestedField(live.Object, "status")
		for _, f := range []string{"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation"} {
			unstructured.RemoveNestedField(live.Object, "metadata", f)
		}
		unstructured.RemoveNestedField(live.Object, "metadata", "annotations", corev1.LastAppliedConfigAnnotation)
		if len(live.GetAnnotations()) == 0 {
			unstructured.RemoveNestedField(live.Object, "metadata", "annotations")
		}
		data, err := json.Marshal(live.Object)
		require.NoError(t, err)
		out[obj.GetKind()+" "+client.ObjectKeyFromObject(obj).String()] = string(data)
	}
	return out
}
