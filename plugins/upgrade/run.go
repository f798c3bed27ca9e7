package upgrade

import (
	"context"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apply"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/pullsecret"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/version"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Result is what an upgrade reports, and its -o json|yaml form.
type Result struct {
	// Kind is ClusterManager or Klusterlet.
	Kind string `json:"kind"`
	// Name is the resource's name.
	Name string `json:"name"`
	// Image is the image it runs now.
	Image string `json:"image"`
	// PreviousImages are the images its spec named before.
	PreviousImages []string `json:"previousImages,omitempty"`
	// Changed is false when it named Image already: nothing was done.
	Changed bool `json:"changed"`
	// RolledOut names the Deployments the upgrade saw roll out at Image, as
	// namespace/name; empty without --wait.
	RolledOut []string `json:"rolledOut,omitempty"`
	// Warnings are the problems found and passed over, also written to stderr.
	Warnings []string `json:"warnings,omitempty"`
	// DryRun is client or server when the upgrade was a dry run: Changed
	// then says what it would change, and nothing was.
	DryRun string `json:"dryRun,omitempty"`
	// ImagePullSecret is the Secret, as namespace/name, that
	// --image-pull-credentials wrote (or, in a dry run, would write).
	ImagePullSecret string `json:"imagePullSecret,omitempty"`
}

// Run sets the image of the resource and of its operator, and with --wait
// waits until the new image runs everywhere it should.
func (o *Options) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	return o.run(ctx, c, cli.NewInspector(c, cfg, cli.ImageFlagsFix), cfg.Host)
}

// run is Run on the cluster of client c at host, with in inspecting the
// Deployments the upgrade waits for.
func (o *Options) run(ctx context.Context, c client.Client, in *deploystatus.Inspector, host string) error {
	obj, kind, operator := o.subject()
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return fmt.Errorf("%s has no %s %s: %s", host, kind, o.Name, o.notInstalledFix())
		}
		return fmt.Errorf("read %s %s on %s: %w", kind, o.Name, host, err)
	}
	opDep := &appsv1.Deployment{}
	if err := c.Get(ctx, operator, opDep); apierrors.IsNotFound(err) {
		opDep = nil
	} else if err != nil {
		return fmt.Errorf("read the operator Deployment %s on %s: %w", operator, host, err)
	}
	res := &Result{Kind: kind, Name: o.Name, Image: o.Image, PreviousImages: previousImages(obj)}
	if cli.IsDryRun(o.DryRun) {
		res.DryRun = o.DryRun
	}
	patch, err := imagePatch(obj, o.Image)
	if err != nil {
		return err
	}
	opPatch, err := operatorPatch(opDep, o.Image, res.PreviousImages, o.pullCredentials != nil)
	if err != nil {
		return err
	}
	if res.Changed = patch != nil || opPatch != nil; res.Changed {
		if res.Warnings, err = o.checkSkew(ctx, c); err != nil {
			return err
		}
		for _, w := range res.Warnings {
			fmt.Fprintf(o.ErrOut, "Warning: %s\n", w)
		}
	}
	// The Secret first: the operator's new Pod pulls with it.
	if err := o.writePullSecret(ctx, c, res); err != nil {
		return fmt.Errorf("%w on %s", err, host)
	}
	if res.Changed {
		if err := o.apply(ctx, cli.DryRunWriter(c, o.DryRun), obj, kind, opDep, patch, opPatch); err != nil {
			return fmt.Errorf("%w on %s", err, host)
		}
	} else {
		fmt.Fprintf(o.ErrOut, "%s %s names %s already: nothing to change.\n", kind, o.Name, o.Image)
	}
	if o.Wait && !cli.IsDryRun(o.DryRun) {
		if opDep != nil && !runsImage(opDep, o.Image) {
			opDep = nil // no ocm-controller container: not an operator this upgrade moves
		}
		if res.RolledOut, err = o.waitRollout(ctx, c, in, obj, kind, opDep); err != nil {
			return err
		}
	}
	return o.print(res)
}

// writePullSecret creates or updates the image pull Secret of
// --image-pull-credentials in the operator's namespace, when given, and
// records it in res; a client dry run writes nothing, a server dry run has
// the cluster admit it.
func (o *Options) writePullSecret(ctx context.Context, c client.Client, res *Result) error {
	if o.pullCredentials == nil {
		return nil
	}
	objs, err := pullsecret.Append(nil, operatorv1.OperatorNamespace, o.pullCredentials)
	if err != nil {
		return err
	}
	if o.DryRun != cli.DryRunClient {
		if err := apply.Apply(ctx, c, objs, apply.Options{DryRun: o.DryRun == cli.DryRunServer}); err != nil {
			return fmt.Errorf("write the image pull Secret: %w", err)
		}
	}
	res.ImagePullSecret = operatorv1.OperatorNamespace + "/" + pullsecret.Name
	fmt.Fprintf(o.ErrOut, "Wrote the image pull Secret %s from %s%s.\n", res.ImagePullSecret, o.ImagePullCredentials, cli.DryRunSuffix(o.DryRun))
	return nil
}

// apply writes patch to obj, a kind, and opPatch to the operator Deployment opDep,
// each when not nil.
func (o *Options) apply(ctx context.Context, c client.Client, obj client.Object, kind string, opDep *appsv1.Deployment, patch, opPatch []byte) error {
	if patch != nil {
		if err := c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return fmt.Errorf("set the image of %s %s: %w", kind, o.Name, err)
		}
	}
	if opPatch != nil {
		if err := c.Patch(ctx, opDep, client.RawPatch(types.StrategicMergePatchType, opPatch)); err != nil {
			return fmt.Errorf("set the image of the operator Deployment %s/%s: %w", opDep.Namespace, opDep.Name, err)
		}
	}
	what := map[bool]string{true: " and of its operator", false: ""}[opPatch != nil]
	fmt.Fprintf(o.ErrOut, "Set the image of %s %s%s to %s%s.\n", kind, o.Name, what, o.Image, cli.DryRunSuffix(o.DryRun))
	return nil
}

// subject returns an empty resource of the target with its name, its kind,
// and the name of its operator's Deployment: each operator runs the same
// ocm-controller image as what it installs, so an upgrade moves it as well.
func (o *Options) subject() (client.Object, string, client.ObjectKey) {
	if o.Target == TargetKlusterlet {
		k := &operatorv1.Klusterlet{}
		k.Name = o.Name
		return k, "Klusterlet", client.ObjectKey{Namespace: operatorv1.OperatorNamespace, Name: config.KlusterletOperatorName}
	}
	cm := &operatorv1.ClusterManager{}
	cm.Name = o.Name
	return cm, "ClusterManager", client.ObjectKey{Namespace: operatorv1.OperatorNamespace, Name: config.HubOperatorDeployment}
}

// notInstalledFix says how to install what the target upgrades.
func (o *Options) notInstalledFix() string {
	if o.Target == TargetKlusterlet {
		return "join the cluster with `kubectl ocm join`, or select the managed cluster (in hosted mode, the hosting cluster and the Klusterlet's name) with --context and NAME"
	}
	return "install the hub with `kubectl ocm hub init`, or select the hub with --context"
}

// checkSkew checks that the new version keeps the skew policy. It fails when
// it does not, unless --force: then the problems are warnings.
func (o *Options) checkSkew(ctx context.Context, c client.Client) ([]string, error) {
	v := imageVersion(o.Image)
	var problems []string
	if o.Target == TargetHub {
		clusters, err := managedClusters(ctx, c)
		if err != nil {
			return nil, err
		}
		problems = hubSkew(v, version.Version, clusters)
	} else {
		if o.HubContext == "" && o.HubKubeconfig == "" {
			if _, release := version.Release(v); !release {
				return nil, nil
			}
			return []string{fmt.Sprintf("the agent version %s was not checked against the hub controller's: give --hub-context or --hub-kubeconfig to check it", v)}, nil
		}
		hub, err := o.hubControllerVersion(ctx, o.getter.ToRawKubeConfigLoader().ConfigAccess().GetExplicitFile())
		if err != nil {
			return nil, err
		}
		problems = agentSkew(hub, v)
	}
	if len(problems) == 0 {
		return nil, nil
	}
	what := map[string]string{TargetHub: "the hub", TargetKlusterlet: "the agent"}[o.Target]
	if !o.Force {
		return nil, skewError(what, v, problems)
	}
	return problems, nil
}

// waitRollout waits until obj's operator has acted on its new generation and
// every Deployment it lists, and the operator's own Deployment opDep when
// not nil, rolled out at the new image and is available. While one is not,
// the progress names the Pod-level cause in finds, and so does the error
// when the wait fails. It returns those Deployments as namespace/name.
func (o *Options) waitRollout(ctx context.Context, c client.Client, in *deploystatus.Inspector, obj client.Object, kind string, opDep *appsv1.Deployment) ([]string, error) {
	what := fmt.Sprintf("%s %s to run %s", kind, o.Name, o.Image)
	gen := obj.GetGeneration()
	var rolled []string
	err := cli.Wait(ctx, o.ErrOut, o.Timeout, what, func(ctx context.Context) (bool, string, error) {
		obs, err := observe(ctx, c, obj, opDep)
		if err != nil {
			return false, "", err
		}
		obs.kind, obs.name, obs.generation, obs.image = kind, o.Name, gen, o.Image
		var causes []string
		for _, d := range obs.deployments {
			if r := in.Inspect(ctx, d); r.Cause != nil {
				causes = append(causes, r.Cause.String())
			}
		}
		done, state, err := judge(obs)
		if err != nil {
			return false, "", cli.Stop(err)
		}
		rolled = rolled[:0]
		for _, d := range obs.deployments {
			rolled = append(rolled, d.Namespace+"/"+d.Name)
		}
		if !done && len(causes) > 0 {
			state += "; " + strings.Join(causes, "; ")
		}
		return done, state, nil
	})
	return rolled, in.Explain(err)
}

// observe reads obj again, the Deployments its status lists and opDep.
func observe(ctx context.Context, c client.Client, obj client.Object, opDep *appsv1.Deployment) (observation, error) {
	fresh := obj.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), fresh); err != nil {
		return observation{}, err
	}
	obs := observation{status: statusOf(fresh)}
	keys := obs.status.listedDeployments()
	if opDep != nil {
		keys = append([]client.ObjectKey{client.ObjectKeyFromObject(opDep)}, keys...)
	}
	for _, key := range keys {
		dep := &appsv1.Deployment{}
		switch err := c.Get(ctx, key, dep); {
		case apierrors.IsNotFound(err):
			obs.missing = append(obs.missing, key)
		case err != nil:
			return observation{}, err
		default:
			obs.deployments = append(obs.deployments, dep)
		}
	}
	return obs, nil
}

// print writes the result: -o json|yaml, or a summary.
func (o *Options) print(res *Result) error {
	if o.Output != "" {
		return cli.PrintData(o.Out, o.Output, res)
	}
	switch {
	case !res.Changed:
		fmt.Fprintf(o.Out, "%s %s already runs %s: nothing to do.\n", res.Kind, res.Name, res.Image)
	case res.DryRun != "":
		fmt.Fprintf(o.Out, "%s %s would be set to %s (was %s)%s.\n", res.Kind, res.Name, res.Image, strings.Join(res.PreviousImages, ", "), cli.DryRunSuffix(res.DryRun))
	case len(res.RolledOut) > 0:
		fmt.Fprintf(o.Out, "%s %s upgraded from %s to %s; rolled out: %s.\n", res.Kind, res.Name, strings.Join(res.PreviousImages, ", "), res.Image, strings.Join(res.RolledOut, ", "))
	default:
		fmt.Fprintf(o.Out, "%s %s set to %s (was %s); 'kubectl ocm upgrade %s --wait' waits for the rollout.\n",
			res.Kind, res.Name, res.Image, strings.Join(res.PreviousImages, ", "), o.Target)
	}
	return nil
}
