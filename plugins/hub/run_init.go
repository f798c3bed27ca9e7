package hub

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// ControllerDeployment is the name of the hub controller Deployment in
// config.HubNamespace.
const ControllerDeployment = "ocm-hub-controller"

// Run installs the hub, optionally waits for its controller, and prints the
// join command.
func (o *InitOptions) Run(ctx context.Context) error {
	objs, err := config.HubObjects(config.HubValues{Image: o.Image, AutoApproveUsers: o.AutoApprovedCSRIdentities, ConversionWebhookURL: o.ConversionWebhookURL})
	if err != nil {
		return fmt.Errorf("render hub manifests: %w", err)
	}
	if o.DryRun == cli.DryRunClient {
		return o.printDryRun(objs)
	}
	c, cfg, err := cli.NewClient(o.getter)
	if err != nil {
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
	fmt.Fprintf(o.ErrOut, "Applied %d hub objects to %s.\n", len(objs), cfg.Host)
	if o.Wait {
		if err := waitForController(ctx, o, c); err != nil {
			return err
		}
	}
	if err := migrateStoredVersions(ctx, o, c); err != nil {
		return err
	}
	join, err := cli.NewJoinInfo(ctx, c, cfg, o.TokenDuration, o.ClusterName)
	if err != nil {
		return err
	}
	if o.Output != "" {
		return printData(o.Out, o.Output, join)
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
	return nil
}

// printDryRun prints what init would apply, contacting no cluster: the hub
// objects and, with --cluster-name, the cluster's bootstrap identity.
func (o *InitOptions) printDryRun(objs []*unstructured.Unstructured) error {
	if o.ClusterName != "" {
		boot, err := config.ClusterBootstrapObjects(o.ClusterName)
		if err != nil {
			return err
		}
		objs = append(objs, boot...)
	}
	if o.Output != "" {
		return cli.PrintManifests(o.Out, apply.Sort(objs), o.Output)
	}
	for _, obj := range apply.Sort(objs) {
		fmt.Fprintf(o.Out, "%s (dry run)\n", apply.Describe(obj))
	}
	return nil
}

// waitForController waits until the hub controller Deployment is available.
func waitForController(ctx context.Context, o *InitOptions, c client.Client) error {
	what := fmt.Sprintf("Deployment %s/%s to be available", config.HubNamespace, ControllerDeployment)
	return cli.Wait(ctx, o.ErrOut, o.Timeout, what, func(ctx context.Context) (bool, string, error) {
		dep := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: config.HubNamespace, Name: ControllerDeployment}, dep); err != nil {
			return false, "", err
		}
		ok, state := deploymentState(dep)
		return ok, state, nil
	})
}

// deploymentState reports whether dep is available and describes its state,
// naming the reason of a failing condition when there is one.
func deploymentState(dep *appsv1.Deployment) (bool, string) {
	want := int32(1)
	if dep.Spec.Replicas != nil {
		want = *dep.Spec.Replicas
	}
	state := fmt.Sprintf("%d/%d replicas available", dep.Status.AvailableReplicas, want)
	available := false
	for _, c := range dep.Status.Conditions {
		switch {
		case c.Type == appsv1.DeploymentAvailable && c.Status == "True":
			available = true
		case c.Status == "False" && c.Message != "":
			state += fmt.Sprintf("; %s: %s", c.Reason, c.Message)
		}
	}
	return available && dep.Status.AvailableReplicas >= want && dep.Status.ObservedGeneration >= dep.Generation, state
}

// migrateStoredVersions brings add-on objects a previous version of the hub
// stored at another version to the storage version: when a converted CRD's
// status.storedVersions says so, it waits for the conversion webhook, which
// the upgraded hub controller serves, then rewrites them.
func migrateStoredVersions(ctx context.Context, o *InitOptions, c client.Client) error {
	pending, err := conversion.MigrationPending(ctx, c)
	if err != nil || !pending {
		return err
	}
	what := "the add-on conversion webhook of the hub controller, to migrate stored add-on objects"
	err = cli.Wait(ctx, o.ErrOut, o.Timeout, what, func(ctx context.Context) (bool, string, error) {
		if err := conversion.Probe(ctx, c); err != nil {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
	if err != nil {
		return fmt.Errorf("%w; the add-on objects stay at their earlier version: check the hub controller (kubectl ocm hub status) and run 'kubectl ocm hub init' again", err)
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
