package work

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	workv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/work/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/work/internal/workpayload"
)

// Run reads and checks the manifests, checks every cluster, then writes the
// ManifestWork to each cluster's namespace; with --placement it writes one
// ManifestWorkReplicaSet instead.
func (o *CreateOptions) Run(ctx context.Context) error {
	manifests, err := cli.ReadManifests(o.Filenames, o.Recursive, o.In)
	if err != nil {
		return err
	}
	// Manifests over the limit of one ManifestWork become a large payload
	// (packPayload).
	if err := cli.ValidateManifests(manifests, workpayload.SizeLimit(manifests)); err != nil {
		return err
	}
	if o.Rollout.Placement != "" {
		return o.runReplicaSet(ctx, manifests)
	}
	if o.DryRun == cli.DryRunClient {
		works := make([]*unstructured.Unstructured, 0, len(o.Clusters))
		for _, cluster := range o.Clusters {
			w := o.buildWork(cluster, manifests, nil)
			if err := o.packPayload(&w.Spec); err != nil {
				return err
			}
			u, err := cli.ToUnstructured(w)
			if err != nil {
				return err
			}
			works = append(works, u)
		}
		return o.print(works, "created (dry run)")
	}
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	existing, err := o.precheck(ctx, c)
	if err != nil {
		return err
	}
	mapper := o.mapper()
	suffix := ""
	if o.DryRun == cli.DryRunServer {
		suffix = " (server dry run)"
	}
	var written []*unstructured.Unstructured
	for _, cluster := range o.Clusters {
		w := o.buildWork(cluster, manifests, mapper)
		if err := o.packPayload(&w.Spec); err != nil {
			return err
		}
		if err := o.writeChunks(ctx, c, cluster); err != nil {
			return err
		}
		work, err := cli.Apply(ctx, c, w, o.DryRun == cli.DryRunServer)
		if err != nil {
			return fmt.Errorf("write ManifestWork %s to cluster %s on %s: %w", o.Name, cluster, cfg.Host, err)
		}
		written = append(written, work)
		if cli.Output(o.PrintFlags) == "" {
			verb := "created"
			if existing[cluster] {
				verb = "configured"
			}
			fmt.Fprintf(o.Out, "ManifestWork %s %s in cluster %s%s\n", o.Name, verb, cluster, suffix)
		}
	}
	if cli.Output(o.PrintFlags) == "" {
		return nil
	}
	return o.print(written, "")
}

// mapper returns the hub's REST mapper when --update-strategy needs the
// resource of each manifest, else nil (resources are then guessed from the
// kinds, also when the hub cannot be asked).
func (o *CreateOptions) mapper() meta.RESTMapper {
	if o.UpdateStrategy == "" {
		return nil
	}
	mapper, err := o.getter.ToRESTMapper()
	if err != nil {
		return nil
	}
	return mapper
}

// precheck checks, before anything is written, that every cluster exists,
// is accepted and has its namespace, and that no work NAME exists there
// unless --overwrite. It returns the clusters that already have the work.
func (o *CreateOptions) precheck(ctx context.Context, c client.Client) (map[string]bool, error) {
	existing := map[string]bool{}
	var errs []error
	for _, cluster := range o.Clusters {
		if err := checkCluster(ctx, c, cluster); err != nil {
			errs = append(errs, err)
			continue
		}
		err := c.Get(ctx, client.ObjectKey{Namespace: cluster, Name: o.Name}, &workv1.ManifestWork{})
		switch {
		case err == nil && !o.Overwrite:
			errs = append(errs, fmt.Errorf("ManifestWork %s already exists in cluster %s: add --overwrite to replace its manifests, or choose another name", o.Name, cluster))
		case err == nil:
			existing[cluster] = true
		case !apierrors.IsNotFound(err):
			errs = append(errs, fmt.Errorf("read ManifestWork %s in cluster %s: %w", o.Name, cluster, err))
		}
	}
	return existing, errors.Join(errs...)
}

// checkCluster fails unless cluster is a ManagedCluster the hub accepted and
// its namespace exists and is not being deleted. A check the user may not
// make (a user who may only write works in cluster namespaces cannot read
// ManagedClusters or Namespaces) is skipped: the write then reports what is
// wrong.
func checkCluster(ctx context.Context, c client.Client, cluster string) error {
	mc := &clusterv1.ManagedCluster{}
	err := c.Get(ctx, client.ObjectKey{Name: cluster}, mc)
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("managed cluster %s does not exist on the hub: check the name with `kubectl ocm get clusters`, or join it first with `kubectl ocm join`", cluster)
	case apierrors.IsForbidden(err):
	case err != nil:
		return fmt.Errorf("read managed cluster %s: %w", cluster, err)
	case !mc.Spec.HubAcceptsClient:
		return fmt.Errorf("managed cluster %s is not accepted by the hub: run `kubectl ocm accept --clusters %s` first", cluster, cluster)
	}
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: cluster}, ns); err != nil {
		if apierrors.IsForbidden(err) {
			return nil
		}
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("the namespace of managed cluster %s does not exist yet: the hub controller creates it once the cluster is accepted (`kubectl ocm accept --clusters %s`); check that it runs with `kubectl ocm hub status`", cluster, cluster)
		}
		return fmt.Errorf("read namespace %s: %w", cluster, err)
	}
	if ns.DeletionTimestamp != nil {
		return fmt.Errorf("the namespace of managed cluster %s is being deleted: the cluster is leaving the hub", cluster)
	}
	return nil
}

// buildWork is BuildWork with the flags' name, update strategy and
// annotations.
func (o *CreateOptions) buildWork(cluster string, manifests []cli.Manifest, mapper meta.RESTMapper) *workv1.ManifestWork {
	w := BuildWork(o.Name, cluster, manifests, o.UpdateStrategy, mapper)
	w.Annotations = o.annotations()
	return w
}

// BuildWork returns ManifestWork name in cluster's namespace holding the
// manifests (see buildSpec).
func BuildWork(name, cluster string, manifests []cli.Manifest, updateStrategy string, mapper meta.RESTMapper) *workv1.ManifestWork {
	return &workv1.ManifestWork{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cluster},
		Spec:       buildSpec(manifests, updateStrategy, mapper),
	}
}

// buildSpec returns the spec of a ManifestWork holding the manifests. A
// non-empty updateStrategy becomes a manifest config per manifest, whose
// resource is looked up with mapper when possible and otherwise guessed from
// the kind.
func buildSpec(manifests []cli.Manifest, updateStrategy string, mapper meta.RESTMapper) workv1.ManifestWorkSpec {
	spec := workv1.ManifestWorkSpec{}
	for _, m := range manifests {
		spec.Workload.Manifests = append(spec.Workload.Manifests, workv1.Manifest{RawExtension: runtime.RawExtension{Object: m.Object.DeepCopy()}})
		if updateStrategy == "" {
			continue
		}
		gvk := m.Object.GroupVersionKind()
		spec.ManifestConfigs = append(spec.ManifestConfigs, workv1.ManifestConfigOption{
			ResourceIdentifier: workv1.ResourceIdentifier{
				Group: gvk.Group, Resource: resourceOf(gvk, mapper), Namespace: m.Object.GetNamespace(), Name: m.Object.GetName(),
			},
			UpdateStrategy: &workv1.UpdateStrategy{Type: workv1.UpdateStrategyType(updateStrategy)},
		})
	}
	return spec
}

// resourceOf returns the resource of gvk: from mapper when it knows the
// kind, else guessed as kubectl does (lower-case plural).
func resourceOf(gvk schema.GroupVersionKind, mapper meta.RESTMapper) string {
	if mapper != nil {
		if m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			return m.Resource.Resource
		}
	}
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	return plural.Resource
}

// print writes works with the -o printer, several JSON works as one List;
// without -o, one line per work.
func (o *CreateOptions) print(works []*unstructured.Unstructured, verb string) error {
	format := cli.Output(o.PrintFlags)
	if format == "" {
		for _, w := range works {
			fmt.Fprintf(o.Out, "ManifestWork %s %s in cluster %s\n", w.GetName(), verb, w.GetNamespace())
		}
		return nil
	}
	printer, err := o.PrintFlags.ToPrinter()
	if err != nil {
		return err
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
	for _, w := range works {
		list.Items = append(list.Items, *w)
	}
	return cli.PrintItems(o.Out, printer, list, list.Items, workv1.GroupVersion.WithKind("ManifestWork"), len(works) > 1 && format == "json")
}
