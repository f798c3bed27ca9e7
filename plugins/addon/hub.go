package addon

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// hub is a client of the hub with the hub's address, for error messages.
type hub struct {
	client.Client
	// host is the hub API server's URL.
	host string
	// config is the client's configuration; nil in tests.
	config *rest.Config
}

// connect returns a client of the hub getter selects, writing as ctx's verb.
func connect(ctx context.Context, getter genericclioptions.RESTClientGetter) (hub, error) {
	c, cfg, err := cli.NewClient(ctx, getter)
	if err != nil {
		return hub{}, err
	}
	return hub{Client: c, host: cfg.Host, config: cfg}, nil
}

// connectAddons connects to the hub getter selects and reads its
// ClusterManagementAddOns (see addons).
func connectAddons(ctx context.Context, getter genericclioptions.RESTClientGetter) (hub, map[string]*addonv1alpha1.ClusterManagementAddOn, error) {
	h, err := connect(ctx, getter)
	if err != nil {
		return hub{}, nil, err
	}
	cmas, err := h.addons(ctx)
	return h, cmas, err
}

// addons returns the hub's ClusterManagementAddOns by name.
func (h hub) addons(ctx context.Context) (map[string]*addonv1alpha1.ClusterManagementAddOn, error) {
	list := &addonv1alpha1.ClusterManagementAddOnList{}
	if err := h.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list ClusterManagementAddOns on %s: %w", h.host, err)
	}
	byName := map[string]*addonv1alpha1.ClusterManagementAddOn{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	return byName, nil
}

// requireAddons fails for every name without a ClusterManagementAddOn in
// cmas, naming the add-ons that exist.
func requireAddons(cmas map[string]*addonv1alpha1.ClusterManagementAddOn, names ...string) error {
	var errs []error
	for _, n := range names {
		if cmas[n] == nil {
			errs = append(errs, unknownAddon(n, cmas))
		}
	}
	return errors.Join(errs...)
}

// unknownAddon is the error for add-on name, which has no
// ClusterManagementAddOn among cmas, those of the hub.
func unknownAddon(name string, cmas map[string]*addonv1alpha1.ClusterManagementAddOn) error {
	known := slices.Collect(maps.Keys(cmas))
	if len(known) == 0 {
		return fmt.Errorf("add-on %s is not known on this hub: there is no ClusterManagementAddOn %s, nor any other; register it with `kubectl ocm addon create %s -f MANIFESTS`, or apply its ClusterManagementAddOn", name, name, name)
	}
	slices.Sort(known)
	return fmt.Errorf("add-on %s is not known on this hub: there is no ClusterManagementAddOn %s; the add-ons are %s (`kubectl ocm addon list`)", name, name, strings.Join(known, ", "))
}

// checkClusters fails unless every cluster is a ManagedCluster of the hub
// that is not being removed, naming the clusters the hub has when one is
// unknown. With accepted, each must also be accepted and have its
// namespace, where its ManagedClusterAddOns live. A check the user may not
// make (reading ManagedClusters or Namespaces) is skipped: the write then
// reports what is wrong.
func (h hub) checkClusters(ctx context.Context, clusters []string, accepted bool) error {
	list := &clusterv1.ManagedClusterList{}
	if err := h.List(ctx, list); err != nil {
		if apierrors.IsForbidden(err) {
			return nil
		}
		return fmt.Errorf("list ManagedClusters on %s: %w", h.host, err)
	}
	byName := map[string]*clusterv1.ManagedCluster{}
	known := make([]string, 0, len(list.Items))
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
		known = append(known, list.Items[i].Name)
	}
	slices.Sort(known)
	var errs []error
	for _, name := range clusters {
		mc := byName[name]
		switch {
		case mc == nil && len(known) == 0:
			errs = append(errs, fmt.Errorf("managed cluster %s does not exist: the hub has no managed cluster yet; join one with `kubectl ocm join`", name))
		case mc == nil:
			errs = append(errs, fmt.Errorf("managed cluster %s does not exist on this hub: the clusters are %s (`kubectl ocm get clusters`)", name, strings.Join(known, ", ")))
		case mc.DeletionTimestamp != nil:
			errs = append(errs, fmt.Errorf("managed cluster %s is being removed from the hub", name))
		case accepted && !mc.Spec.HubAcceptsClient:
			errs = append(errs, fmt.Errorf("managed cluster %s is not accepted by the hub: run `kubectl ocm accept --clusters %s` first", name, name))
		case accepted:
			errs = append(errs, h.checkNamespace(ctx, name))
		}
	}
	return errors.Join(errs...)
}

// checkNamespace fails unless the namespace of accepted cluster exists and
// is not being deleted.
func (h hub) checkNamespace(ctx context.Context, cluster string) error {
	ns := &corev1.Namespace{}
	err := h.Get(ctx, client.ObjectKey{Name: cluster}, ns)
	switch {
	case apierrors.IsForbidden(err):
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("managed cluster %s has no namespace on the hub yet: the hub controller creates it for accepted clusters; check that it runs (`kubectl ocm hub status`)", cluster)
	case err != nil:
		return fmt.Errorf("read the namespace of managed cluster %s on %s: %w", cluster, h.host, err)
	case ns.DeletionTimestamp != nil:
		return fmt.Errorf("the namespace of managed cluster %s is being deleted: the cluster is leaving the hub", cluster)
	}
	return nil
}
