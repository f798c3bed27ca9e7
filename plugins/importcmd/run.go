package importcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusternamespace"
	imp "github.com/kubectl-ocm/kubectl-ocm/pkg/importer"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// ImporterDeployment is the cluster importer's Deployment in
// config.HubNamespace, which the ClusterImporter gate has the operator
// install.
const ImporterDeployment = "ocm-importer"

// enableImporter is the command that turns the importer on.
const enableImporter = `kubectl patch clustermanager cluster-manager --type=merge -p '{"spec":{"registrationConfiguration":{"featureGates":[{"feature":"ClusterImporter","mode":"Enable"}]}}}'`

// enableConfigRenderer is the command that has the importer apply the
// import configuration after its own rendering.
const enableConfigRenderer = `kubectl patch clustermanager cluster-manager --type=merge -p '{"spec":{"registrationConfiguration":{"importerConfiguration":{"renderers":["render-auto","render-from-config-secret"]}}}}'`

// Run writes the ManagedCluster and the import Secret and, with --wait,
// waits for the import (and with --accept accepts the cluster).
func (o *Options) Run(ctx context.Context) error {
	objs, err := o.objects()
	if err != nil {
		return err
	}
	if o.DryRun == cli.DryRunClient {
		return o.print(objs)
	}
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	if sameHost(cfg.Host, o.server) {
		return fmt.Errorf("--managed-cluster-kubeconfig points at %s, the hub itself: give a kubeconfig of the cluster to import", o.server)
	}
	importer := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: config.HubNamespace, Name: ImporterDeployment}, importer); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("the hub at %s runs no cluster importer (Deployment %s/%s): turn on its feature gate ClusterImporter with\n\n    %s\n\nand run import again", cfg.Host, config.HubNamespace, ImporterDeployment, enableImporter)
		}
		return fmt.Errorf("look for the cluster importer on %s: %w", cfg.Host, err)
	}
	if err := o.checkRenderers(ctx, c, importer); err != nil {
		return err
	}
	mc := &clusterv1.ManagedCluster{}
	switch err := c.Get(ctx, client.ObjectKey{Name: o.Cluster}, mc); {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("read ManagedCluster %s: %w", o.Cluster, err)
	default:
		// The cluster exists: its spec (hubAcceptsClient, taints) is left
		// as it is.
		objs = objs[1:]
		if meta.IsStatusConditionTrue(mc.Status.Conditions, clusterv1.ManagedClusterConditionJoined) {
			fmt.Fprintf(o.ErrOut, "Warning: cluster %s has joined already; the import installs its agent again.\n", o.Cluster)
		}
	}
	if o.DryRun != cli.DryRunServer {
		if objs, err = o.writeCluster(ctx, c, objs); err != nil {
			return err
		}
	}
	// The import Secret goes last: the importer starts when it appears,
	// and reads the configuration then.
	last := len(objs) - 1
	for _, batch := range [][]*unstructured.Unstructured{objs[:last], objs[last:]} {
		if err := apply.Apply(ctx, c, batch, apply.Options{DryRun: o.DryRun == cli.DryRunServer, FieldManager: cli.FieldManagerFrom(ctx)}); err != nil {
			return fmt.Errorf("write the import of cluster %s on %s: %w", o.Cluster, cfg.Host, err)
		}
	}
	if o.DryRun == cli.DryRunServer {
		for _, obj := range apply.Sort(objs) {
			fmt.Fprintf(o.Out, "%s (server dry run)\n", apply.Describe(obj))
		}
		return nil
	}
	sec := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: o.Cluster, Name: imp.SecretName}, sec); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	fmt.Fprintf(o.Out, "Wrote the import Secret %s/%s for the cluster at %s; the hub's importer installs the agent with it.\n", o.Cluster, imp.SecretName, o.server)
	if !o.Wait {
		fmt.Fprintf(o.Out, "Follow it with 'kubectl get managedcluster %s' (condition %s), then accept the cluster with 'kubectl ocm accept --clusters %s'.\n", o.Cluster, imp.ConditionImportSucceeded, o.Cluster)
		return nil
	}
	if err := o.waitImported(ctx, c, sec.ResourceVersion); err != nil {
		return err
	}
	if !o.Accept {
		fmt.Fprintf(o.Out, "Accept the cluster with 'kubectl ocm accept --clusters %s' unless its bootstrap identity is auto-approved.\n", o.Cluster)
		return nil
	}
	if o.accept == nil {
		return fmt.Errorf("this command cannot accept clusters: run 'kubectl ocm accept --clusters %s'", o.Cluster)
	}
	return o.accept(ctx, []string{o.Cluster}, o.Timeout)
}

// writeCluster writes the ManagedCluster when objs hold it, then creates
// its namespace as the hub creates it, marked with the ManagedCluster's UID
// (pkg/clusternamespace), so that the hub takes it as the cluster's own and
// deletes it with the cluster. An existing namespace is left as it is: the
// importer adopts it when it uses the import Secret, and the hub never
// deletes it. It returns the rest of objs.
func (o *Options) writeCluster(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var rest []*unstructured.Unstructured
	for _, obj := range objs {
		switch obj.GetKind() {
		case "ManagedCluster":
			if err := apply.Apply(ctx, c, []*unstructured.Unstructured{obj}, apply.Options{FieldManager: cli.FieldManagerFrom(ctx)}); err != nil {
				return nil, fmt.Errorf("write ManagedCluster %s: %w", o.Cluster, err)
			}
		case "Namespace":
		default:
			rest = append(rest, obj)
		}
	}
	mc := &clusterv1.ManagedCluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: o.Cluster}, mc); err != nil {
		return nil, fmt.Errorf("read ManagedCluster %s: %w", o.Cluster, err)
	}
	if err := c.Create(ctx, clusternamespace.New(o.Cluster, mc.UID), client.FieldOwner(cli.FieldManagerFrom(ctx))); client.IgnoreAlreadyExists(err) != nil {
		return nil, fmt.Errorf("create namespace %s: %w", o.Cluster, err)
	}
	return rest, nil
}

// waitImported waits until the importer reports on the import Secret at
// resourceVersion version: done when it succeeded, an error naming the
// cause when it failed.
func (o *Options) waitImported(ctx context.Context, c client.Client, version string) error {
	return cli.Wait(ctx, o.ErrOut, o.Timeout, "the import of cluster "+o.Cluster, func(ctx context.Context) (bool, string, error) {
		mc := &clusterv1.ManagedCluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: o.Cluster}, mc); err != nil {
			return false, "", err
		}
		cond := meta.FindStatusCondition(mc.Status.Conditions, imp.ConditionImportSucceeded)
		if cond == nil || !imp.ForVersion(cond.Message, version) {
			return false, "the importer has not reported on the Secret yet", nil
		}
		if cond.Status == metav1.ConditionTrue {
			fmt.Fprintf(o.Out, "Imported cluster %s: %s\n", o.Cluster, cond.Message)
			return true, "", nil
		}
		return false, "", cli.Stop(fmt.Errorf("the import of cluster %s failed (%s): %s; the importer tries again with backoff until the Secret changes: fix the credential and run import again", o.Cluster, cond.Reason, cond.Message))
	})
}

// objects returns what import writes: the ManagedCluster, the cluster's
// namespace, the import configuration with --values-file, and the import
// Secret, last.
func (o *Options) objects() ([]*unstructured.Unstructured, error) {
	typed := []client.Object{
		&clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: o.Cluster}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Cluster}},
	}
	if o.values != nil {
		typed = append(typed, imp.NewConfigSecret(o.Cluster, o.values))
	}
	typed = append(typed, imp.NewSecret(o.Cluster, o.kubeconfig, o.KeepSecret))
	var out []*unstructured.Unstructured
	for _, obj := range typed {
		u, err := apply.ToUnstructured(obj, apis.Scheme)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// print prints the objects of a client dry run.
func (o *Options) print(objs []*unstructured.Unstructured) error {
	objs = apply.Sort(objs)
	if o.Output != "" {
		fmt.Fprintf(o.ErrOut, "Note: Secret %s/%s holds the cluster's credential: keep it encrypted (a sealed or external secret), never in plain text in a repository.\n", o.Cluster, imp.SecretName)
		return cli.PrintManifests(o.Out, objs, o.Output)
	}
	for _, obj := range objs {
		fmt.Fprintf(o.Out, "%s (client dry run)\n", apply.Describe(obj))
	}
	return nil
}

// checkRenderers checks that the hub's importer, Deployment d, applies
// the import configuration exactly when there is one: with --values-file
// its --import-renderers must list render-from-config-secret, and when they
// do, the cluster needs a Secret cluster-import-config from --values-file
// or from before.
func (o *Options) checkRenderers(ctx context.Context, c client.Client, d *appsv1.Deployment) error {
	var renderers []string
	for _, ctr := range d.Spec.Template.Spec.Containers {
		for _, arg := range ctr.Args {
			if v, ok := strings.CutPrefix(arg, "--import-renderers="); ok {
				renderers = strings.Split(v, ",")
			}
		}
	}
	reads := slices.Contains(renderers, config.ImportRendererFromConfigSecret)
	switch {
	case o.values != nil && !reads:
		return fmt.Errorf("the hub's importer does not read --values-file: its renderers are %s, without %s. List it after %s with\n\n    %s\n\nand run import again",
			cmp.Or(strings.Join(renderers, ","), config.ImportRendererAuto+" (the default)"), config.ImportRendererFromConfigSecret, config.ImportRendererAuto, enableConfigRenderer)
	case o.values == nil && reads:
		err := c.Get(ctx, client.ObjectKey{Namespace: o.Cluster, Name: imp.ConfigSecretName}, &corev1.Secret{})
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("the hub's importer renders the Klusterlet from the cluster's Secret %s/%s too (renderer %s), and there is none: give the klusterlet chart's values with --values-file",
				o.Cluster, imp.ConfigSecretName, config.ImportRendererFromConfigSecret)
		}
		if err != nil {
			return fmt.Errorf("look for Secret %s/%s: %w", o.Cluster, imp.ConfigSecretName, err)
		}
	}
	return nil
}

// sameHost reports whether the URLs a and b name the same host and port.
func sameHost(a, b string) bool {
	ua, errA := url.Parse(a)
	ub, errB := url.Parse(b)
	if errors.Join(errA, errB) != nil {
		return false
	}
	return ua.Host == ub.Host
}
