package hub

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/clusterinfo"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// ControllerDeployment is the name of the hub controller Deployment in
// config.HubNamespace.
const ControllerDeployment = config.HubControllerDeployment

// writeOutputFile writes the manifests init applies to --output-file, when
// it is set, owner-only when they hold registry credentials.
func (o *InitOptions) writeOutputFile(objs []*unstructured.Unstructured) error {
	if o.OutputFile == "" {
		return nil
	}
	all, err := o.manifests(objs)
	if err != nil {
		return err
	}
	mode := cli.PublicFileMode
	if o.pullCredentials != nil {
		mode = cli.PrivateFileMode // it holds the registry credentials
	}
	return cli.WriteManifestsFile("--output-file", o.OutputFile, all, mode)
}

// Run writes the ClusterManager operator and the ClusterManager, optionally
// waits until the ClusterManager is Available, and prints the join command.
func (o *InitOptions) Run(ctx context.Context) error {
	objs, err := config.HubOperatorObjects(o.operatorValues())
	if err == nil {
		// Applied in install order: the Secret before the operator's
		// Deployment, which pulls with it.
		objs, err = pullsecret.Append(objs, config.OperatorNamespace, o.pullCredentials)
	}
	if err != nil {
		return fmt.Errorf("render hub manifests: %w", err)
	}
	if err := o.writeOutputFile(objs); err != nil {
		return err
	}
	if o.DryRun == cli.DryRunClient {
		return o.printDryRun(objs)
	}
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	if err := checkAdmissionPolicyAPI(ctx, d, cfg.Host); err != nil {
		return err
	}
	if err := apply.Apply(ctx, c, objs, apply.Options{DryRun: o.DryRun == cli.DryRunServer}); err != nil {
		return fmt.Errorf("install the hub on %s: %w", cfg.Host, err)
	}
	if o.DryRun == cli.DryRunServer {
		for _, obj := range apply.Sort(objs) {
			fmt.Fprintf(o.Out, "%s (server dry run)\n", apply.Describe(obj))
		}
		return nil
	}
	fmt.Fprintf(o.ErrOut, "Applied %d hub objects to %s; the ClusterManager operator installs the rest.\n", len(objs), cfg.Host)
	if err := publishClusterInfo(ctx, c, cfg, o.ErrOut); err != nil {
		return err
	}
	in := cli.NewInspector(c, cfg, cli.ImageFlagsFix)
	if o.Wait {
		if err := WaitForClusterManager(ctx, c, in, o.ErrOut, o.Timeout, operatorv1.ClusterManagerName); err != nil {
			return err
		}
	} else if err := waitForBootstrapIdentity(ctx, o, c, in); err != nil {
		return err
	}
	if err := migrateStoredVersions(ctx, o, c, in); err != nil {
		return err
	}
	join, err := NewJoinInfo(ctx, c, cfg, o.TokenDuration, o.ClusterName)
	if err != nil {
		return err
	}
	if o.OutputJoinCommandFile != "" {
		if err := cli.WriteFile("--output-join-command-file", o.OutputJoinCommandFile, []byte(joinScript(join)), cli.PrivateScriptMode); err != nil {
			return err
		}
	}
	if o.Output != "" {
		return cli.PrintData(o.Out, o.Output, join)
	}
	name := "Replace <cluster_name> with a name for the cluster."
	if join.ClusterName != "" {
		name = fmt.Sprintf("The token may register managed cluster %s only; 'kubectl ocm hub token --cluster-name NAME' prints one for another cluster.", join.ClusterName)
	}
	fmt.Fprintf(o.Out, `The multicluster hub control plane has been initialized successfully!

You can now register clusters to the hub by running on each of them:

    %s

%s The token expires at %s;
'kubectl ocm hub token' prints a new one.
`, join.Command(), name, join.ExpirationTimestamp.UTC().Format("2006-01-02T15:04:05Z"))
	printPinNote(o.Out, join)
	return nil
}

// printDryRun prints what init would apply, contacting no cluster: the hub
// objects and, with --cluster-name, the cluster's bootstrap identity.
func (o *InitOptions) printDryRun(objs []*unstructured.Unstructured) error {
	objs, err := o.manifests(objs)
	if err != nil {
		return err
	}
	if o.Output != "" {
		return cli.PrintManifests(o.Out, objs, o.Output)
	}
	for _, obj := range objs {
		fmt.Fprintf(o.Out, "%s (dry run)\n", apply.Describe(obj))
	}
	return nil
}

// manifests returns, in the order init applies them, the hub objects objs
// and, with --cluster-name, the cluster's bootstrap identity, which init
// creates when it issues the token.
func (o *InitOptions) manifests(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if o.ClusterName != "" {
		boot, err := config.ClusterBootstrapObjects(o.ClusterName)
		if err != nil {
			return nil, err
		}
		objs = append(slices.Clip(objs), boot...)
	}
	return apply.Sort(objs), nil
}

// joinScript is what --output-join-command-file writes: a shell script that
// runs the join command of join, taking the cluster name as its first
// argument unless the token is bound to a cluster, and passing the
// arguments that follow to kubectl ocm join (--context, --wait, ...).
func joinScript(join JoinInfo) string {
	expiry := join.ExpirationTimestamp.UTC().Format("2006-01-02T15:04:05Z")
	if join.ClusterName != "" {
		return fmt.Sprintf(`#!/bin/sh
# Joins managed cluster %[1]s to the hub at %[2]s: sh FILE [kubectl ocm join flags].
# The token may register %[1]s only and expires at %[3]s; 'kubectl ocm hub token --cluster-name %[1]s' prints a new one.
exec %[4]s "$@"
`, join.ClusterName, join.HubAPIServer, expiry, join.Command())
	}
	return fmt.Sprintf(`#!/bin/sh
# Joins a cluster to the hub at %[1]s: sh FILE CLUSTER_NAME [kubectl ocm join flags].
# The token expires at %[2]s; 'kubectl ocm hub token' prints a new one.
[ $# -ge 1 ] || { echo "usage: sh $0 CLUSTER_NAME [kubectl ocm join flags]" >&2; exit 2; }
name=$1
shift
exec %[3]s "$@"
`, join.HubAPIServer, expiry, join.CommandFor(`"$name"`))
}

// Deployments of the hub that init waits for.
var (
	// operatorDeployment runs the ClusterManager operator.
	operatorDeployment = types.NamespacedName{Namespace: config.OperatorNamespace, Name: config.HubOperatorDeployment}
	// controllerDeployment runs the hub controller.
	controllerDeployment = types.NamespacedName{Namespace: config.HubNamespace, Name: config.HubControllerDeployment}
)

// WaitForClusterManager waits until the ClusterManager name is Available
// at its current generation, writing its progress to out with what in
// finds about the operator's and the hub controller's Deployments while
// they are not ready. It stops at once, with the cause, when the operator
// rejects the ClusterManager's spec; when it times out, the error names the
// last Pod-level cause seen.
func WaitForClusterManager(ctx context.Context, c client.Client, in *deploystatus.Inspector, out io.Writer, timeout time.Duration, name string) error {
	var rejected error
	what := fmt.Sprintf("ClusterManager %s to be available", name)
	err := cli.Wait(ctx, out, timeout, what, func(ctx context.Context) (bool, string, error) {
		cm := &operatorv1.ClusterManager{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, cm); err != nil {
			return false, "", err
		}
		done, state, err := clusterManagerState(cm)
		rejected = err
		if done || err != nil {
			return true, state, nil
		}
		return false, cli.DescribeNotReady(ctx, in, state, operatorDeployment, controllerDeployment), nil
	})
	if err != nil {
		return in.Explain(fmt.Errorf("%w; the ClusterManager operator runs as Deployment %s ('kubectl ocm hub status' reports both)", err, operatorDeployment))
	}
	return rejected
}

// clusterManagerState reports whether cm is Available at its current
// generation and describes its state; the error is the operator's
// rejection of its spec (Applied False for a field that cannot take effect).
func clusterManagerState(cm *operatorv1.ClusterManager) (bool, string, error) {
	if cm.Status.ObservedGeneration != cm.Generation {
		return false, fmt.Sprintf("generation %d not yet observed by the ClusterManager operator", cm.Generation), nil
	}
	applied := meta.FindStatusCondition(cm.Status.Conditions, operatorv1.ConditionClusterManagerApplied)
	if applied != nil && applied.ObservedGeneration == cm.Generation && applied.Status == metav1.ConditionFalse &&
		applied.Reason != operatorv1.ReasonRuntimeResourceApplyFailed {
		return false, "", fmt.Errorf("the ClusterManager operator rejected ClusterManager %s: %s: %s", cm.Name, applied.Reason, applied.Message)
	}
	available := meta.FindStatusCondition(cm.Status.Conditions, operatorv1.ConditionClusterManagerAvailable)
	switch {
	case available == nil || available.ObservedGeneration != cm.Generation:
		return false, "no Available condition at the current generation yet", nil
	case available.Status == metav1.ConditionTrue:
		return true, "", nil
	}
	return false, available.Message, nil
}

// waitForBootstrapIdentity waits until the operator has created the
// bootstrap ServiceAccount, whose token the join command carries, naming
// what in finds about the operator's Deployment while it is not ready.
func waitForBootstrapIdentity(ctx context.Context, o *InitOptions, c client.Client, in *deploystatus.Inspector) error {
	key := client.ObjectKey{Namespace: identity.BootstrapNamespace, Name: identity.BootstrapServiceAccount}
	what := fmt.Sprintf("the ClusterManager operator to create ServiceAccount %s/%s", key.Namespace, key.Name)
	return in.Explain(cli.Wait(ctx, o.ErrOut, o.Timeout, what, func(ctx context.Context) (bool, string, error) {
		err := c.Get(ctx, key, &corev1.ServiceAccount{})
		if apierrors.IsNotFound(err) {
			return false, cli.DescribeNotReady(ctx, in, "not created yet", operatorDeployment), nil
		}
		return err == nil, "", err
	}))
}

// migrateStoredVersions brings add-on objects a previous version of the hub
// stored at another version to the storage version: when a converted CRD's
// status.storedVersions says so, it waits for the conversion webhook, which
// the upgraded hub controller serves, then rewrites them.
func migrateStoredVersions(ctx context.Context, o *InitOptions, c client.Client, in *deploystatus.Inspector) error {
	pending, err := conversion.MigrationPending(ctx, c)
	if err != nil || !pending {
		return err
	}
	what := "the add-on conversion webhook of the hub controller, to migrate stored add-on objects"
	err = cli.Wait(ctx, o.ErrOut, o.Timeout, what, func(ctx context.Context) (bool, string, error) {
		if err := conversion.ProbeAll(ctx, c); err != nil {
			return false, cli.DescribeNotReady(ctx, in, err.Error(), controllerDeployment), nil
		}
		return true, "", nil
	})
	if err != nil {
		return in.Explain(fmt.Errorf("%w; the add-on objects stay at their earlier version: check the hub controller (kubectl ocm hub status) and run 'kubectl ocm hub init' again", err))
	}
	migrated, err := conversion.MigrateStoredVersions(ctx, c)
	for _, m := range migrated {
		fmt.Fprintf(o.ErrOut, "Migrated %d %ss from %v to %s.\n", m.Objects, m.Kind, m.From, m.To)
	}
	if err != nil {
		return fmt.Errorf("%w; run 'kubectl ocm hub init' again to finish the migration", err)
	}
	return nil
}

// publishClusterInfo writes ConfigMap kube-public/cluster-info, naming the
// hub's API server as cfg reaches it, when the hub has none (kubeadm's
// clusters have one): the cluster importer tells imported clusters' agents
// that address, as join's --hub-apiserver does.
func publishClusterInfo(ctx context.Context, c client.Client, cfg *rest.Config, out io.Writer) error {
	_, err := clusterinfo.Get(ctx, c)
	if !apierrors.IsNotFound(err) {
		return err
	}
	ca := cfg.CAData
	if bundle, _, err := certs.ReadHubCABundle(ctx, c); err == nil {
		ca = bundle
	}
	cm, err := clusterinfo.New(cfg.Host, ca)
	if err != nil {
		return err
	}
	if err := c.Create(ctx, cm); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("publish the hub's address in ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	fmt.Fprintf(out, "Published the hub's address %s in ConfigMap %s/%s, for the clusters the hub imports.\n", cfg.Host, cm.Namespace, cm.Name)
	return nil
}
